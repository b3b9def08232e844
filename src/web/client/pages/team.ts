// The team page and the invitations page (src/pages/team.ts, invitations.ts):
// every form there also names the JSON API call that makes the same change
// (data-api, data-method). With this script the form sends that call, shows the
// API's detail in the form when it is refused, and on success reloads the page
// (or goes to data-done). The invite form's name field suggests users (../lib/user-picker.ts).
import { ApiError, api, sentence } from '../lib/api.js'
import { UserPicker } from '../lib/user-picker.js'

for (const form of document.querySelectorAll<HTMLFormElement>('form.team-form[data-api]')) setUpForm(form)

const input = document.getElementById('invite-username')
const listbox = document.getElementById('invite-suggestions')
const live = document.getElementById('invite-live')
if (input instanceof HTMLInputElement && listbox instanceof HTMLUListElement && live) {
  // Already in the team (or invited): no point offering them.
  const inTeam = new Set([...document.querySelectorAll<HTMLElement>('.team-member[data-username]')].map((li) => li.dataset.username!.toLowerCase()))
  new UserPicker(input, listbox, live, inTeam)
}

/** The form's fields as the API's JSON body (the CSRF token goes in a header instead); none: no body. */
function bodyOf(form: HTMLFormElement): Record<string, string> | undefined {
  const body: Record<string, string> = {}
  for (const [name, value] of new FormData(form)) {
    if (name !== 'csrf_token' && typeof value === 'string') body[name] = name === 'username' ? value.trim() : value
  }
  return Object.keys(body).length > 0 ? body : undefined
}

function setUpForm(form: HTMLFormElement): void {
  const error = form.querySelector<HTMLElement>('.field-error')
  const submit = form.querySelector<HTMLButtonElement>('button[type="submit"]')
  const method = form.dataset.method ?? 'POST'
  form.addEventListener('submit', (event) => {
    event.preventDefault()
    if (submit?.disabled) return
    if (form.dataset.confirm && !window.confirm(form.dataset.confirm)) return
    const body = bodyOf(form)
    if (error) error.textContent = ''
    if (form.id === 'invite-form' && (body?.username ?? '') === '') {
      if (error) error.textContent = 'Type the name of the person to invite.'
      form.querySelector<HTMLInputElement>('input[name="username"]')?.focus()
      return
    }
    if (submit) submit.disabled = true
    form.setAttribute('aria-busy', 'true')
    api<unknown>(method, form.dataset.api!, body).then(
      () => {
        if (form.dataset.done) window.location.assign(form.dataset.done)
        else window.location.reload()
      },
      (failure: unknown) => {
        if (submit) submit.disabled = false
        form.removeAttribute('aria-busy')
        if (error) error.textContent = sentence(failure instanceof ApiError ? failure.detail : String(failure))
      },
    )
  })
}
