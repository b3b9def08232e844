// Small forms that change one thing through the API and reload the page to
// show the result (staff moderation, a version's yank or changelog): the
// submit sends the form's body to its action, the button waits meanwhile,
// and a refusal (the server's detail) is shown in the form.
import { ApiError, api, sentence } from './api.js'

export interface ActionFormOptions {
  method: 'POST' | 'PATCH' | 'DELETE'
  submit: HTMLButtonElement
  error: HTMLElement | null
  /** The JSON body; undefined sends none. */
  body(): unknown
  /** Asked with confirm() first; a dismissed confirm sends nothing. */
  confirm?: string | undefined
}

export function sendThenReload(form: HTMLFormElement, options: ActionFormOptions): void {
  const { submit, error } = options
  form.addEventListener('submit', (event) => {
    event.preventDefault()
    if (submit.disabled) return
    if (options.confirm && !window.confirm(options.confirm)) return
    if (error) error.textContent = ''
    submit.disabled = true
    form.setAttribute('aria-busy', 'true')
    api<unknown>(options.method, form.action, options.body()).then(
      () => window.location.reload(),
      (failure: unknown) => {
        submit.disabled = false
        form.removeAttribute('aria-busy')
        if (error) error.textContent = sentence(failure instanceof ApiError ? failure.detail : String(failure))
      },
    )
  })
}

/** The body of a staff moderation form: its reason, when one was typed. */
export function reasonBody(input: HTMLInputElement): () => unknown {
  return () => {
    const text = input.value.trim()
    return text === '' ? {} : { reason: text }
  }
}
