// The profile page, for staff: the Disable / Enable form posts its reason to
// the moderation API (POST /api/users/{username}/disable/ or /enable/, the
// form's action) and reloads the page, which then shows the account's new
// state; a refusal is shown by the button.
import { byId } from '../lib/api.js'
import { reasonBody, sendThenReload } from '../lib/action-form.js'

const form = document.getElementById('moderate-account')
if (form instanceof HTMLFormElement) setUpAccountModeration(form)

function setUpAccountModeration(form: HTMLFormElement): void {
  sendThenReload(form, {
    method: 'POST',
    submit: byId<HTMLButtonElement>('account-moderation-submit'),
    error: byId('account-moderation-error'),
    body: reasonBody(byId<HTMLInputElement>('account-reason')),
  })
}
