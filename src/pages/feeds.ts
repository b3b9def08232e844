// Settings → Feeds: the addresses of the Atom feeds (src/feeds/) for a feed reader, carrying the user's feed
// token, and forms to make a new token (the old one stops working) or to revoke it. Plain forms that work
// without JavaScript; the copy buttons and the confirmations come from the site's script. The API does the
// same at /api/me/feed-token/ (src/accounts/feed-token-routes.ts).
import { Type } from 'typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { readFeedToken, resetFeedToken, revokeFeedToken, type FeedTokenRecord } from '../accounts/feed-token-service.js'
import type { User } from '../auth/user.js'
import { Forbidden } from '../errors.js'
import { NEW_PACKS_FEED_PATH, feedUrl, userFeedPath } from '../http/feed-urls.js'
import type { App } from '../http/types.js'
import { publicOrigin } from '../http/urls.js'
import { timeTag } from '../web/format.js'
import { html, type SafeHtml } from '../web/html.js'
import { alertLine } from '../web/layout.js'
import { sendPage } from '../web/respond.js'

const PageQuery = Type.Object({ done: Type.Optional(Type.String()) })
const ActionForm = Type.Object({ csrf_token: Type.Optional(Type.String()) })

const NOTICES: Record<string, string> = {
  reset: 'New feed token made. Addresses with the old one no longer work: give your feed reader the new ones.',
  revoked: 'Feed token revoked. Its addresses no longer work.',
}

export default async function feedsPages(app: App): Promise<void> {
  app.get('/settings/feeds/', { config: { access: 'user' }, schema: { hide: true, querystring: PageQuery } }, async (request, reply) => {
    const record = await readFeedToken(app.db, app.gate.siteSecret, request.user!.id)
    return renderFeedsPage(app, request, reply, record, NOTICES[request.query.done ?? ''])
  })

  // CSRF: checked by the auth plugin's preHandler (the hidden csrf_token field).
  app.post('/settings/feeds/reset/', { config: { access: 'user' }, schema: { hide: true, body: ActionForm } }, async (request, reply) => {
    // As on the API: a new credential only for someone signed in with the password, never for a token.
    if (request.authMethod !== 'session') throw new Forbidden('the feed token can only be made from a signed-in browser session')
    await resetFeedToken(app.db, app.gate.siteSecret, request.user!.id, app.clock())
    // Post/redirect/get: a reload does not make yet another token.
    return reply.redirect('/settings/feeds/?done=reset', 303)
  })

  app.post('/settings/feeds/revoke/', { config: { access: 'user' }, schema: { hide: true, body: ActionForm } }, async (request, reply) => {
    await revokeFeedToken(app.db, request.user!.id)
    return reply.redirect('/settings/feeds/?done=revoked', 303)
  })
}

function renderFeedsPage(app: App, request: FastifyRequest, reply: FastifyReply, record: FeedTokenRecord | undefined, notice: string | undefined) {
  const user = request.user!
  const csrf = request.csrfToken ?? ''
  const body = html`<h1>Feeds</h1>
${alertLine(notice, 'notice')}
<p class="lead">Atom feeds of new packs, of the packs of a user, and of one pack's new versions with their changelogs. In this
browser they open as they are. A feed reader cannot sign in, so it needs addresses that carry your <strong>feed token</strong>:
it opens your feeds, including your hidden packs, and nothing else on the site. Keep the addresses to yourself; if one leaks,
make a new token here and the old addresses stop working.</p>
${record ? tokenSection(publicOrigin(app.config, request), user, record, csrf) : noTokenSection(csrf)}`
  return sendPage(app, request, reply, { title: 'Feeds', body })
}

function noTokenSection(csrf: string): SafeHtml {
  return html`<section class="card" aria-labelledby="feeds-none">
<h2 id="feeds-none">No feed token yet</h2>
<p>Make one to get feed addresses for your feed reader.</p>
<form method="post" action="/settings/feeds/reset/" class="inline-form"><input type="hidden" name="csrf_token" value="${csrf}">
<button type="submit">Make a feed token</button></form>
</section>`
}

function tokenSection(origin: string, user: User, record: FeedTokenRecord, csrf: string): SafeHtml {
  const token = record.token
  const addresses = token === null ? [] : [
    { id: 'feed-new', label: 'New packs on the site', url: feedUrl(origin, NEW_PACKS_FEED_PATH, token) },
    { id: 'feed-yours', label: 'New versions of your packs', url: feedUrl(origin, userFeedPath(user.username), token) },
    { id: 'feed-pack', label: 'New versions of one pack: put its names in place of {namespace} and {pack_id}', url: feedUrl(origin, '/feeds/packs/{namespace}/{pack_id}/', token) },
    { id: 'feed-user', label: 'New versions of someone\'s packs: put their name in place of {username}', url: feedUrl(origin, '/feeds/users/{username}/', token) },
  ]
  return html`<section class="card" aria-labelledby="feeds-addresses">
<h2 id="feeds-addresses">Your feed addresses</h2>
${token === null
    ? html`<p class="warning">Your feed token cannot be shown again on this site (it was sealed with another site secret). It still works where it is; make a new one to see addresses here.</p>`
    : addresses.map((address) => html`<p class="token-label" id="${address.id}-label">${address.label}</p>
<div class="secret-line"><code id="${address.id}" class="secret">${address.url}</code>
<button type="button" class="secondary" data-copy="#${address.id}" aria-describedby="${address.id}-label">Copy</button></div>`)}
<p class="muted">Made ${timeTag(record.createdAt, true)}; last used ${record.lastUsedAt ? timeTag(record.lastUsedAt, true) : 'never'}.</p>
<div class="actions">
<form method="post" action="/settings/feeds/reset/" class="inline-form" data-confirm="Make a new feed token? Addresses with the current one stop working.">
<input type="hidden" name="csrf_token" value="${csrf}"><button type="submit" class="secondary">Reset token</button></form>
<form method="post" action="/settings/feeds/revoke/" class="inline-form" data-confirm="Revoke your feed token? Its addresses stop working.">
<input type="hidden" name="csrf_token" value="${csrf}"><button type="submit" class="danger">Revoke token</button></form>
</div>
</section>`
}
