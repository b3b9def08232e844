// The profile page, for staff: the Disable / Enable form posts its reason to
// the moderation API (POST /api/users/{username}/disable/ or /enable/, the
// form's action) and reloads the page, which then shows the account's new
// state; a refusal is shown by the button.
import { ApiError, api, byId, sentence } from '../lib/api.js'

const form = document.getElementById('moderate-account')
if (form instanceof HTMLFormElement) setUpAccountModeration(form)

function setUpAccountModeration(form: HTMLFormElement): void {
  const reason = byId<HTMLInputElement>('account-reason')
  const error = byId('account-moderation-error')
  const submit = byId<HTMLButtonElement>('account-moderation-submit')
  form.addEventListener('submit', (event) => {
    event.preventDefault()
    if (submit.disabled) return
    error.textContent = ''
    submit.disabled = true
    form.setAttribute('aria-busy', 'true')
    const text = reason.value.trim()
    api<unknown>('POST', form.action, text === '' ? {} : { reason: text }).then(
      () => window.location.reload(),
      (failure: unknown) => {
        submit.disabled = false
        form.removeAttribute('aria-busy')
        error.textContent = sentence(failure instanceof ApiError ? failure.detail : String(failure))
      },
    )
  })
}
