// The create page: autosave of the form to POST /api/draft/, uploads with
// progress to POST /api/uploads/, tag autocomplete, the co-authors to invite
// (a user picker; saved as the draft's data.team, invited by the publish), and
// publishing. The server renders the saved values, uploads and co-authors;
// this script takes over from there.
import { ApiError, api, byId, clockTime, sentence, uploadWithProgress } from '../lib/api.js'
import { Autosave, draftCopyKey, type SaveState } from '../lib/autosave.js'
import { pendingUploadItem, teamPerson, uploadItem, type TeamRole } from '../lib/create-markup.js'
import { TagPicker } from '../lib/tag-picker.js'
import { UserPicker } from '../lib/user-picker.js'
import type { Static } from 'typebox'
import type { UploadKind } from '../../../api/constants.js'
import type { UserSuggestion } from '../../../api/autocomplete.js'
import type { DraftSaved } from '../../../api/drafts.js'
import type { PackBody } from '../../../api/packs.js'
import type { TempUploadBody } from '../../../api/uploads.js'

const TEXT_FIELDS = ['title', 'summary', 'category', 'description', 'version_name', 'changelog'] as const
type TextField = (typeof TEXT_FIELDS)[number]
type Kind = UploadKind

const form = byId<HTMLFormElement>('create-form')
const draftId = form.dataset.draft!
const saveState = byId('save-state')
const publishButton = byId<HTMLButtonElement>('publish')
const publishStatus = byId('publish-status')
const publishError = byId('publish-error')

const control = (name: TextField) => byId<HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement>(name)

const tags = new TagPicker(
  byId<HTMLInputElement>('tags'), byId<HTMLUListElement>('tag-options'), byId<HTMLUListElement>('tag-chips'), byId('tags-live'),
  () => edited('tags'),
)

// ---- team: co-authors invited when the pack is published --------------------

interface TeamMember {
  username: string
  role: TeamRole
}

const teamField = byId('field-team')
const teamInput = byId<HTMLInputElement>('team')
const teamList = byId<HTMLUListElement>('team-people')
const teamLive = byId('team-live')
/** The author: they own what they publish, so they are never one of its co-authors. */
const author = teamField.dataset.author ?? ''
const maxTeam = Number(teamField.dataset.max) || 20
/** Who the picker does not offer (lower case): the author and everyone in the list; kept up to date by teamChanged(). */
const notOffered = new Set<string>()

function teamMembers(): TeamMember[] {
  return [...teamList.querySelectorAll<HTMLLIElement>('li[data-username]')].map((item) => ({
    username: item.dataset.username!,
    role: item.querySelector('select')?.value === 'maintainer' ? 'maintainer' : 'uploader',
  }))
}

function teamChanged(): void {
  notOffered.clear()
  notOffered.add(author.toLowerCase())
  for (const member of teamMembers()) notOffered.add(member.username.toLowerCase())
}

function setTeam(members: TeamMember[]): void {
  teamList.replaceChildren(...members.map((m) => teamPerson(m.username, m.role)))
  teamChanged()
}

/** The draft's data.team as saved (or a local copy's): well-formed entries only, as the server reads it. */
function teamFrom(value: unknown): TeamMember[] {
  if (!Array.isArray(value)) return []
  return value.flatMap((entry: unknown) => {
    const { username, role } = (typeof entry === 'object' && entry !== null ? entry : {}) as Record<string, unknown>
    return typeof username === 'string' && (role === 'uploader' || role === 'maintainer') ? [{ username, role }] : []
  })
}

/**
 * Adds a person with the least role (the author raises it if they mean to);
 * false, with the reason shown, when they cannot be added.
 */
function addToTeam(username: string): boolean {
  const lower = username.toLowerCase()
  const refuse = (message: string) => {
    showFieldError('team', message, false)
    return false
  }
  if (lower === author.toLowerCase()) return refuse('You are the author: the pack is yours once published. Add the people who work on it with you.')
  if (notOffered.has(lower)) return refuse(`${username} is in the list already.`)
  if (teamMembers().length >= maxTeam) {
    return refuse(`At most ${maxTeam} people can be invited from here; invite more from the pack's team page once it is published.`)
  }
  teamList.append(teamPerson(username, 'uploader'))
  teamChanged()
  teamLive.textContent = `${username} added as uploader`
  edited('team')
  return true
}

/**
 * Enter with no suggestion highlighted: the name typed, if it is an account's.
 * The picker offers names by prefix in name order, so the exact name is among
 * the answers when it exists (a disabled account is never offered).
 */
async function addTyped(typed: string): Promise<void> {
  let found: Array<Static<typeof UserSuggestion>>
  try {
    found = await api<Array<Static<typeof UserSuggestion>>>('GET', `/api/users/autocomplete/?q=${encodeURIComponent(typed)}`)
  } catch (error) {
    return showFieldError('team', `Could not look up "${typed}": ${sentence(errorDetail(error))}`, false)
  }
  const match = found.find((s) => s.username.toLowerCase() === typed.toLowerCase())
  if (!match) return showFieldError('team', `No account is named "${typed}".`)
  // Added, and the box still says it (not typed over meanwhile): emptied for the next name.
  if (addToTeam(match.username) && teamInput.value.trim() === typed) teamInput.value = ''
}

new UserPicker(teamInput, byId<HTMLUListElement>('team-options'), teamLive, notOffered, (username) => void addToTeam(username))
teamChanged()

teamInput.addEventListener('keydown', (event) => {
  // The picker handled it (picked a highlighted name), or it is another key.
  if (event.key !== 'Enter' || event.defaultPrevented) return
  event.preventDefault()
  const typed = teamInput.value.trim()
  if (typed !== '') void addTyped(typed)
})
teamInput.addEventListener('input', () => clearFieldError('team'))
teamList.addEventListener('change', (event) => {
  const item = (event.target as Element).closest<HTMLLIElement>('li[data-username]')
  if (!item) return
  item.classList.remove('refused')
  edited('team')
})
teamList.addEventListener('click', (event) => {
  const button = (event.target as Element).closest<HTMLButtonElement>('button.team-remove')
  const item = button?.closest<HTMLLIElement>('li[data-username]')
  if (!button || !item) return
  // Focus moves on to the next person's Remove button, or back to the box when none is left after this one.
  const next = item.nextElementSibling?.querySelector<HTMLButtonElement>('button.team-remove') ?? null
  const hadFocus = document.activeElement === button
  item.remove()
  teamChanged()
  teamLive.textContent = `${item.dataset.username} removed`
  edited('team')
  if (hadFocus) (next ?? teamInput).focus()
})

function collect(): { data: Record<string, unknown>; extra: Record<string, string | null> } {
  const data: Record<string, unknown> = {}
  for (const name of TEXT_FIELDS) data[name] = control(name).value
  data.tags = tags.names()
  // Left out when nobody is invited, so a draft without co-authors is saved exactly as before the field existed.
  const team = teamMembers()
  if (team.length > 0) data.team = team
  return { data, extra: tags.categories() }
}

function restore(data: Record<string, unknown>, tagCategories: Record<string, string | null>): void {
  for (const name of TEXT_FIELDS) {
    const value = data[name]
    if (typeof value !== 'string') continue
    const element = control(name)
    if (element instanceof HTMLSelectElement && ![...element.options].some((o) => o.value === value)) continue
    element.value = value
  }
  if (Array.isArray(data.tags)) tags.set(data.tags.filter((t): t is string => typeof t === 'string'), tagCategories)
  // No team in the copy: nobody was invited when it was taken (collect() leaves an empty one out).
  setTeam(teamFrom(data.team))
}

// ---- autosave ---------------------------------------------------------------

function showSaveState(state: SaveState): void {
  saveState.dataset.state = state.kind
  saveState.textContent = {
    pending: () => 'Waiting to save…',
    saving: () => 'Saving…',
    saved: () => `Saved ${clockTime((state as { at: Date }).at)}`,
    retrying: () => 'Not saved, retrying…',
    failed: () => `Not saved: ${sentence((state as { detail: string }).detail)}`,
  }[state.kind]()
  saveState.title = state.kind === 'retrying' ? sentence(state.detail) : ''
}

const autosave = new Autosave({
  storageKey: draftCopyKey(draftId),
  savedRevision: Number(form.dataset.revision) || 0,
  collect,
  send: (data, keepalive) => api<Static<typeof DraftSaved>>('POST', '/api/draft/', { draft: draftId, data }, { keepalive }),
  onState: showSaveState,
})

const savedAt = saveState.dataset.savedAt
if (savedAt) showSaveState({ kind: 'saved', at: new Date(savedAt) })

// A newer local copy than the server's: the last visit went away before its last save arrived.
const copy = autosave.takeNewerLocalCopy()
if (copy) {
  restore(copy.data, (copy.extra ?? {}) as Record<string, string | null>)
  showSaveState({ kind: 'pending' })
  autosave.schedule(0)
}

function edited(name: string): void {
  clearFieldError(name)
  autosave.changed()
}

for (const name of TEXT_FIELDS) {
  const element = control(name)
  element.addEventListener(element instanceof HTMLSelectElement ? 'change' : 'input', () => edited(name))
}

// ---- uploads ----------------------------------------------------------------

const inFlight = new Set<Promise<void>>()

function uploadList(kind: Kind): HTMLUListElement {
  return byId<HTMLUListElement>(`${kind}-uploads`)
}

for (const kind of ['thumbnail', 'media', 'version'] as const) {
  const input = byId<HTMLInputElement>(`file-${kind}`)
  input.addEventListener('change', () => {
    const files = [...(input.files ?? [])]
    // Cleared, so choosing the same file again is a change too.
    input.value = ''
    if (files.length === 0) return
    clearFieldError(kind)
    const job = (async () => {
      for (const file of kind === 'media' ? files : files.slice(0, 1)) await uploadOne(kind, file)
    })()
    inFlight.add(job)
    void job.finally(() => inFlight.delete(job))
  })
  uploadList(kind).addEventListener('click', (event) => {
    const button = (event.target as Element).closest<HTMLButtonElement>('button.delete-upload')
    const item = button?.closest<HTMLLIElement>('li[data-upload]')
    if (button && item) void deleteUpload(kind, item, button)
  })
}

async function uploadOne(kind: Kind, file: File): Promise<void> {
  const list = uploadList(kind)
  const pending = pendingUploadItem(file.name)
  list.append(pending.item)
  const body = new FormData()
  body.append('kind', kind)
  body.append('draft_uuid', draftId)
  body.append('file', file)
  let upload: TempUploadBody
  try {
    upload = await uploadWithProgress<TempUploadBody>('/api/uploads/', body, pending.progress)
  } catch (error) {
    pending.item.remove()
    showFieldError(kind, `${file.name}: ${sentence(errorDetail(error))}`, false)
    return
  }
  const item = uploadItem(upload)
  pending.item.replaceWith(item)
  clearFieldError(kind)
  // One thumbnail and one archive: the new one replaces the ones before it, now that it has arrived.
  if (kind !== 'media') {
    for (const old of list.querySelectorAll<HTMLLIElement>('li[data-upload]')) {
      if (old !== item) await deleteUpload(kind, old, old.querySelector<HTMLButtonElement>('button.delete-upload'))
    }
  }
}

async function deleteUpload(kind: Kind, item: HTMLLIElement, button: HTMLButtonElement | null): Promise<void> {
  if (button) button.disabled = true
  try {
    await api('POST', `/api/uploads/${encodeURIComponent(item.dataset.upload!)}/delete/`, {})
  } catch (error) {
    // Already gone (expired, deleted in another tab) is what was wanted.
    if (!(error instanceof ApiError && error.status === 404)) {
      if (button) button.disabled = false
      showFieldError(kind, `Could not delete ${item.querySelector('.upload-name')?.textContent ?? 'the file'}: ${sentence(errorDetail(error))}`, false)
      return
    }
  }
  const focusNext = document.activeElement === button
  item.remove()
  if (focusNext) byId(`file-${kind}`).focus()
}

// ---- field errors -------------------------------------------------------------

/** The control a field's error belongs to (upload fields: the file input). */
function fieldControl(name: string): HTMLElement {
  return document.getElementById(name) ?? byId(`file-${name}`)
}

function showFieldError(name: string, message: string, invalid = true): void {
  const line = byId(`${name}-error`)
  line.textContent = message
  line.hidden = false
  if (invalid) fieldControl(name).setAttribute('aria-invalid', 'true')
}

function clearFieldError(name: string): void {
  const line = document.getElementById(`${name}-error`)
  if (!line || line.hidden) return
  line.hidden = true
  line.textContent = ''
  fieldControl(name).removeAttribute('aria-invalid')
}

function clearAllErrors(): void {
  for (const name of [...TEXT_FIELDS, 'tags', 'team', 'thumbnail', 'media', 'version']) clearFieldError(name)
  for (const item of teamList.querySelectorAll('li.refused')) item.classList.remove('refused')
  publishError.hidden = true
  publishError.textContent = ''
}

// ---- publishing -----------------------------------------------------------------

/** What each name in "missing: title, version_name, a version upload" asks of the person. */
const MISSING: Record<string, [field: string, message: string]> = {
  'title': ['title', 'Give the pack a title.'],
  'version_name': ['version_name', 'Name this version, for example 1.0.0.'],
  'a version upload': ['version', 'Upload the version archive (ZIP).'],
}

/** Form order, so the first marked field is the first one on the page. */
const FIELD_ORDER = ['title', 'summary', 'category', 'tags', 'description', 'thumbnail', 'media', 'version_name', 'version', 'changelog', 'team']

// Publish is a type=button, so Enter in a text field never publishes; nothing submits this form.
form.addEventListener('submit', (event) => event.preventDefault())
publishButton.addEventListener('click', () => void publish())

async function publish(): Promise<void> {
  clearAllErrors()
  publishButton.disabled = true
  try {
    if (inFlight.size > 0) {
      publishStatus.textContent = 'Waiting for uploads to finish…'
      await Promise.allSettled([...inFlight])
    }
    publishStatus.textContent = 'Saving the draft…'
    // Publishing reads the saved draft: the latest state must be on the server first (this also creates a new draft).
    if (!autosave.dirty) autosave.changed()
    if (!(await autosave.flush())) {
      return publishFailed('The draft could not be saved, so it was not published. ' + saveState.textContent)
    }
    publishStatus.textContent = 'Publishing…'
    const pack = await api<PackBody>('POST', '/api/draft/publish/', { draft: draftId })
    autosave.stop()
    publishStatus.textContent = 'Published. Opening the pack page…'
    window.location.assign(`/packs/${encodeURIComponent(pack.namespace)}/${encodeURIComponent(pack.pack_id)}/`)
  } catch (error) {
    showPublishError(error)
  } finally {
    publishButton.disabled = false
  }
}

function publishFailed(message: string): void {
  publishStatus.textContent = ''
  publishError.textContent = message
  publishError.hidden = false
}

function showPublishError(error: unknown): void {
  const detail = errorDetail(error)
  const status = error instanceof ApiError ? error.status : 0
  const marked: string[] = []
  const mark = (field: string, message: string) => {
    showFieldError(field, message)
    marked.push(field)
  }
  const missing = /missing: (.+)$/.exec(detail)
  // "cannot publish the draft: of its co-authors, no account is named "x"; the account "y" is disabled"
  const coAuthors = /of its co-authors, (.+)$/.exec(detail)
  if (status === 400 && missing) {
    for (const name of missing[1]!.split(', ')) {
      const known = MISSING[name.trim()]
      if (known) mark(known[0], known[1])
    }
  } else if (status === 409) {
    mark('title', `${sentence(detail)} Choose another title.`)
  } else if (status === 400 && /^title\b/.test(detail)) {
    mark('title', sentence(detail))
  } else if (status === 400 && /^version_name\b/.test(detail)) {
    mark('version_name', sentence(detail))
  } else if (status === 400 && /version upload/.test(detail)) {
    mark('version', sentence(detail))
  } else if (status === 400 && coAuthors) {
    mark('team', teamRefusal(coAuthors[1]!))
  }
  if (marked.length === 0) {
    publishFailed(status === 404 ? 'This draft no longer exists: it was published or deleted, perhaps in another tab.' : `Not published: ${sentence(detail)}`)
    return
  }
  publishFailed(marked.length === 1 ? 'Not published: see the marked field.' : 'Not published: see the marked fields.')
  const first = FIELD_ORDER.find((f) => marked.includes(f))!
  fieldControl(first).focus()
}

/**
 * The publish refused some co-authors (an account disabled or renamed since it
 * was added, a draft saved elsewhere): the reasons, and those people's rows
 * marked so the author sees whom to remove.
 */
function teamRefusal(problems: string): string {
  const named = new Set([...problems.matchAll(/"([^"]+)"/g)].map((m) => m[1]!.toLowerCase()))
  const rows = [...teamList.querySelectorAll<HTMLLIElement>('li[data-username]')].filter((li) => named.has(li.dataset.username!.toLowerCase()))
  for (const row of rows) row.classList.add('refused')
  const reasons = sentence(problems.replaceAll('; ', '. ').replace(/(\. )([a-z])/g, (_m, dot: string, letter: string) => dot + letter.toUpperCase()))
  if (rows.length === 0) return reasons
  return `${reasons} Remove ${rows.length === 1 ? 'them' : 'those people'} from the team to publish.`
}

// ---- helpers --------------------------------------------------------------------

function errorDetail(error: unknown): string {
  return error instanceof ApiError ? error.detail : error instanceof Error ? error.message : String(error)
}
