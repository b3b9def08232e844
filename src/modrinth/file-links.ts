// Links to files that work without the gate, for the Modrinth-compatible API.
// A launcher downloads `files[].url` (and shows `icon_url`) with its own
// HTTP client, which sends neither the gate password nor a token: Modrinth's
// CDN is public. So the URLs in these answers carry their own proof, as a
// pre-signed S3 URL does: an HMAC over the file id and an expiry. Only a
// caller past the gate is given one; it opens that one file's bytes, until it
// expires, and only while two things still hold:
//   - the gate password is the one it was made under. The link's key is
//     derived from the site secret and the gate's current cookie value, which
//     changes exactly when the password does (`packs master-password set`, or
//     another PACKS_MASTER_PASSWORD): changing the password is how a site shuts
//     out everyone it let in, and that must include the links they were given.
//   - the file's pack is one everyone may see (fileOfListedPack): hiding a
//     pack or disabling its owner takes its files off the open web at once,
//     not a week later when the links expire.
import type { Gate } from '../auth/gate.js'
import type { FileUrls } from '../http/urls.js'
import { hmacHex, safeEqual } from '../auth/secrets.js'
import { MODRINTH_PREFIX } from '../api/modrinth.js'

/** How long a link works: long enough for a launcher that lists now and downloads later in the session, or tomorrow. */
export const FILE_LINK_TTL_MS = 7 * 24 * 3600 * 1000

export const FILE_LINK_PATH = `${MODRINTH_PREFIX}/files/:file_id`

/**
 * The key links are signed with now. A gate cookie value is known to every
 * browser past the gate, so it is not the key itself: the key is an HMAC of
 * it under the site secret, which no client knows.
 */
export async function fileLinkKey(gate: Pick<Gate, 'siteSecret' | 'cookieValue'>): Promise<string> {
  return hmacHex(gate.siteSecret, `modrinth-file-link-key\n${await gate.cookieValue()}`)
}

function signature(key: string, fileId: string, expires: number): string {
  // A purpose prefix: no other HMAC of the same key material is over the same message.
  return hmacHex(key, `modrinth-file-link\n${fileId}\n${expires}`).slice(0, 43)
}

/**
 * URLs for one answer: stored files and downloads as signed links under
 * `origin`, valid until `now` + FILE_LINK_TTL_MS (rounded up to the hour, so
 * answers within the hour name the same URLs and a launcher's cache keeps them).
 * `key` is fileLinkKey's.
 */
export function signedFileUrls(key: string, origin: string, now: number): FileUrls {
  const hour = 3600_000
  const expires = Math.ceil((now + FILE_LINK_TTL_MS) / hour) * hour / 1000
  const link = (fileId: string, download: boolean) =>
    `${origin}${MODRINTH_PREFIX}/files/${fileId}?expires=${expires}&signature=${signature(key, fileId, expires)}${download ? '&download=1' : ''}`
  return { file: (fileId) => link(fileId, false), download: (fileId) => link(fileId, true) }
}

/** Whether a link's expiry (unix seconds) is still ahead and its signature is this key's (fileLinkKey, now). */
export function fileLinkHolds(key: string, fileId: string, expires: number, sent: string, now: number): boolean {
  return expires * 1000 > now && safeEqual(sent, signature(key, fileId, expires))
}
