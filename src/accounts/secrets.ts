// Random bearer secrets (API tokens, session ids) and their comparison. They
// have 256 bits of entropy, so a single SHA-256 is enough to store them and to
// look them up by hash. Passwords are another matter: passwords.ts.
import { createHmac, hash, randomBytes, timingSafeEqual } from 'node:crypto'

/** A new random secret, URL-safe, with a readable prefix so leaked tokens are easy to spot and scan for. */
export function newSecret(prefix: string): string {
  return `${prefix}${randomBytes(32).toString('base64url')}`
}

// crypto.hash is the one-shot form: several times cheaper than createHash for
// short inputs, which matters because the gate hashes on every request.
export function sha256Hex(value: string | Buffer): string {
  return hash('sha256', value, 'hex')
}

export function hmacHex(key: string, message: string): string {
  return createHmac('sha256', key).update(message).digest('hex')
}

export function sha256Digest(value: string): Buffer {
  return hash('sha256', value, 'buffer')
}

/** Constant-time equality for two strings of possibly different length. */
export function safeEqual(a: string, b: string): boolean {
  // Hashing first gives equal lengths, so timingSafeEqual never throws and the
  // length of the secret does not leak through timing.
  return timingSafeEqual(hash('sha256', a, 'buffer'), hash('sha256', b, 'buffer'))
}
