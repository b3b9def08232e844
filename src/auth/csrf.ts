// CSRF protection of session-authenticated state changes (docs/decisions.md#sessions-and-csrf): the
// token is derived from the session, not stored, so every instance can check
// it. The auth plugin checks it; pages put it in their forms (request.csrfToken).
import { hmacHex, sha256Hex } from './secrets.js'

export const CSRF_HEADER = 'x-csrf-token'
export const CSRF_FIELD = 'csrf_token'

/** The CSRF token of a session. */
export function csrfTokenFor(siteSecret: string, sessionToken: string): string {
  return hmacHex(siteSecret, `csrf|${sha256Hex(sessionToken)}`)
}
