// Secrets the site must be able to read back (a webhook's address and signing
// secret, a feed token shown again on its settings page) are kept sealed:
// AES-256-GCM under a key derived from the site secret with HKDF, one key per
// purpose, so a sealed value of one kind cannot be passed off as another. The
// database alone (a backup, an export) does not reveal them without the site
// secret's row, and a changed byte fails to open instead of decrypting to
// something else.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto'

/** What a sealed value is for; each has a key of its own. */
export type SealPurpose = 'webhook-url' | 'webhook-secret' | 'feed-token'

const VERSION = 'v1'
const IV_BYTES = 12
const TAG_BYTES = 16

const keys = new Map<string, Buffer>()

function keyFor(siteSecret: string, purpose: SealPurpose): Buffer {
  const id = `${purpose}\n${siteSecret}`
  let key = keys.get(id)
  if (!key) {
    key = Buffer.from(hkdfSync('sha256', siteSecret, 'packs sealed values', `packs ${purpose}`, 32))
    // A process knows one site secret (two in a test that runs two sites), so this stays a handful of keys.
    if (keys.size > 64) keys.clear()
    keys.set(id, key)
  }
  return key
}

export function seal(siteSecret: string, purpose: SealPurpose, plaintext: string): string {
  const iv = randomBytes(IV_BYTES)
  const cipher = createCipheriv('aes-256-gcm', keyFor(siteSecret, purpose), iv)
  cipher.setAAD(Buffer.from(purpose))
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()])
  return `${VERSION}.${iv.toString('base64url')}.${body.toString('base64url')}`
}

/** The sealed value's plaintext; throws when it was sealed with another secret or purpose, or was altered. */
export function unseal(siteSecret: string, purpose: SealPurpose, sealed: string): string {
  const [version, iv, body] = sealed.split('.')
  if (version !== VERSION || iv === undefined || body === undefined) throw new Error('not a sealed value')
  const bytes = Buffer.from(body, 'base64url')
  if (bytes.length < TAG_BYTES) throw new Error('not a sealed value')
  const decipher = createDecipheriv('aes-256-gcm', keyFor(siteSecret, purpose), Buffer.from(iv, 'base64url'))
  decipher.setAAD(Buffer.from(purpose))
  decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES))
  return Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - TAG_BYTES)), decipher.final()]).toString('utf8')
}
