// Settings → API tokens: create and revoke through /api/tokens/ without a
// reload. The server renders the list and the forms (which also work without
// this script); here the new token is shown once and rows come and go, and
// the pack boxes are usable only while "Publish versions" is chosen.
import type { Static } from 'typebox'
import type { Success } from '../../../api/common.js'
import type { ApiTokenBody, CreatedTokenBody } from '../../../api/tokens.js'
import type { TokenScope } from '../../../api/constants.js'
import { ApiError, api, byId, csrfToken, sentence } from '../lib/api.js'
import { formatUtc } from '../../dates.js'

const form = byId<HTMLFormElement>('create-token')
const nameInput = byId<HTMLInputElement>('token-name')
const expiresSelect = byId<HTMLSelectElement>('token-expires')
const errorLine = byId<HTMLParagraphElement>('token-error')
const statusLine = byId<HTMLParagraphElement>('token-status')
const rows = byId<HTMLTableSectionElement>('token-rows')
const tableWrap = byId('token-table-wrap')
const noTokens = byId('no-tokens')
const panel = byId('new-token-panel')
/** Absent when the user has no packs (the page says so instead). */
const packsBox = document.getElementById('token-packs') as HTMLFieldSetElement | null
let shownTokenId: string | null = null

function timeElement(iso: string): HTMLTimeElement {
  const time = document.createElement('time')
  time.dateTime = iso
  time.textContent = formatUtc(iso, true)
  time.title = formatUtc(iso, true)
  return time
}

function cell(...content: Array<Node | string>): HTMLTableCellElement {
  const td = document.createElement('td')
  td.append(...content)
  return td
}

/** The same row the server renders (src/pages/tokens.ts tokenRow). */
function tokenRow(token: ApiTokenBody): HTMLTableRowElement {
  const tr = document.createElement('tr')
  tr.dataset.tokenId = token.id
  const name = cell(token.name)
  name.className = 'token-name'
  const never = document.createElement('span')
  never.className = 'muted'
  never.textContent = 'never'
  const revokeForm = document.createElement('form')
  revokeForm.method = 'post'
  revokeForm.action = `/settings/tokens/${encodeURIComponent(token.id)}/revoke/`
  revokeForm.className = 'inline-form revoke-form'
  revokeForm.dataset.name = token.name
  const csrf = document.createElement('input')
  csrf.type = 'hidden'
  csrf.name = 'csrf_token'
  csrf.value = csrfToken()
  const button = document.createElement('button')
  button.type = 'submit'
  button.className = 'danger'
  const which = document.createElement('span')
  which.className = 'visually-hidden'
  which.textContent = ` ${token.name}`
  button.append('Revoke', which)
  revokeForm.append(csrf, button)
  const labelled = (label: string, td: HTMLTableCellElement) => {
    td.dataset.label = label
    return td
  }
  const actions = cell(revokeForm)
  actions.className = 'token-actions'
  const reach = labelled('Access', cell(...reachText(token)))
  reach.className = 'token-reach'
  tr.append(
    name,
    reach,
    labelled('Created', cell(timeElement(token.created_at))),
    labelled('Last used', cell(token.last_used_at ? timeElement(token.last_used_at) : never)),
    labelled('Expires', cell(token.expires_at ? timeElement(token.expires_at) : 'never')),
    actions,
  )
  return tr
}

/** What a token may do, as the server's list says it (src/pages/tokens.ts reachText). */
function reachText(token: ApiTokenBody): Array<Node | string> {
  if (token.scope === 'full') return ['Full access']
  if (token.scope === 'read') return ['Read-only']
  if (token.packs.length === 0) return ['Publish versions of deleted packs: read-only now']
  const parts: Array<Node | string> = ['Publish versions of ']
  token.packs.forEach((name, index) => {
    if (index > 0) parts.push(', ')
    const code = document.createElement('code')
    code.textContent = name
    parts.push(code)
  })
  return parts
}

function chosenScope(): TokenScope {
  const checked = form.querySelector<HTMLInputElement>('input[name="scope"]:checked')
  return (checked?.value ?? 'full') as TokenScope
}

/** The pack boxes are for a publish token only: disabled (and so neither focusable nor sent) otherwise. */
function syncPacks(): void {
  if (packsBox) packsBox.disabled = chosenScope() !== 'publish'
}

form.addEventListener('change', (event) => {
  if (event.target instanceof HTMLInputElement && event.target.name === 'scope') syncPacks()
})
syncPacks()

function showError(message: string | null): void {
  errorLine.textContent = message ?? ''
  errorLine.hidden = message === null
}

function announce(message: string): void {
  statusLine.textContent = message
  statusLine.hidden = false
}

function updateEmptyState(): void {
  const empty = rows.rows.length === 0
  noTokens.hidden = !empty
  tableWrap.hidden = empty
}

function showNewToken(created: CreatedTokenBody): void {
  byId('new-token').textContent = created.token
  byId('new-token-header').textContent = `Authorization: ${created.authorization}`
  byId('new-token-name').textContent = `: ${created.name}`
  panel.hidden = false
  shownTokenId = created.id
  // Move focus to the panel's heading so keyboard and screen-reader users land on the token.
  byId('new-token-title').focus()
}

form.addEventListener('submit', (event) => {
  event.preventDefault()
  void createToken()
})

async function createToken(): Promise<void> {
  showError(null)
  const button = form.querySelector<HTMLButtonElement>('button[type="submit"]')!
  const days = expiresSelect.value === '' ? null : Number(expiresSelect.value)
  const scope = chosenScope()
  const packs = scope === 'publish'
    ? [...form.querySelectorAll<HTMLInputElement>('input[name="packs"]:checked')].map((box) => box.value)
    : undefined
  button.disabled = true
  try {
    const created = await api<CreatedTokenBody>('POST', '/api/tokens/', { name: nameInput.value, expires_in_days: days, scope, ...(packs ? { packs } : {}) })
    rows.prepend(tokenRow(created))
    updateEmptyState()
    showNewToken(created)
    announce(`Token "${created.name}" created.`)
    form.reset()
    syncPacks()
  } catch (error) {
    showError(error instanceof ApiError ? sentence(error.detail) : 'Could not create the token; check your connection and try again.')
    nameInput.focus()
  } finally {
    button.disabled = false
  }
}

rows.addEventListener('submit', (event) => {
  const revokeForm = event.target
  if (!(revokeForm instanceof HTMLFormElement) || !revokeForm.classList.contains('revoke-form')) return
  event.preventDefault()
  const row = revokeForm.closest('tr')
  const id = row?.dataset.tokenId
  if (!row || !id) return
  const name = revokeForm.dataset.name ?? 'this token'
  if (!window.confirm(`Revoke the token "${name}"? Anything using it stops working at once.`)) return
  void revokeToken(row, id, name)
})

async function revokeToken(row: HTMLTableRowElement, id: string, name: string): Promise<void> {
  showError(null)
  const button = row.querySelector('button')
  if (button) button.disabled = true
  try {
    await api<Static<typeof Success>>('DELETE', `/api/tokens/${encodeURIComponent(id)}/`)
  } catch (error) {
    // Already gone (revoked in another tab): the row should go as well.
    if (!(error instanceof ApiError && error.status === 404)) {
      if (button) button.disabled = false
      showError(error instanceof ApiError ? sentence(error.detail) : 'Could not revoke the token; check your connection and try again.')
      return
    }
  }
  row.remove()
  updateEmptyState()
  if (shownTokenId === id) {
    panel.hidden = true
    shownTokenId = null
  }
  announce(`Token "${name}" revoked.`)
}
