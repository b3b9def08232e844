// How page scripts talk to the API: JSON in and out, the session's CSRF token
// on every state change, and errors carried as the server's own `detail`.

export class ApiError extends Error {
  constructor(readonly status: number, readonly detail: string) {
    super(detail)
  }
}

export function csrfToken(): string {
  return document.querySelector<HTMLMetaElement>('meta[name="csrf-token"]')?.content ?? ''
}

async function detailOf(response: Response): Promise<string> {
  try {
    const body = (await response.json()) as { detail?: unknown }
    if (typeof body.detail === 'string') return body.detail
  } catch {
    // Not JSON (a proxy's page, a dropped connection): fall back to the status line.
  }
  return `${response.status} ${response.statusText}`.trim()
}

export interface ApiOptions {
  /** Keep the request alive while the page unloads (the last autosave). */
  keepalive?: boolean
}

export async function api<T>(method: string, url: string, body?: unknown, options: ApiOptions = {}): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' }
  if (method !== 'GET') headers['x-csrf-token'] = csrfToken()
  if (body !== undefined) headers['content-type'] = 'application/json'
  const response = await fetch(url, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: 'same-origin',
    keepalive: options.keepalive,
  })
  if (!response.ok) throw new ApiError(response.status, await detailOf(response))
  // A DELETE answers 204 with no body.
  if (response.status === 204) return undefined as T
  return (await response.json()) as T
}

/**
 * A multipart upload with progress: fetch() cannot report upload progress,
 * XMLHttpRequest can. Resolves with the parsed JSON; rejects with ApiError.
 */
export function uploadWithProgress<T>(url: string, form: FormData, onProgress: (fraction: number) => void): Promise<T> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest()
    xhr.open('POST', url)
    xhr.setRequestHeader('x-csrf-token', csrfToken())
    xhr.setRequestHeader('accept', 'application/json')
    xhr.responseType = 'text'
    xhr.upload.addEventListener('progress', (event) => {
      if (event.lengthComputable) onProgress(event.loaded / event.total)
    })
    xhr.addEventListener('load', () => {
      let body: unknown = null
      try {
        body = JSON.parse(xhr.responseText)
      } catch {
        // handled below
      }
      if (xhr.status >= 200 && xhr.status < 300 && body !== null) return resolve(body as T)
      const detail = body && typeof (body as { detail?: unknown }).detail === 'string'
        ? (body as { detail: string }).detail
        : `${xhr.status} ${xhr.statusText}`.trim()
      reject(new ApiError(xhr.status, detail))
    })
    xhr.addEventListener('error', () => reject(new ApiError(0, 'the connection failed; check your network and try again')))
    xhr.addEventListener('abort', () => reject(new ApiError(0, 'upload cancelled')))
    xhr.send(form)
  })
}

/** A server `detail` as a sentence for people: "the file is empty" -> "The file is empty." */
export function sentence(text: string): string {
  const trimmed = text.trim()
  if (trimmed === '') return ''
  const capital = trimmed.charAt(0).toUpperCase() + trimmed.slice(1)
  return /[.!?…]$/.test(capital) ? capital : `${capital}.`
}

/** "12:04:31" in the viewer's clock. */
export function clockTime(date: Date): string {
  return date.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit', hour12: false })
}

/** Typed element lookup that fails loudly when the page and its script disagree. */
export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const element = document.getElementById(id)
  if (!element) throw new Error(`#${id} is missing from the page`)
  return element as T
}
