// Minimal server-rendered pages (gate, sign-in). Everything interpolated goes
// through escapeHtml; there is no inline script, so the CSP can forbid it.

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ESCAPES[c]!)
}

export const PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

/** What a document needs beyond the headers every response gets (helmet's defaults for pages). */
export const PAGE_HEADERS: Record<string, string> = {
  'content-security-policy': PAGE_CSP,
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'x-permitted-cross-domain-policies': 'none',
}

const STYLE = `body{font:16px/1.5 system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem;color:#1d2129}
label{display:block;margin:.75rem 0 .25rem}input{font:inherit;width:100%;padding:.5rem;box-sizing:border-box}
button{font:inherit;margin-top:1rem;padding:.5rem 1rem}.error{color:#b00020}:focus-visible{outline:3px solid #1a73e8}`

/** A whole page; `body` must already be escaped HTML. */
export function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(title)} · Packs</title><style>${STYLE}</style></head><body><main>${body}</main></body></html>`
}

export function errorLine(message: string | undefined): string {
  return message ? `<p class="error" role="alert">${escapeHtml(message)}</p>` : ''
}
