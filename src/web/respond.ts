// Pages are answered through here: the shared context (who is signed in, the
// CSRF token, the bundle) and the document headers (CSP without inline
// script). The error handler (src/http/errors.ts) answers browsers with
// sendErrorPage.
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { App } from '../http/types.js'
import { PAGE_HEADERS, SafeHtml, html } from './html.js'
import { renderPage, type PageContext, type PageOptions } from './layout.js'

/**
 * How many invitations and ownership offers wait for the signed-in user, for the header's link: the pages'
 * hook (src/pages/index.ts) counts them before the page's handler runs; a page rendered without it shows none.
 */
const pendingCounts = new WeakMap<FastifyRequest, number>()

export function setPendingCount(request: FastifyRequest, count: number): void {
  pendingCounts.set(request, count)
}

/** The signed-in user's unread notifications, for the header's bell: counted by the same hook. */
const unreadCounts = new WeakMap<FastifyRequest, number>()

export function setUnreadCount(request: FastifyRequest, count: number): void {
  unreadCounts.set(request, count)
}

export function pageContext(app: App, request: FastifyRequest): PageContext {
  const user = request.user
  return {
    assets: app.assets,
    viewer: user ? { username: user.username, isStaff: user.isStaff } : null,
    csrfToken: request.csrfToken,
    pastGate: request.authMethod !== null,
    path: request.url.split('?')[0]!,
    pendingCount: pendingCounts.get(request) ?? 0,
    unreadCount: unreadCounts.get(request) ?? 0,
  }
}

export function sendPage(app: App, request: FastifyRequest, reply: FastifyReply, options: PageOptions, status = 200): FastifyReply {
  return reply.code(status).headers(PAGE_HEADERS).type('text/html; charset=utf-8').send(renderPage(pageContext(app, request), options))
}

/** Stands where a kept page's bytes go in the shell rendered around them: no HTML or text of ours holds a NUL. */
const BODY_MARK = '\u0000body\u0000'

/**
 * A page whose main part is kept as bytes (src/web/page-cache.ts): the shell around it (the header, which is
 * each viewer's own) is rendered as always and encoded, a few kilobytes, and the kept bytes go between.
 */
export function sendPageBytes(app: App, request: FastifyRequest, reply: FastifyReply, options: Omit<PageOptions, 'body'> & { body: Buffer }): FastifyReply {
  const shell = renderPage(pageContext(app, request), { ...options, body: new SafeHtml(BODY_MARK) })
  const at = shell.indexOf(BODY_MARK)
  const page = Buffer.concat([Buffer.from(shell.slice(0, at)), options.body, Buffer.from(shell.slice(at + BODY_MARK.length))])
  return reply.code(200).headers(PAGE_HEADERS).type('text/html; charset=utf-8').send(page)
}

const ERROR_TITLES: Record<number, string> = {
  400: 'Bad request', 401: 'Sign in required', 403: 'Forbidden', 404: 'Not found', 405: 'Method not allowed',
  409: 'Conflict', 413: 'Too large', 429: 'Too many attempts', 500: 'Something went wrong',
  503: 'Temporarily unavailable',
}

/** An error as a page, for browsers outside /api/ (the API always answers JSON). */
export function sendErrorPage(app: App, request: FastifyRequest, reply: FastifyReply, status: number, detail: string): FastifyReply {
  const title = ERROR_TITLES[status] ?? 'Error'
  const body = html`<h1>${title}</h1><p class="error-detail">${detail.charAt(0).toUpperCase() + detail.slice(1)}.</p>
<p><a href="/">Back to the packs</a></p>`
  return sendPage(app, request, reply, { title, body, narrow: true }, status)
}
