import type { FastifyRequest } from 'fastify'
import type { Config } from '../config/index.js'

/**
 * The public origin: PACKS_BASE_URL when set, else the request's own scheme
 * and host. The host was checked at the edge (src/http/host.ts); the scheme,
 * which a trusted proxy's X-Forwarded-Proto may name, is one of two here.
 */
export function publicOrigin(config: Config, request: FastifyRequest): string {
  return config.baseUrl ?? `${request.protocol === 'https' ? 'https' : 'http'}://${request.host}`
}

/** URL of a stored file; absolute only when PACKS_BASE_URL is set (docs/decisions.md#uploads). */
export function fileUrl(config: Config, fileId: string): string {
  return `${config.baseUrl ?? ''}/api/files/${fileId}/`
}

/** Always-absolute download URL of a stored file, for the in-game updater (docs/decisions.md#the-update-check). */
export function downloadUrl(config: Config, request: FastifyRequest, fileId: string): string {
  return `${publicOrigin(config, request)}/api/files/${fileId}/?download=1`
}

/**
 * How file ids become URLs for one response: stored-file URLs like TempUpload's (relative unless PACKS_BASE_URL
 * is set), download URLs always absolute (the in-game updater has no page to resolve them against).
 */
export interface FileUrls {
  file(fileId: string): string
  download(fileId: string): string
}

export function fileUrls(config: Config, request: FastifyRequest): FileUrls {
  return { file: (id) => fileUrl(config, id), download: (id) => downloadUrl(config, request, id) }
}

/** Far longer than any address of this site; a longer `next` is not followed. */
const MAX_NEXT_LENGTH = 2048
/** Stands in for the site's origin: `next` is resolved against it as a browser resolves a Location against the real one. */
const OWN_ORIGIN = 'http://packs.invalid'

/**
 * Where a form sends the browser afterwards: only a path (and query) of this
 * site, so `next` cannot send people elsewhere. It is resolved with the WHATWG
 * URL parser, as the browser will resolve it, so "/\t/evil.example" (browsers
 * drop the tab: "//evil.example"), "/\evil" and "/.//evil" show the other
 * origin they lead to. Control characters are refused outright: a CR or LF
 * would not even fit in the Location header.
 */
export function safeNext(next: unknown, fallback = '/'): string {
  if (typeof next !== 'string' || next.length > MAX_NEXT_LENGTH || !next.startsWith('/') || hasControlCharacter(next)) return fallback
  let url: URL
  try {
    url = new URL(next, OWN_ORIGIN)
  } catch {
    return fallback
  }
  if (url.origin !== OWN_ORIGIN) return fallback
  // The serialised path is ASCII, percent-encoded; but "/.//evil" resolves to "//evil", which is another host again.
  const path = url.pathname + url.search
  return path.startsWith('//') ? fallback : path
}

function hasControlCharacter(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code < 0x20 || code === 0x7f) return true
  }
  return false
}
