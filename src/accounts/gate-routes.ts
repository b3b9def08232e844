// The gate page (CONTRACT §2), sign-in and sign-out (CONTRACT §3) as plain
// forms, and /api/me/ so scripts and pages can learn who they are.
import type { FastifyReply, FastifyRequest } from 'fastify'
import { sendPage } from '../pages/context.js'
import { alertLine } from '../web/layout.js'
import { Type } from 'typebox'
import { authenticatePassword, endSession, startSession } from './service.js'
import { GATE_COOKIE, SESSION_COOKIE, checkGatePassword, checkPasswordAttempt, csrfTokenFor } from './auth.js'
import { PasswordWorkBusy } from './password-work.js'
import { DomainError, TooManyRequests } from '../errors.js'
import type { App } from '../http/types.js'
import { safeNext } from '../http/urls.js'
import { html, type SafeHtml } from '../web/html.js'
import { bearerAuth, errorResponses } from '../api/common.js'

const GATE_COOKIE_MAX_AGE_S = 30 * 86_400

const GateForm = Type.Object({ password: Type.String(), next: Type.Optional(Type.String()) })
const LoginForm = Type.Object({ username: Type.String(), password: Type.String(), next: Type.Optional(Type.String()) })
const NextQuery = Type.Object({ next: Type.Optional(Type.String()) })

export default async function gateRoutes(app: App): Promise<void> {
  app.get('/gate/', { config: { access: 'public' }, schema: { hide: true, querystring: NextQuery } }, async (request, reply) => {
    return sendPage(app, request, reply, { title: 'Enter the site password', body: gateForm(safeNext(request.query.next)), narrow: true })
  })

  app.post('/gate/', { config: { access: 'public' }, schema: { hide: true, body: GateForm } }, async (request, reply) => {
    const next = safeNext(request.body.next)
    try {
      await checkGatePassword(app, request.ip, request.body.password, 'wrong password')
    } catch (error) {
      return formFailure(app, request, reply, error, 'Enter the site password', (message) => gateForm(next, message))
    }
    reply.setCookie(GATE_COOKIE, await app.gate.cookieValue(), {
      path: '/', httpOnly: true, sameSite: 'lax', secure: secureCookies(app), maxAge: GATE_COOKIE_MAX_AGE_S,
    })
    return reply.redirect(next, 303)
  })

  app.get('/login/', { schema: { hide: true, querystring: NextQuery } }, async (request, reply) => {
    return sendPage(app, request, reply, { title: 'Sign in', body: loginForm(safeNext(request.query.next)), narrow: true })
  })

  app.post('/login/', { config: { csrfExempt: true }, schema: { hide: true, body: LoginForm } }, async (request, reply) => {
    const { username, password } = request.body
    const next = safeNext(request.body.next)
    let user
    try {
      await checkPasswordAttempt(app, 'login', request.ip, async () => {
        user = await authenticatePassword(app.db, username, password)
        return user !== undefined
      }, 'wrong username or password')
    } catch (error) {
      if (wantsJson(request)) throw error
      return formFailure(app, request, reply, error, 'Sign in', (message) => loginForm(next, message, username))
    }
    const session = await startBrowserSession(app, reply, user!.id)
    if (wantsJson(request)) {
      return reply.send({ username: user!.username, csrf_token: csrfTokenFor(app.gate.siteSecret, session.token) })
    }
    return reply.redirect(next, 303)
  })

  app.post('/logout/', { schema: { hide: true } }, async (request, reply) => {
    if (request.sessionToken) await endSession(app.db, request.sessionToken)
    reply.clearCookie(SESSION_COOKIE, { path: '/' })
    if (wantsJson(request)) return reply.send({ success: true })
    return reply.redirect('/login/', 303)
  })

  app.get('/api/me/', {
    config: { access: 'user' },
    schema: {
      summary: 'The authenticated user',
      description: 'Who the credentials belong to; for a browser session also the CSRF token to send as X-CSRF-Token.',
      tags: ['auth'],
      security: bearerAuth,
      response: {
        200: Type.Object({ username: Type.String(), is_staff: Type.Boolean(), csrf_token: Type.Union([Type.String(), Type.Null()]) }),
        ...errorResponses(401),
      },
    },
  }, async (request) => ({
    username: request.user!.username,
    is_staff: request.user!.isStaff,
    csrf_token: request.sessionToken ? csrfTokenFor(app.gate.siteSecret, request.sessionToken) : null,
  }))
}

/**
 * Signs the browser in as this user: a new session and its HttpOnly cookie
 * (sign-in and sign-up share it, so both set exactly the same cookie).
 */
export async function startBrowserSession(app: App, reply: FastifyReply, userId: string): Promise<{ token: string; expiresAt: Date }> {
  const session = await startSession(app.db, userId, app.config.sessionTtlMs)
  reply.setCookie(SESSION_COOKIE, session.token, {
    path: '/', httpOnly: true, sameSite: 'lax', secure: secureCookies(app), expires: session.expiresAt,
  })
  return session
}

/** Cookies are marked Secure when the site is served over HTTPS (PACKS_BASE_URL says so). */
function secureCookies(app: App): boolean {
  return app.config.baseUrl?.startsWith('https:') ?? false
}

function wantsJson(request: FastifyRequest): boolean {
  return (request.headers['content-type'] ?? '').startsWith('application/json')
}

/** A failed form post: the same form again, with the reason, under the error's status. */
export function formFailure(
  app: App, request: FastifyRequest, reply: FastifyReply, error: unknown, title: string, form: (message: string) => SafeHtml,
): FastifyReply {
  if (!(error instanceof DomainError)) throw error
  if (error instanceof TooManyRequests) reply.header('retry-after', String(error.retryAfterSeconds))
  const message = error instanceof PasswordWorkBusy
    ? 'The server is busy checking other passwords. Try again in a moment.'
    : error instanceof TooManyRequests
      ? `Too many failed attempts. Try again in ${error.retryAfterSeconds} seconds.`
      : error.detail.charAt(0).toUpperCase() + error.detail.slice(1) + '.'
  return sendPage(app, request, reply, { title, body: form(message), narrow: true }, error.status)
}

function gateForm(next: string, message?: string): SafeHtml {
  return html`<h1>Packs</h1><p>This site is private. Enter the site password to continue.</p>${alertLine(message)}
<form method="post" action="/gate/" class="card"><input type="hidden" name="next" value="${next}">
<label for="password">Site password</label><input id="password" name="password" type="password" autocomplete="current-password" required autofocus>
<div class="actions"><button type="submit">Enter</button></div></form>`
}

function loginForm(next: string, message?: string, username = ''): SafeHtml {
  return html`<h1>Sign in</h1>${alertLine(message)}
<form method="post" action="/login/" class="card"><input type="hidden" name="next" value="${next}">
<label for="username">Username</label><input id="username" name="username" autocomplete="username" value="${username}" required autofocus>
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>
<div class="actions"><button type="submit">Sign in</button></div></form>
<p>No account yet? <a href="/signup/?next=${encodeURIComponent(next)}">Sign up</a></p>`
}
