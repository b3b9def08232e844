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

/**
 * Constant-time equality with one known secret, allocating nothing: the gate
 * checks every request's password, and a digest per request (a new Buffer,
 * whose memory V8 then sweeps on a helper thread) cost the update-check about
 * a sixth of its throughput. The candidate's UTF-8 bytes are written into a
 * scratch buffer of the secret's size and compared with timingSafeEqual. Only
 * whether the lengths are equal can show in the timing, as with Python's
 * hmac.compare_digest; the bytes cannot.
 */
export class SecretMatcher {
  private readonly secret: Buffer
  private readonly scratch: Buffer

  constructor(secret: string) {
    this.secret = Buffer.from(secret, 'utf8')
    this.scratch = Buffer.alloc(this.secret.length)
  }

  matches(candidate: string): boolean {
    if (Buffer.byteLength(candidate, 'utf8') !== this.secret.length) return false
    // Synchronous from write to compare: no other caller can use the scratch in between.
    this.scratch.write(candidate, 0, 'utf8')
    return timingSafeEqual(this.scratch, this.secret)
  }
}

/** Constant-time equality for two strings of possibly different length. */
export function safeEqual(a: string, b: string): boolean {
  // Hashing first gives equal lengths, so timingSafeEqual never throws and the
  // length of the secret does not leak through timing.
  return timingSafeEqual(hash('sha256', a, 'buffer'), hash('sha256', b, 'buffer'))
}
