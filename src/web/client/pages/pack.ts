// The pack page, for its owner: the "New version" form goes to
// POST /api/packs/{ns}/{id}/versions/ as multipart with a progress bar; the
// server's message (not a ZIP, a duplicate name, too large) is shown next to
// the form, and on success the page reloads with the new version on top.
import { ApiError, byId, sentence, uploadWithProgress } from '../lib/api.js'

const form = document.getElementById('new-version')
if (form instanceof HTMLFormElement) setUpNewVersion(form)

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
