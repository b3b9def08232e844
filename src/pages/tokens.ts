// Settings → API tokens. Server-rendered list and forms that work without
// JavaScript; with it, src/web/client/pages/tokens.ts creates and revokes
// through /api/tokens/ (src/accounts/token-routes.ts) and updates the page in place.
// Each token has a reach (src/auth/token-reach.ts): full, read-only, or
// publishing new versions of packs chosen from the user's own.
import type { FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { TOKEN_NAME_MAX, type TokenScope } from '../api/constants.js'
import { issueApiToken, listApiTokens, listPublishablePacks, revokeApiToken, type ListedApiToken } from '../accounts/tokens-service.js'
import { BadRequest, DomainError, Forbidden } from '../errors.js'
import { sendPage } from '../web/respond.js'
import type { App } from '../http/types.js'
import { timeTag } from '../web/format.js'
import { html, type SafeHtml } from '../web/html.js'
import { alertLine } from '../web/layout.js'

/** The lifetimes offered in the form, in days; '' is "never". */
const EXPIRY_CHOICES = [7, 30, 90, 365] as const
const DEFAULT_EXPIRY_DAYS = 90

const CreateForm = Type.Object({
  name: Type.Optional(Type.String()),
  expires_in_days: Type.Optional(Type.String()),
  scope: Type.Optional(Type.String()),
  // One checkbox ticked arrives as a string; the validator makes it a one-item array.
  packs: Type.Optional(Type.Array(Type.String())),
  csrf_token: Type.Optional(Type.String()),
})
const RevokeParams = Type.Object({ token_id: Type.String() })
const PageQuery = Type.Object({ revoked: Type.Optional(Type.String()) })

interface NewToken {
  token: string
  header: string
  name: string
}

export default async function tokensPages(app: App): Promise<void> {
  app.get('/settings/tokens/', { config: { access: 'user' }, schema: { hide: true, querystring: PageQuery } }, async (request, reply) => {
    const notice = request.query.revoked === '1' ? 'Token revoked.' : undefined
    return renderTokensPage(app, request, reply, { notice })
  })

  // Without JavaScript the create form posts here and the page shows the new token once.
  app.post('/settings/tokens/', { config: { access: 'user' }, schema: { hide: true, body: CreateForm } }, async (request, reply) => {
    const user = request.user!
    const name = request.body.name ?? ''
    const scope = request.body.scope ?? 'full'
    // Ticked boxes count only for a publish token: without the page's script they stay tickable whatever is chosen.
    const packs = scope === 'publish' ? request.body.packs ?? [] : []
    try {
      if (request.authMethod !== 'session') throw new Forbidden('API tokens can only be created from a signed-in browser session')
      const { token } = await issueApiToken(app.db, user, name, parseExpiry(request.body.expires_in_days), { scope, packs })
      return renderTokensPage(app, request, reply, { created: { token, header: `Authorization: Bearer ${user.username} ${token}`, name } })
    } catch (error) {
      if (!(error instanceof DomainError)) throw error
      return renderTokensPage(app, request, reply, { error: capitalise(error.detail), name, scope, packs }, error.status)
    }
  })

  app.post('/settings/tokens/:token_id/revoke/', { config: { access: 'user' }, schema: { hide: true, params: RevokeParams } }, async (request, reply) => {
    await revokeApiToken(app.db, request.user!.id, request.params.token_id)
    return reply.redirect('/settings/tokens/?revoked=1', 303)
  })
}

function parseExpiry(value: string | undefined): number | null {
  if (value === undefined || value === '' || value === 'never') return null
  if (!/^\d{1,5}$/.test(value)) throw new BadRequest('choose when the token expires')
  return Number(value)
}

const capitalise = (text: string) => text.charAt(0).toUpperCase() + text.slice(1) + '.'

interface PageState {
  created?: NewToken
  error?: string
  notice?: string
  name?: string
  /** The reach chosen before a refusal, shown again. */
  scope?: string
  packs?: readonly string[]
}

async function renderTokensPage(
  app: App, request: FastifyRequest, reply: Parameters<typeof sendPage>[2], state: PageState, status = 200,
) {
  const [tokens, ownPacks] = await Promise.all([listApiTokens(app.db, request.user!.id), listPublishablePacks(app.db, request.user!.id)])
  const csrf = request.csrfToken ?? ''
  const body = html`<h1>API tokens</h1>
<p class="lead">A token lets a script or tool use the API as <strong>${request.user!.username}</strong>. Send it in the header
<code>Authorization: Bearer ${request.user!.username} &lt;token&gt;</code>. Tokens are made only on this page, by someone signed in with the password; a token cannot make new tokens.</p>
${newTokenPanel(state.created)}
<section class="card token-create" aria-labelledby="create-title">
<h2 id="create-title">Create a token</h2>
${alertLine(state.error)}
<p id="token-error" class="error" role="alert" hidden></p>
<form id="create-token" method="post" action="/settings/tokens/">
<input type="hidden" name="csrf_token" value="${csrf}">
<div class="token-fields">
<div><label for="token-name">Name</label>
<input id="token-name" name="name" required maxlength="${TOKEN_NAME_MAX}" value="${state.name ?? ''}" aria-describedby="token-name-hint" autocomplete="off">
<span class="hint" id="token-name-hint">What will use it, e.g. "release script". Up to ${TOKEN_NAME_MAX} characters.</span></div>
<div><label for="token-expires">Expires</label>
<select id="token-expires" name="expires_in_days">
<option value="">Never</option>
${EXPIRY_CHOICES.map((days) => html`<option value="${days}"${days === DEFAULT_EXPIRY_DAYS ? html` selected` : null}>In ${days} days</option>`)}
</select></div>
</div>
${reachFields(ownPacks, state)}
<div class="actions"><button type="submit">Create token</button></div>
</form>
</section>
<section aria-labelledby="list-title">
<h2 id="list-title">Your tokens</h2>
<p id="token-status" class="notice" role="status"${state.notice ? null : html` hidden`}>${state.notice ?? ''}</p>
<p id="no-tokens" class="muted"${tokens.length > 0 ? html` hidden` : null}>You have no API tokens.</p>
<div class="table-scroll"${tokens.length === 0 ? html` hidden` : null} id="token-table-wrap">
<table class="tokens"><caption class="visually-hidden">Your API tokens, newest first</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Access</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Expires</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
<tbody id="token-rows">${tokens.map((token) => tokenRow(token, csrf))}</tbody>
</table></div>
</section>`
  return sendPage(app, request, reply, { title: 'API tokens', body, scripts: ['tokens'] }, status)
}

/** The once-only display of a new token: filled by the server (no-JS create) or by the page script. */
function newTokenPanel(created: NewToken | undefined): SafeHtml {
  return html`<section id="new-token-panel" class="card new-token" aria-labelledby="new-token-title"${created ? null : html` hidden`}>
<h2 id="new-token-title" tabindex="-1">New token<span id="new-token-name">${created ? html`: ${created.name}` : null}</span></h2>
<p class="warning"><strong>Copy it now: it will not be shown again.</strong> Only a hash is kept; if you lose it, revoke it and create another.</p>
<p class="token-label">Token</p>
<div class="secret-line"><code id="new-token" class="secret">${created?.token ?? ''}</code>
<button type="button" class="secondary" data-copy="#new-token">Copy token</button></div>
<p class="token-label">Header line</p>
<div class="secret-line"><code id="new-token-header" class="secret">${created?.header ?? ''}</code>
<button type="button" class="secondary" data-copy="#new-token-header">Copy header line</button></div>
</section>`
}

function tokenRow(token: ListedApiToken, csrf: string): SafeHtml {
  return html`<tr data-token-id="${token.id}">
<td class="token-name">${token.name}</td>
<td data-label="Access" class="token-reach">${reachText(token.scope, token.packs)}</td>
<td data-label="Created">${timeTag(token.created_at, true)}</td>
<td data-label="Last used">${token.last_used_at ? timeTag(token.last_used_at, true) : html`<span class="muted">never</span>`}</td>
<td data-label="Expires">${token.expires_at === null ? 'never' : token.expired ? html`<span class="expired">expired ${timeTag(token.expires_at, true)}</span>` : timeTag(token.expires_at, true)}</td>
<td class="token-actions"><form method="post" action="/settings/tokens/${token.id}/revoke/" class="inline-form revoke-form" data-name="${token.name}">
<input type="hidden" name="csrf_token" value="${csrf}">
<button type="submit" class="danger">Revoke<span class="visually-hidden"> ${token.name}</span></button></form></td>
</tr>`
}

const SCOPE_CHOICES: ReadonlyArray<{ scope: TokenScope; label: string; hint: string }> = [
  { scope: 'full', label: 'Full access', hint: 'Everything you may do on this site, except making tokens.' },
  { scope: 'read', label: 'Read-only', hint: 'Reading only: it can change nothing.' },
  {
    scope: 'publish', label: 'Publish versions of the packs ticked below',
    hint: 'New versions of those packs, and reading; no uploads, drafts, new packs or other changes. For a build job that releases a pack.',
  },
]

/** Full / Read-only / Publish versions of [your packs]. Without the script every box stays tickable; the server uses them only for Publish. */
function reachFields(ownPacks: ReadonlyArray<{ name: string; title: string }>, state: PageState): SafeHtml {
  const chosen = SCOPE_CHOICES.some((c) => c.scope === state.scope) ? state.scope : 'full'
  const ticked = new Set(state.packs ?? [])
  return html`<fieldset class="token-reach-choice" id="token-reach">
<legend>What it may do</legend>
${SCOPE_CHOICES.map((choice) => html`<div class="choice"><input type="radio" name="scope" id="scope-${choice.scope}" value="${choice.scope}"${choice.scope === chosen ? html` checked` : null}${choice.scope === 'publish' && ownPacks.length === 0 ? html` disabled` : null} aria-describedby="scope-${choice.scope}-hint">
<label for="scope-${choice.scope}">${choice.label}</label>
<span class="hint" id="scope-${choice.scope}-hint">${choice.hint}</span></div>`)}
${ownPacks.length === 0
    ? html`<p class="muted" id="token-no-packs">You have no packs yet; a publish token names packs of yours, so publish one first.</p>`
    : html`<fieldset class="token-packs" id="token-packs"><legend>Your packs</legend>
${ownPacks.map((pack, index) => html`<div class="choice"><input type="checkbox" name="packs" id="token-pack-${index}" value="${pack.name}"${ticked.has(pack.name) ? html` checked` : null}>
<label for="token-pack-${index}">${pack.title} <code>${pack.name}</code></label></div>`)}
</fieldset>`}
</fieldset>`
}

/** What a token may do, in the list (the page script's reachText says the same). */
function reachText(scope: TokenScope, packs: readonly string[]): SafeHtml | string {
  if (scope === 'full') return 'Full access'
  if (scope === 'read') return 'Read-only'
  if (packs.length === 0) return 'Publish versions of deleted packs: read-only now'
  return html`Publish versions of ${packs.map((name, index) => html`${index > 0 ? ', ' : null}<code>${name}</code>`)}`
}
