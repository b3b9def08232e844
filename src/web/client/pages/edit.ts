// The edit page of a published pack: tracks unsaved changes (an indicator and
// a leave-page warning), uploads a new thumbnail and gallery items with
// progress (POST /api/uploads/, as the create page does), reorders and removes
// gallery items, and saves with PATCH on the pack only when "Save changes" is
// pressed: nothing is ever saved on its own. A save refused because the pack
// was changed elsewhere (409) says so and offers to reload.
import { ApiError, api, byId, clockTime, sentence, uploadWithProgress } from '../lib/api.js'
import { pendingUploadItem } from '../lib/create-markup.js'
import { TagPicker } from '../lib/tag-picker.js'
import type { PackBody } from '../../../api/packs.js'
import type { TempUploadBody } from '../../../api/uploads.js'

const TEXT_FIELDS = ['title', 'summary', 'category', 'description'] as const
type TextField = (typeof TEXT_FIELDS)[number]

const form = byId<HTMLFormElement>('edit-form')
const apiUrl = form.dataset.api!
let revision = Number(form.dataset.revision)
const stateLine = byId('edit-state')
const saveButton = byId<HTMLButtonElement>('save')
const saveStatus = byId('save-status')
const saveError = byId('save-error')
const conflictBox = byId('edit-conflict')
const conflictText = byId('edit-conflict-text')
const reloadLink = byId<HTMLAnchorElement>('edit-reload')
const heading = byId('edit-title-heading')
const gallery = byId<HTMLOListElement>('gallery-list')
const galleryEmpty = byId('gallery-empty')
const galleryLive = byId('gallery-live')
const thumbCurrent = byId('thumbnail-current')
const thumbRemove = byId<HTMLButtonElement>('thumbnail-remove')
const thumbUndo = byId<HTMLButtonElement>('thumbnail-undo')

const control = (name: TextField) => byId<HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement>(name)

const tags = new TagPicker(
  byId<HTMLInputElement>('tags'), byId<HTMLUListElement>('tag-options'), byId<HTMLUListElement>('tag-chips'), byId('tags-live'),
  () => {
    clearFieldError('tags')
    refresh()
  },
)

// ---- what the page holds, and whether it differs from what is saved ----------------

/** The thumbnail as edited: the saved one kept, none, or a new pending upload. */
type Thumbnail = { kind: 'keep' } | { kind: 'none' } | { kind: 'upload'; id: string; url: string; filename: string }
let thumbnail: Thumbnail = { kind: 'keep' }
let savedThumbnailUrl: string | null = thumbCurrent.dataset.url || null

interface Snapshot {
  title: string
  summary: string
  category: string
  description: string
  tags: string[]
  thumbnail: string
  media: string[]
}

/** Gallery items in order: a saved item's file id or a new item's upload id (items still uploading are not in it yet). */
function galleryItems(): HTMLLIElement[] {
  return [...gallery.querySelectorAll<HTMLLIElement>(':scope > li[data-media], :scope > li[data-upload]')]
}

function galleryIds(): string[] {
  return galleryItems().map((li) => li.dataset.media ?? li.dataset.upload!)
}

function snapshot(): Snapshot {
  return {
    title: control('title').value,
    summary: control('summary').value,
    category: control('category').value,
    description: control('description').value,
    // A pack's tags are a set: order and case do not make a change.
    tags: tags.names().map((n) => n.toLowerCase()).sort(),
    thumbnail: thumbnail.kind === 'upload' ? thumbnail.id : thumbnail.kind,
    media: galleryIds(),
  }
}

let saved: Snapshot = snapshot()
let savedAt: Date | null = null
const inFlight = new Set<Promise<void>>()
/** Set when the person chose to leave (reload after a conflict): no second warning. */
let leaving = false

function isDirty(): boolean {
  return inFlight.size > 0 || JSON.stringify(snapshot()) !== JSON.stringify(saved)
}

/** The indicator: "Unsaved changes" whenever the page differs from the pack as saved. */
function refresh(): void {
  const dirty = isDirty()
  stateLine.dataset.state = dirty ? 'dirty' : savedAt ? 'saved' : 'clean'
  stateLine.textContent = dirty ? 'Unsaved changes' : savedAt ? `All changes saved ${clockTime(savedAt)}` : 'No unsaved changes'
  galleryEmpty.hidden = gallery.querySelector(':scope > li') !== null
}

window.addEventListener('beforeunload', (event) => {
  if (leaving || !isDirty()) return
  // Browsers show their own "leave site?" question; the text is theirs.
  event.preventDefault()
  event.returnValue = ''
})

for (const name of TEXT_FIELDS) {
  const element = control(name)
  element.addEventListener(element instanceof HTMLSelectElement ? 'change' : 'input', () => {
    clearFieldError(name)
    refresh()
  })
}

// ---- thumbnail ------------------------------------------------------------------------

function renderThumbnail(): void {
  const nodes: Node[] = []
  if (thumbnail.kind === 'upload') {
    nodes.push(image(thumbnail.url, `New thumbnail: ${thumbnail.filename}`, 'thumbnail-preview'))
    nodes.push(text('p', 'hint', `New thumbnail ${thumbnail.filename}: it replaces the current one when you save.`))
  } else if (thumbnail.kind === 'none') {
    nodes.push(text('p', 'muted', 'No thumbnail: the current one is removed when you save.', 'thumbnail-none'))
  } else if (savedThumbnailUrl !== null) {
    nodes.push(image(savedThumbnailUrl, 'Current thumbnail', 'thumbnail-preview'))
  } else {
    nodes.push(text('p', 'muted', 'No thumbnail.', 'thumbnail-none'))
  }
  thumbCurrent.replaceChildren(...nodes)
  thumbRemove.hidden = thumbnail.kind === 'none' || (thumbnail.kind === 'keep' && savedThumbnailUrl === null)
  thumbUndo.hidden = thumbnail.kind === 'keep' || savedThumbnailUrl === null
}

/** Leaves the thumbnail as `next`, deleting a new upload that is no longer wanted. */
function setThumbnail(next: Thumbnail): void {
  if (thumbnail.kind === 'upload' && !(next.kind === 'upload' && next.id === thumbnail.id)) discardUpload(thumbnail.id)
  thumbnail = next
  renderThumbnail()
  refresh()
}

thumbRemove.addEventListener('click', () => {
  setThumbnail(savedThumbnailUrl === null ? { kind: 'keep' } : { kind: 'none' })
  byId('file-thumbnail').focus()
})
thumbUndo.addEventListener('click', () => {
  setThumbnail({ kind: 'keep' })
  byId('file-thumbnail').focus()
})

const thumbInput = byId<HTMLInputElement>('file-thumbnail')
thumbInput.addEventListener('change', () => {
  const file = thumbInput.files?.[0]
  // Cleared, so choosing the same file again is a change too.
  thumbInput.value = ''
  if (!file) return
  clearFieldError('thumbnail')
  track((async () => {
    const list = byId<HTMLUListElement>('thumbnail-uploads')
    const pending = pendingUploadItem(file.name)
    list.append(pending.item)
    try {
      const upload = await uploadFile('thumbnail', file, pending.progress)
      setThumbnail({ kind: 'upload', id: upload.uuid, url: upload.url, filename: upload.filename })
    } catch (error) {
      showFieldError('thumbnail', `${file.name}: ${sentence(errorDetail(error))}`, false)
    } finally {
      pending.item.remove()
    }
  })())
})

// ---- gallery ---------------------------------------------------------------------------

const mediaInput = byId<HTMLInputElement>('file-media')
mediaInput.addEventListener('change', () => {
  const files = [...(mediaInput.files ?? [])]
  mediaInput.value = ''
  if (files.length === 0) return
  clearFieldError('media')
  track((async () => {
    for (const file of files) {
      const pending = pendingUploadItem(file.name)
      gallery.append(pending.item)
      refresh()
      try {
        const upload = await uploadFile('media', file, pending.progress)
        pending.item.replaceWith(galleryItem({ upload: upload.uuid }, upload.url, upload.content_type, upload.filename))
        galleryLive.textContent = `Added ${upload.filename} at position ${galleryItems().length} of the gallery.`
      } catch (error) {
        pending.item.remove()
        showFieldError('media', `${file.name}: ${sentence(errorDetail(error))}`, false)
      }
    }
  })())
})

gallery.addEventListener('click', (event) => {
  const button = (event.target as Element).closest<HTMLButtonElement>('button')
  const item = button?.closest<HTMLLIElement>('li.gallery-item')
  if (!button || !item) return
  const name = item.querySelector('.upload-name')?.textContent ?? 'the item'
  if (button.classList.contains('remove-media')) {
    const items = galleryItems()
    const next = items[items.indexOf(item) + 1] ?? items[items.indexOf(item) - 1]
    if (item.dataset.upload) discardUpload(item.dataset.upload)
    item.remove()
    galleryLive.textContent = `Removed ${name} from the gallery; its file is deleted when you save.`
    ;(next?.querySelector<HTMLButtonElement>('button.remove-media') ?? mediaInput).focus()
  } else if (button.classList.contains('move-up') || button.classList.contains('move-down')) {
    const up = button.classList.contains('move-up')
    const sibling = up ? item.previousElementSibling : item.nextElementSibling
    if (!sibling) {
      galleryLive.textContent = `${name} is already ${up ? 'first' : 'last'}.`
      return
    }
    if (up) sibling.before(item)
    else sibling.after(item)
    // Moving the item took the focus off its button; the person keeps moving it with the same key.
    button.focus()
    const items = galleryItems()
    galleryLive.textContent = `Moved ${name} to position ${items.indexOf(item) + 1} of ${items.length}.`
  }
  refresh()
})

/** A gallery item; the server renders the same markup for saved items (src/pages/edit.ts). */
function galleryItem(id: { media: string } | { upload: string }, url: string, contentType: string, filename: string): HTMLLIElement {
  const item = document.createElement('li')
  item.className = 'upload gallery-item'
  if ('media' in id) item.dataset.media = id.media
  else item.dataset.upload = id.upload
  let preview: HTMLElement
  if (contentType.startsWith('video/')) {
    const video = document.createElement('video')
    video.className = 'upload-preview'
    video.src = url
    video.controls = true
    video.muted = true
    video.preload = 'metadata'
    video.setAttribute('aria-label', `Preview of ${filename}`)
    preview = video
  } else {
    preview = image(url, `Preview of ${filename}`)
  }
  const buttons = document.createElement('span')
  buttons.className = 'edit-buttons'
  buttons.append(
    button('secondary move-up', 'Move up', filename),
    button('secondary move-down', 'Move down', filename),
    button('danger remove-media', 'Remove', filename),
  )
  item.append(preview, text('span', 'upload-name', filename), buttons)
  return item
}

// ---- uploads ---------------------------------------------------------------------------

function uploadFile(kind: 'thumbnail' | 'media', file: File, progress: (fraction: number) => void): Promise<TempUploadBody> {
  // No draft: a pending upload of the caller, which the save then takes for this pack.
  const body = new FormData()
  body.append('kind', kind)
  body.append('file', file)
  return uploadWithProgress<TempUploadBody>('/api/uploads/', body, progress)
}

/** A new upload dropped before saving: deleted at once rather than left to expire. Best effort: expiry removes it anyway. */
function discardUpload(id: string): void {
  void api('POST', `/api/uploads/${encodeURIComponent(id)}/delete/`, {}).catch(() => {})
}

function track(job: Promise<void>): void {
  inFlight.add(job)
  refresh()
  void job.finally(() => {
    inFlight.delete(job)
    refresh()
  })
}

// ---- saving ------------------------------------------------------------------------------

// Only the Save button saves: Enter in a one-line field would submit the form (the tag box handles its own Enter).
form.addEventListener('keydown', (event) => {
  const target = event.target
  if (event.key === 'Enter' && target instanceof HTMLInputElement && target.type !== 'file' && target.type !== 'button') event.preventDefault()
})
form.addEventListener('submit', (event) => {
  event.preventDefault()
  if (event.submitter === saveButton) void save()
})
reloadLink.addEventListener('click', (event) => {
  event.preventDefault()
  leaving = true
  window.location.reload()
})

/** The fields that differ from the saved pack, as EditPackBody names them. */
function changes(now: Snapshot): Record<string, unknown> {
  const body: Record<string, unknown> = {}
  for (const name of TEXT_FIELDS) if (now[name] !== saved[name]) body[name] = now[name]
  if (JSON.stringify(now.tags) !== JSON.stringify(saved.tags)) body.tags = tags.names()
  if (thumbnail.kind !== 'keep') body.thumbnail = thumbnail.kind === 'upload' ? thumbnail.id : null
  if (JSON.stringify(now.media) !== JSON.stringify(saved.media)) body.media = now.media
  return body
}

async function save(): Promise<void> {
  clearAllErrors()
  saveButton.disabled = true
  try {
    if (inFlight.size > 0) {
      saveStatus.textContent = 'Waiting for uploads to finish…'
      await Promise.allSettled([...inFlight])
    }
    const body = changes(snapshot())
    if (Object.keys(body).length === 0) {
      saveStatus.textContent = 'Nothing to save: the page shows the pack as it is saved.'
      return
    }
    saveStatus.textContent = 'Saving…'
    const pack = await api<PackBody>('PATCH', apiUrl, { revision, ...body })
    applySaved(pack)
    saveStatus.textContent = 'Saved.'
  } catch (error) {
    saveStatus.textContent = ''
    showSaveError(error)
  } finally {
    saveButton.disabled = false
  }
}

/** The page becomes the pack as the server now has it; that is the new "saved" state. */
function applySaved(pack: PackBody): void {
  revision = pack.revision
  byId<HTMLInputElement>('revision').value = String(pack.revision)
  control('title').value = pack.title
  control('summary').value = pack.summary
  control('category').value = pack.category?.key ?? ''
  heading.textContent = pack.title
  document.title = `Edit ${pack.title} · Packs`
  tags.set(pack.tags.map((t) => t.name), Object.fromEntries(pack.tags.map((t) => [t.name, t.category])))
  // Items still uploading (added while saving) stay at the end; they belong to the next save.
  const stillUploading = [...gallery.querySelectorAll<HTMLLIElement>(':scope > li.pending')]
  gallery.replaceChildren(...pack.media.map((m) => galleryItem({ media: m.id }, m.url, m.content_type, m.filename)), ...stillUploading)
  savedThumbnailUrl = pack.thumbnail_url
  thumbnail = { kind: 'keep' }
  renderThumbnail()
  saved = snapshot()
  savedAt = new Date()
  refresh()
}

/** Which field a 400's detail is about (the service names it first). */
const FIELD_OF_DETAIL: [RegExp, string][] = [
  [/^title\b/, 'title'],
  [/^summary\b/, 'summary'],
  [/^description\b/, 'description'],
  [/^unknown categor/, 'category'],
  [/^unknown tags?\b/, 'tags'],
  [/^thumbnail\b/, 'thumbnail'],
  [/^media\b/, 'media'],
]

function showSaveError(error: unknown): void {
  const status = error instanceof ApiError ? error.status : 0
  const detail = errorDetail(error)
  if (status === 409) {
    conflictText.textContent = 'This pack was changed elsewhere (in another tab, or by someone else) since you opened this page, '
      + 'so your changes were not saved. Reload the page to see the current version, then make your changes again.'
    conflictBox.hidden = false
    reloadLink.focus()
    return
  }
  const field = status === 400 ? FIELD_OF_DETAIL.find(([pattern]) => pattern.test(detail))?.[1] : undefined
  if (field) {
    showFieldError(field, sentence(detail), field !== 'thumbnail' && field !== 'media')
    fieldControl(field).focus()
    showSaveFailure('Not saved: see the marked field.')
  } else if (status === 404) {
    showSaveFailure('Not saved: this pack no longer exists, or you may no longer edit it.')
  } else {
    showSaveFailure(`Not saved: ${sentence(detail)}`)
  }
}

function showSaveFailure(message: string): void {
  saveError.textContent = message
  saveError.hidden = false
}

// ---- field errors --------------------------------------------------------------------------

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
  for (const name of [...TEXT_FIELDS, 'tags', 'thumbnail', 'media']) clearFieldError(name)
  saveError.hidden = true
  saveError.textContent = ''
}

// ---- helpers ----------------------------------------------------------------------------------

function errorDetail(error: unknown): string {
  return error instanceof ApiError ? error.detail : error instanceof Error ? error.message : String(error)
}

function text(tag: 'p' | 'span', className: string, content: string, id?: string): HTMLElement {
  const node = document.createElement(tag)
  node.className = className
  node.textContent = content
  if (id) node.id = id
  return node
}

function image(url: string, alt: string, id?: string): HTMLImageElement {
  const img = document.createElement('img')
  img.className = 'upload-preview'
  img.src = url
  img.alt = alt
  if (id) img.id = id
  return img
}

function button(className: string, label: string, filename: string): HTMLButtonElement {
  const node = document.createElement('button')
  node.type = 'button'
  node.className = className
  node.textContent = label
  node.append(text('span', 'visually-hidden', ` ${filename}`))
  return node
}

// The page as the server rendered it is the pack as saved (`saved` above); show that.
renderThumbnail()
refresh()
