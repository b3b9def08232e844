// Staff → Audit log: who did what to which pack, version or account, and when:
// the entries of GET /api/audit/, filtered and paginated
// with plain links and a GET form, so every state has a URL. Non-staff get the
// 403 page from the auth hook (access 'staff').
import { Type } from 'typebox'
import { AUDIT_ACTIONS, CLI_ACTOR, listAudit, type AuditQueryInput, type AuditRecord } from '../audit/service.js'
import { BadRequest, NotFound } from '../errors.js'
import type { App } from '../http/types.js'
import { formatCount, timeTag } from '../web/format.js'
import { html, type SafeHtml } from '../web/html.js'
import { sendPage } from '../web/respond.js'

const PER_PAGE = 50
/** Nine digits: far past any real page, and never an offset SQLite cannot take. */
const PAGE_PATTERN = /^[0-9]{1,9}$/
const MAX_TARGET_LENGTH = 300
const MAX_ACTOR_LENGTH = 32
/** A detail value longer than this is cut on the page (an edited description, say); the API has it whole. */
const MAX_DETAIL_SHOWN = 300
const TARGET_TYPES = ['pack', 'version', 'user', 'site', 'archive'] as const

// Everything arrives as text (or a list, when repeated) and is checked here,
// so a bad value gets a sentence a person can act on, not a validator's message.
const Param = Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())]))
const AuditPageQuery = Type.Object({ target_type: Param, target: Param, actor: Param, action: Param, page: Param })

type Field = 'target_type' | 'target' | 'actor' | 'action' | 'page'
type RawQuery = Partial<Record<Field, string | string[]>>

interface AuditState {
  targetType: '' | (typeof TARGET_TYPES)[number]
  target: string
  actor: string
  action: string
  page: number
}

function single(query: RawQuery, name: Field): string {
  const value = query[name]
  if (Array.isArray(value)) throw new BadRequest(`"${name}" may be given only once`)
  return (value ?? '').trim()
}

function parseQuery(query: RawQuery): AuditState {
  const targetType = single(query, 'target_type')
  if (targetType !== '' && !(TARGET_TYPES as readonly string[]).includes(targetType)) {
    throw new BadRequest(`"target_type" must be pack, version, user, site or archive`)
  }
  const target = single(query, 'target')
  if (target.length > MAX_TARGET_LENGTH) throw new BadRequest(`"target" is longer than ${MAX_TARGET_LENGTH} characters`)
  const actor = single(query, 'actor')
  if (actor.length > MAX_ACTOR_LENGTH) throw new BadRequest(`"actor" is longer than ${MAX_ACTOR_LENGTH} characters`)
  const action = single(query, 'action')
  if (action !== '' && !(AUDIT_ACTIONS as readonly string[]).includes(action)) throw new BadRequest(`there is no action "${action.slice(0, 40)}"`)
  const rawPage = single(query, 'page')
  let page = 1
  if (rawPage !== '') {
    page = PAGE_PATTERN.test(rawPage) ? Number(rawPage) : 0
    if (page < 1) throw new BadRequest(`"page" must be a whole number from 1 to 999999999, not "${rawPage.slice(0, 20)}"`)
  }
  return { targetType: targetType as AuditState['targetType'], target, actor, action, page }
}

export default async function auditPages(app: App): Promise<void> {
  app.get('/staff/audit/', { config: { access: 'staff', heavy: true }, schema: { hide: true, querystring: AuditPageQuery } }, async (request, reply) => {
    const state = parseQuery(request.query)
    const query: AuditQueryInput = {
      target_type: state.targetType || undefined,
      target: state.target || undefined,
      actor: state.actor || undefined,
      action: state.action || undefined,
    }
    const { items, total } = await listAudit(app.db, query, state.page, PER_PAGE)
    const pages = Math.max(1, Math.ceil(total / PER_PAGE))
    if (state.page > pages) throw new NotFound(`there is no page ${state.page} of these entries; the last one is page ${pages}`)
    return sendPage(app, request, reply, { title: state.page > 1 ? `Audit log, page ${state.page}` : 'Audit log', body: auditBody(state, items, total, pages) })
  })
}

/** The page's URL with some of the state changed; any change of filter goes back to page 1. */
function linkWith(state: AuditState, changes: Partial<AuditState>): string {
  const next = { ...state, page: 1, ...changes }
  const params = new URLSearchParams()
  if (next.targetType) params.set('target_type', next.targetType)
  if (next.target) params.set('target', next.target)
  if (next.actor) params.set('actor', next.actor)
  if (next.action) params.set('action', next.action)
  if (next.page > 1) params.set('page', String(next.page))
  const text = params.toString()
  return text === '' ? '/staff/audit/' : `/staff/audit/?${text}`
}

function auditBody(state: AuditState, items: AuditRecord[], total: number, pages: number): SafeHtml {
  const filtered = state.targetType !== '' || state.target !== '' || state.actor !== '' || state.action !== ''
  return html`<h1>Audit log</h1>
<p class="muted">Who did what to which pack, version or account, and when, newest first: publishing, owners' and staff's edits, yanks and
deletions, hiding and disabling. "${CLI_ACTOR.username}" is someone running <code>npx packs</code> on the server.
The same entries as JSON: <a href="/api/audit/">/api/audit/</a>.</p>
${filters(state, filtered)}
<section aria-labelledby="entries-heading">
<h2 id="entries-heading" class="visually-hidden">Entries</h2>
<p class="result-count" role="status">${formatCount(total)} ${total === 1 ? 'entry' : 'entries'}${filtered ? ' match' : ''}</p>
${items.length === 0 ? html`<p class="empty card">${filtered ? 'No entry matches these filters.' : 'Nothing has been recorded yet.'}</p>` : entriesTable(state, items)}
${pagination(state, pages)}
</section>`
}

function filters(state: AuditState, filtered: boolean): SafeHtml {
  const option = (value: string, label: string, selected: boolean) => html`<option value="${value}"${selected ? html` selected` : null}>${label}</option>`
  return html`<h2 id="filters-heading">Filters</h2>
<form class="card audit-filters" method="get" action="/staff/audit/" aria-labelledby="filters-heading">
<label for="audit-target">Target</label>
<input type="text" id="audit-target" name="target" value="${state.target}" maxlength="${MAX_TARGET_LENGTH}" autocomplete="off" aria-describedby="audit-target-hint">
<span class="hint" id="audit-target-hint">namespace:pack_id (its versions included), namespace:pack_id@version, or a username; any case.</span>
<label for="audit-actor">Done by</label>
<input type="text" id="audit-actor" name="actor" value="${state.actor}" maxlength="${MAX_ACTOR_LENGTH}" autocomplete="off" aria-describedby="audit-actor-hint">
<span class="hint" id="audit-actor-hint">A username, or ${CLI_ACTOR.username}.</span>
<label for="audit-type">Kind of target</label>
<select id="audit-type" name="target_type">
${option('', 'Any', state.targetType === '')}
${TARGET_TYPES.map((t) => option(t, t.charAt(0).toUpperCase() + t.slice(1), state.targetType === t))}
</select>
<label for="audit-action">Action</label>
<select id="audit-action" name="action">
${option('', 'Any', state.action === '')}
${AUDIT_ACTIONS.map((a) => option(a, a, state.action === a))}
</select>
<div class="actions"><button type="submit">Filter</button>${filtered ? html`<a href="/staff/audit/">Clear filters</a>` : null}</div>
</form>`
}

function entriesTable(state: AuditState, items: AuditRecord[]): SafeHtml {
  return html`<div class="table-scroll">
<table class="audit-table" aria-describedby="entries-heading">
<thead><tr><th scope="col">When</th><th scope="col">Who</th><th scope="col">Action</th><th scope="col">Target</th><th scope="col">Details</th></tr></thead>
<tbody>
${items.map((entry) => html`<tr class="audit-entry">
<td>${timeTag(entry.createdAt, true)}</td>
<td><a href="${linkWith(state, { actor: entry.actor })}" title="${`Only what ${entry.actor} did`}">${entry.actor}</a></td>
<td><code class="audit-action">${entry.action}</code></td>
<td>${targetCell(state, entry)}</td>
<td>${details(entry.details)}</td>
</tr>`)}
</tbody></table></div>`
}

/** The target filters the log by it; a pack's or a version's page, or an account's profile, is one more link away. */
function targetCell(state: AuditState, entry: AuditRecord): SafeHtml {
  const filter = html`<a href="${linkWith(state, { target: entry.target, targetType: '' })}" title="${`Only entries about ${entry.target}`}"><code>${entry.target}</code></a>`
  const at = entry.target.indexOf('@')
  const packKey = entry.targetType === 'user' || entry.targetType === 'site' ? null : at === -1 ? entry.target : entry.target.slice(0, at)
  const colon = packKey?.indexOf(':') ?? -1
  const page = entry.targetType === 'user'
    ? `/users/${encodeURIComponent(entry.target)}/`
    : packKey !== null && colon > 0
      ? `/packs/${encodeURIComponent(packKey.slice(0, colon))}/${encodeURIComponent(packKey.slice(colon + 1))}/`
      : null
  const label = entry.targetType === 'user' ? 'profile' : 'pack page'
  return page === null ? filter : html`${filter} <a class="muted" href="${page}">(${label})</a>`
}

function details(values: Record<string, unknown>): SafeHtml | null {
  const entries = Object.entries(values)
  if (entries.length === 0) return null
  return html`<dl class="audit-details">${entries.map(([key, value]) => html`<dt>${key}</dt><dd>${shown(value)}</dd>`)}</dl>`
}

function shown(value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value) ?? String(value)
  return text.length > MAX_DETAIL_SHOWN ? `${text.slice(0, MAX_DETAIL_SHOWN)}…` : text
}

function pagination(state: AuditState, pages: number): SafeHtml | null {
  if (pages === 1) return null
  const previous = state.page > 1
    ? html`<a class="button secondary" rel="prev" href="${linkWith(state, { page: state.page - 1 })}">Newer</a>`
    : html`<span class="button secondary" aria-disabled="true">Newer</span>`
  const next = state.page < pages
    ? html`<a class="button secondary" rel="next" href="${linkWith(state, { page: state.page + 1 })}">Older</a>`
    : html`<span class="button secondary" aria-disabled="true">Older</span>`
  return html`<nav class="pagination" aria-label="Pages">${previous}<span class="page-of">Page ${state.page} of ${pages}</span>${next}</nav>`
}
