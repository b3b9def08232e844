// Hashing and comparison of secrets. Passwords go through scrypt (memory-hard);
// random bearer secrets (API tokens, session ids) have 256 bits of entropy, so
// a single SHA-256 is enough to store them and to look them up by hash.
import { createHmac, hash, randomBytes, scrypt as scryptCallback, timingSafeEqual, type ScryptOptions } from 'node:crypto'
import { passwordWork } from './password-work.js'

// Every scrypt of the process waits for a slot of passwordWork, or is refused at once (password-work.ts).
const scrypt = (password: string, salt: Buffer, keylen: number, options: ScryptOptions) =>
  passwordWork.run(() => new Promise<Buffer>((resolve, reject) =>
    scryptCallback(password, salt, keylen, options, (error, key) => (error ? reject(error) : resolve(key))),
  ))

// N=2^15, r=8 costs 32 MiB and ~0.1 s a hash on this class of machine (OWASP's scrypt minimum is N=2^17 with
// r=8 for 128 MiB; we trade a step of that for a login that stays quick on 2 cores). The parameters are stored
// in each hash, so they can be raised later without breaking old hashes.
const SCRYPT = { N: 2 ** 15, r: 8, p: 1, keylen: 32 }

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16)
  const key = await scrypt(password, salt, SCRYPT.keylen, scryptOptions(SCRYPT.N, SCRYPT.r, SCRYPT.p))
  return ['scrypt', SCRYPT.N, SCRYPT.r, SCRYPT.p, salt.toString('base64url'), key.toString('base64url')].join('$')
}

/**
 * A well-formed hash with today's parameters that no password matches (its key
 * is random): verifying against it costs exactly what verifying a real
 * password costs, so a sign-in for a name that does not exist takes as long as
 * one with a wrong password, and needs no hashing of its own first.
 */
export const DECOY_PASSWORD_HASH = ['scrypt', SCRYPT.N, SCRYPT.r, SCRYPT.p, randomBytes(16).toString('base64url'), randomBytes(SCRYPT.keylen).toString('base64url')].join('$')

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, expected] = stored.split('$')
  if (scheme !== 'scrypt' || !n || !r || !p || !salt || !expected) return false
  const expectedKey = Buffer.from(expected, 'base64url')
  const key = await scrypt(password, Buffer.from(salt, 'base64url'), expectedKey.length, scryptOptions(Number(n), Number(r), Number(p)))
  return timingSafeEqual(key, expectedKey)
}

function scryptOptions(N: number, r: number, p: number): ScryptOptions {
  return { N, r, p, maxmem: 128 * N * r * p * 2 }
}

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
