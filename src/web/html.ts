// Server-rendered HTML. Pages are written with the `html` tag: every
// interpolated value is escaped unless it is already SafeHtml (the output of
// another `html` call, or `trusted()` for markup we produced ourselves, such
// as sanitised Markdown). Escaping is the default, so forgetting it is not a
// way to ship stored XSS.

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ESCAPES[c]!)
}

export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value
  }
}

type Interpolation = SafeHtml | string | number | boolean | null | undefined | readonly Interpolation[]

function render(value: Interpolation): string {
  if (value === null || value === undefined || value === false) return ''
  if (value instanceof SafeHtml) return value.value
  if (Array.isArray(value)) return value.map(render).join('')
  return escapeHtml(String(value))
}

/** Tagged template: escapes every interpolation that is not SafeHtml; arrays are joined; null, undefined and false render nothing. */
export function html(strings: TemplateStringsArray, ...values: Interpolation[]): SafeHtml {
  let out = strings[0]!
  for (let i = 0; i < values.length; i++) out += render(values[i]!) + strings[i + 1]!
  return new SafeHtml(out)
}

/** Markup produced by our own code (sanitised Markdown, an SVG chart built with `html`). Never pass user input. */
export function trusted(markup: string): SafeHtml {
  return new SafeHtml(markup)
}

/**
 * The pages' policy: scripts and styles only from our own origin (the bundle
 * under /assets/), no inline script or style, images and video from our own
 * files (blob: for previews of a file being uploaded), fetches to ourselves.
 */
export const PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' blob:",
  "media-src 'self' blob:",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ')

/** What a document needs beyond the headers every response gets (helmet's defaults for pages). */
export const PAGE_HEADERS: Record<string, string> = {
  'content-security-policy': PAGE_CSP,
  'referrer-policy': 'same-origin',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'x-permitted-cross-domain-policies': 'none',
  // Pages show who is signed in and carry a CSRF token: never cache them in shared caches.
  'cache-control': 'no-store',
}
