// The shell every page shares: head (one stylesheet, the page's module
// scripts, no inline code), a skip link, the navigation and the footer.
import type { Assets } from './assets.js'
import { html, type SafeHtml } from './html.js'

export interface Viewer {
  username: string
  isStaff: boolean
}

export interface PageContext {
  assets: Assets
  /** The signed-in user, if any. */
  viewer: Viewer | null
  /** The session's CSRF token: rendered into forms and a meta tag for the client's fetches. */
  csrfToken: string | null
  /** Whether the caller has passed the gate (the gate page itself shows no navigation). */
  pastGate: boolean
  /** Path of the current page, to mark the active link and to come back after sign-in. */
  path: string
  /** Invitations and ownership offers waiting for the viewer's answer: the header links them when there are any. */
  pendingCount?: number
  /** The viewer's unread notifications: the header's bell shows the count. */
  unreadCount?: number
}

export interface PageOptions {
  title: string
  body: SafeHtml
  /** Page modules to load, by entry name under src/web/client/pages/ ("create" loads create.ts). */
  scripts?: string[]
  /** A narrow column, for forms. */
  narrow?: boolean
}

export function renderPage(ctx: PageContext, options: PageOptions): string {
  const scripts = ['site', ...(options.scripts ?? [])]
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${options.title} · Packs</title>
<link rel="icon" type="image/svg+xml" href="${ctx.assets.url('favicon.svg')}">
<link rel="stylesheet" href="${ctx.assets.url('site.css')}">
${ctx.pastGate ? html`<link rel="stylesheet" href="/assets/categories.css">` : null}
${ctx.csrfToken ? html`<meta name="csrf-token" content="${ctx.csrfToken}">` : null}
${scripts.map((name) => html`<script type="module" src="${ctx.assets.url(`${name}.js`)}"></script>`)}
</head><body>
<a class="skip-link" href="#main">Skip to content</a>
${header(ctx)}
<main id="main" class="${options.narrow ? 'narrow' : 'wide'}" tabindex="-1">${options.body}</main>
<footer class="site-footer"><p>Packs · <a href="/packs-sync/">packs-sync</a> · <a href="/api/docs/">API</a></p></footer>
</body></html>`.value
}

function header(ctx: PageContext): SafeHtml {
  if (!ctx.pastGate) {
    return html`<header class="site-header"><a class="brand" href="/">Packs</a></header>`
  }
  // A section's link stays current on its sub-pages (/create/{draft}/ under /create/).
  const current = (href: string) => ctx.path === href || (href !== '/' && ctx.path.startsWith(href))
  const link = (href: string, label: string) =>
    html`<a href="${href}"${current(href) ? html` aria-current="page"` : null}>${label}</a>`
  const viewer = ctx.viewer
  const account = viewer
    ? html`${bell(ctx, current('/notifications/'))}<span class="who">Signed in as <strong>${viewer.username}</strong></span>
<form method="post" action="/logout/" class="inline-form"><input type="hidden" name="csrf_token" value="${ctx.csrfToken ?? ''}"><button type="submit" class="link-button">Sign out</button></form>`
    : html`${link(`/login/`, 'Sign in')} ${link('/signup/', 'Sign up')}`
  return html`<header class="site-header">
<a class="brand" href="/">Packs</a>
<nav aria-label="Main"><ul>
<li>${link('/', 'Browse')}</li>
${viewer && (ctx.pendingCount ?? 0) > 0 ? html`<li class="nav-invitations"><a href="/invitations/"${current('/invitations/') ? html` aria-current="page"` : null}>Invitations <span class="count-badge">${ctx.pendingCount!}</span></a></li>` : null}
${viewer ? html`<li>${link('/create/', 'Create')}</li><li>${link('/drafts/', 'My drafts')}</li><li>${link('/settings/tokens/', 'API tokens')}</li><li>${link('/settings/password/', 'Password')}</li>` : null}
${viewer?.isStaff ? html`<li>${link('/staff/stats/', 'Statistics')}</li><li>${link('/staff/audit/', 'Audit log')}</li>` : null}
</ul></nav>
<div class="account">${account}</div>
</header>`
}

/**
 * The link to the notifications page: a bell with the unread count. Its accessible name says both in words
 * ("Notifications, 3 unread"), so a screen reader does not read out a picture and a lone number.
 */
function bell(ctx: PageContext, isCurrent: boolean): SafeHtml {
  const unread = ctx.unreadCount ?? 0
  const name = unread > 0 ? `Notifications, ${unread} unread` : 'Notifications, none unread'
  return html`<a class="${unread > 0 ? 'bell has-unread' : 'bell'}" href="/notifications/" aria-label="${name}"${isCurrent ? html` aria-current="page"` : null}>\
<svg class="bell-icon" viewBox="0 0 24 24" width="22" height="22" aria-hidden="true" focusable="false">\
<path fill="currentColor" d="M12 2.5a1.5 1.5 0 0 0-1.5 1.5v.6A6 6 0 0 0 6 10.5V15l-2 2.5V19h16v-1.5L18 15v-4.5a6 6 0 0 0-4.5-5.9V4A1.5 1.5 0 0 0 12 2.5zM9.5 20a2.5 2.5 0 0 0 5 0z"/></svg>\
${unread > 0 ? html`<span class="bell-count" aria-hidden="true">${unread}</span>` : null}</a>`
}

/** A form error or notice line, announced to screen readers. */
export function alertLine(message: string | undefined | null, kind: 'error' | 'notice' = 'error'): SafeHtml | null {
  return message ? html`<p class="${kind}" role="${kind === 'error' ? 'alert' : 'status'}">${message}</p>` : null
}
