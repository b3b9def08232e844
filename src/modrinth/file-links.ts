// Links to files that work without the gate, for the Modrinth-compatible API.
// A launcher downloads `files[].url` (and shows `icon_url`) with its own
// HTTP client, which sends neither the gate password nor a token: Modrinth's
// CDN is public. So the URLs in these answers carry their own proof, as a
// pre-signed S3 URL does: an HMAC (site secret) over the file id and an
// expiry. Only a caller past the gate is given one; it opens that one file's
// bytes, until it expires.
import type { FileUrls } from '../packs/mapper.js'
import { hmacHex, safeEqual } from '../accounts/secrets.js'
import { MODRINTH_PREFIX } from '../api/modrinth.js'

/** How long a link works: long enough for a launcher that lists now and downloads later in the session, or tomorrow. */
export const FILE_LINK_TTL_MS = 7 * 24 * 3600 * 1000

export const FILE_LINK_PATH = `${MODRINTH_PREFIX}/files/:file_id`

function signature(secret: string, fileId: string, expires: number): string {
  // A purpose prefix: no other HMAC of the site secret (gate cookies, CSRF tokens) is over the same message.
  return hmacHex(secret, `modrinth-file-link\n${fileId}\n${expires}`).slice(0, 43)
}

/**
 * URLs for one answer: stored files and downloads as signed links under
 * `origin`, valid until `now` + FILE_LINK_TTL_MS (rounded up to the hour, so
 * answers within the hour name the same URLs and a launcher's cache keeps them).
 */
export function signedFileUrls(secret: string, origin: string, now: number): FileUrls {
  const hour = 3600_000
  const expires = Math.ceil((now + FILE_LINK_TTL_MS) / hour) * hour / 1000
  const link = (fileId: string, download: boolean) =>
    `${origin}${MODRINTH_PREFIX}/files/${fileId}?expires=${expires}&signature=${signature(secret, fileId, expires)}${download ? '&download=1' : ''}`
  return { file: (fileId) => link(fileId, false), download: (fileId) => link(fileId, true) }
}

/** Whether a link's expiry (unix seconds) is still ahead and its signature is the site's. */
export function fileLinkHolds(secret: string, fileId: string, expires: number, sent: string, now: number): boolean {
  return expires * 1000 > now && safeEqual(sent, signature(secret, fileId, expires))
}
