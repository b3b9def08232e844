// The pack page, for its owner and staff: the "New version" form goes to
// POST /api/packs/{ns}/{id}/versions/ as multipart with a progress bar; the
// server's message (not a ZIP, a duplicate name, too large) is shown next to
// the form, and on success the page reloads with the new version on top.
// Also each version's changelog / yank / delete forms, staff's hide form, and
// the delete page's typed confirmation.
import { ApiError, api, byId, sentence, uploadWithProgress } from '../lib/api.js'
import { reasonBody, sendThenReload } from '../lib/action-form.js'

const form = document.getElementById('new-version')
if (form instanceof HTMLFormElement) setUpNewVersion(form)
const moderation = document.getElementById('moderate-pack')
if (moderation instanceof HTMLFormElement) setUpModeration(moderation)
for (const versionForm of document.querySelectorAll<HTMLFormElement>('form.version-form')) setUpVersionForm(versionForm)
const deleteForm = document.getElementById('delete-pack')
if (deleteForm instanceof HTMLFormElement) setUpDeletePack(deleteForm)

function setUpNewVersion(form: HTMLFormElement): void {
  const fileInput = byId<HTMLInputElement>('nv-file')
  const nameInput = byId<HTMLInputElement>('nv-name')
  const changelog = byId<HTMLTextAreaElement>('nv-changelog')
  const progress = byId<HTMLProgressElement>('nv-progress')
  const status = byId('nv-status')
  const error = byId('nv-error')
  const submit = byId<HTMLButtonElement>('nv-submit')
  let busy = false

  const showError = (message: string, field?: HTMLInputElement) => {
    error.textContent = message
    if (field) {
      field.setAttribute('aria-invalid', 'true')
      field.focus()
    }
  }
  const clearError = () => {
    error.textContent = ''
    fileInput.removeAttribute('aria-invalid')
    nameInput.removeAttribute('aria-invalid')
  }

  form.addEventListener('submit', (event) => {
    event.preventDefault()
    if (busy) return
    clearError()
    const file = fileInput.files?.[0]
    const name = nameInput.value.trim()
    if (!file) return showError('Choose the version archive (a .zip file).', fileInput)
    if (name === '') return showError('Give the version a name.', nameInput)

    // The name goes first: the server refuses a duplicate before storing the archive.
    const body = new FormData()
    body.append('version_name', name)
    body.append('changelog', changelog.value)
    body.append('file', file, file.name)

    busy = true
    submit.disabled = true
    form.setAttribute('aria-busy', 'true')
    progress.value = 0
    progress.hidden = false
    status.textContent = `Uploading ${file.name}…`
    uploadWithProgress<unknown>(form.action, body, (fraction) => {
      progress.value = Math.round(fraction * 100)
    }).then(
      () => {
        progress.value = 100
        status.textContent = `Version ${name} uploaded. Loading it…`
        window.location.reload()
      },
      (failure: unknown) => {
        busy = false
        submit.disabled = false
        form.removeAttribute('aria-busy')
        progress.hidden = true
        status.textContent = ''
        const detail = failure instanceof ApiError ? failure.detail : String(failure)
        const field = failure instanceof ApiError && failure.status === 409 ? nameInput : failure instanceof ApiError && (failure.status === 400 || failure.status === 413) ? fileInput : undefined
        showError(failure instanceof ApiError && failure.status === 413 ? `Too large: ${detail}.` : sentence(detail), field)
      },
    )
  })
}

/**
 * Staff: the Hide / Unhide form posts its reason to the moderation API
 * (POST .../hide/ or .../unhide/, the form's action) and reloads the page,
 * which then shows the pack's new state.
 */
function setUpModeration(form: HTMLFormElement): void {
  sendThenReload(form, {
    method: 'POST',
    submit: byId<HTMLButtonElement>('moderation-submit'),
    error: byId('moderation-error'),
    body: reasonBody(byId<HTMLInputElement>('moderation-reason')),
  })
}

/**
 * Owner and staff: a version's changelog, yank / un-yank and delete forms
 * send their fields to the version's API URL (the form's action) with the
 * form's data-method, then reload the page; a refusal is shown in the form.
 * Delete asks first.
 */
function setUpVersionForm(form: HTMLFormElement): void {
  const submit = form.querySelector<HTMLButtonElement>('button[type=submit]')
  if (!submit) return
  const method = form.dataset.method === 'DELETE' ? 'DELETE' : 'PATCH'
  sendThenReload(form, {
    method,
    submit,
    error: form.querySelector<HTMLElement>('.field-error'),
    confirm: form.dataset.confirm,
    body() {
      if (method === 'DELETE') return undefined
      const body: Record<string, unknown> = {}
      const changelog = form.elements.namedItem('changelog')
      if (changelog instanceof HTMLTextAreaElement) body.changelog = changelog.value
      const yanked = form.elements.namedItem('yanked')
      if (yanked instanceof HTMLInputElement) body.yanked = yanked.value === 'true'
      return body
    },
  })
}

/**
 * The delete page: the button works only once the pack id is typed exactly;
 * then the API's DELETE goes out and the browser goes to the owner's profile.
 * (Without JavaScript the form posts to the page, which checks the id itself.)
 */
function setUpDeletePack(form: HTMLFormElement): void {
  const input = byId<HTMLInputElement>('delete-confirm')
  const submit = byId<HTMLButtonElement>('delete-submit')
  const error = byId('delete-error')
  const expected = form.dataset.packId ?? ''
  const sync = () => { submit.disabled = input.value.trim().toLowerCase() !== expected }
  sync()
  input.addEventListener('input', sync)
  form.addEventListener('submit', (event) => {
    event.preventDefault()
    sync()
    if (submit.disabled) return
    submit.disabled = true
    error.textContent = ''
    api<unknown>('DELETE', form.dataset.api ?? '').then(
      () => window.location.assign(form.dataset.done ?? '/'),
      (failure: unknown) => {
        submit.disabled = false
        error.textContent = sentence(failure instanceof ApiError ? failure.detail : String(failure))
      },
    )
  })
}
