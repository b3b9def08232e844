// Signing a webhook's body per the Standard Webhooks specification, version
// 1.0.0 (https://www.standardwebhooks.com), so receivers can verify it with
// any of its libraries instead of code written for us:
//   - a secret is "whsec_" and the base64 of 24 to 64 random bytes; the HMAC
//     key is those bytes, not the text;
//   - three headers: webhook-id (the event's, the same on every retry, so a
//     receiver can drop a repeat), webhook-timestamp (this attempt, in Unix
//     seconds, so a receiver can refuse an old one replayed), and
//     webhook-signature: "v1," and the base64 of HMAC-SHA256 over
//     "<id>.<timestamp>.<body>", the exact bytes sent.
// The id and timestamp are part of the signed text, split by ".": an id with
// a "." in it could shift bytes between the parts, so ids are held to a
// plain alphabet.
import { createHmac, randomBytes } from 'node:crypto'

export const SECRET_PREFIX = 'whsec_'
/** The specification's bounds on a symmetric secret: at least 192 bits, at most 512. */
export const MIN_SECRET_BYTES = 24
export const MAX_SECRET_BYTES = 64
/** What newWebhookSecret makes: 256 bits, the strength of SHA-256 itself; a longer key adds nothing. */
export const SECRET_BYTES = 32

/** Letters, digits, "_" and "-" (so a UUID or a "msg_<base64url>" id fits), 1 to 128 of them. */
const ID_PATTERN = /^[A-Za-z0-9_-]{1,128}$/
const BASE64_PATTERN = /^[A-Za-z0-9+/]+={0,2}$/

export interface StandardWebhookHeaders {
  'webhook-id': string
  'webhook-timestamp': string
  'webhook-signature': string
}

/** A new secret, shown to the webhook's owner once: "whsec_" and the base64 of SECRET_BYTES random bytes. */
export function newWebhookSecret(bytes: number = SECRET_BYTES): string {
  if (!Number.isInteger(bytes) || bytes < MIN_SECRET_BYTES || bytes > MAX_SECRET_BYTES) {
    throw new RangeError(`a webhook secret has ${MIN_SECRET_BYTES} to ${MAX_SECRET_BYTES} bytes`)
  }
  return SECRET_PREFIX + randomBytes(bytes).toString('base64')
}

/** The HMAC key a secret stands for; throws when it is not "whsec_" and canonical base64 of 24 to 64 bytes. */
export function webhookSecretKey(secret: string): Buffer {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : ''
  const key = BASE64_PATTERN.test(encoded) ? Buffer.from(encoded, 'base64') : Buffer.alloc(0)
  // The message says what is wrong, never the secret itself.
  if (key.toString('base64') !== encoded || key.length < MIN_SECRET_BYTES || key.length > MAX_SECRET_BYTES) {
    throw new TypeError(`a webhook secret is "${SECRET_PREFIX}" and the base64 of ${MIN_SECRET_BYTES} to ${MAX_SECRET_BYTES} bytes`)
  }
  return key
}

/** The webhook-signature value for one attempt: "v1," and the base64 HMAC-SHA256 of "<id>.<timestamp>.<body>". */
export function webhookSignature(secret: string, id: string, timestampSeconds: number, body: string | Buffer): string {
  if (!ID_PATTERN.test(id)) throw new TypeError('a webhook id is 1 to 128 letters, digits, "_" or "-"')
  if (!Number.isSafeInteger(timestampSeconds) || timestampSeconds < 0) throw new TypeError('a webhook timestamp is whole seconds since 1970')
  const mac = createHmac('sha256', webhookSecretKey(secret))
  mac.update(`${id}.${timestampSeconds}.`, 'utf8')
  mac.update(body)
  return `v1,${mac.digest('base64')}`
}

/**
 * The three Standard Webhooks headers for one attempt at delivering `body` (the bytes about to be sent; a
 * string is sent and signed as UTF-8). `id` is the event's and stays the same on every retry;
 * `timestampSeconds` is this attempt's.
 */
export function signedHeaders(secret: string, id: string, timestampSeconds: number, body: string | Buffer): StandardWebhookHeaders {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': webhookSignature(secret, id, timestampSeconds, body),
  }
}
