// The Ed25519 keys that sign update-check answers (docs/update-protocol.md):
// making one, its id, the endorsement a key gives its successor, and the
// public document clients read. node:crypto does the cryptography.
import { createHash, createPrivateKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto'
import { ENDORSEMENT_PREFIX, type SigningKeyBody } from '../api/signing.js'

/** One key as stored (src/signing/repository.ts); the newest in the list is the current one. */
export interface StoredKey {
  id: string
  /** Raw 32-byte public key, base64. */
  public_key: string
  /** PKCS #8 DER, base64: only ever in the settings row (and exports, which hold the site secret too). */
  private_key: string
  created_at: string
  /** Set when a newer key replaced this one: the end of its grace period. */
  expires_at: string | null
  endorsement: { by: string; previous_expires_at: string; sig: string } | null
}

export interface StoredKeys {
  version: 1
  /** Oldest first; the last is current. */
  keys: StoredKey[]
}

export function keyIdOf(publicKeyBase64: string): string {
  return createHash('sha256').update(Buffer.from(publicKeyBase64, 'base64')).digest('hex').slice(0, 16)
}

export function newKey(createdAt: string): StoredKey {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519')
  // The JWK form of an Ed25519 public key is its raw 32 bytes (base64url).
  const raw = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url').toString('base64')
  return {
    id: keyIdOf(raw),
    public_key: raw,
    private_key: privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64'),
    created_at: createdAt,
    expires_at: null,
    endorsement: null,
  }
}

export function privateKeyOf(key: StoredKey): KeyObject {
  return createPrivateKey({ key: Buffer.from(key.private_key, 'base64'), format: 'der', type: 'pkcs8' })
}

/** What the previous key signs for its successor: the lines the protocol document lists. */
export function endorsementStatement(key: Pick<StoredKey, 'id' | 'public_key'>, by: string, previousExpiresAt: string): Buffer {
  return Buffer.from([ENDORSEMENT_PREFIX, key.id, key.public_key, by, previousExpiresAt].join('\n'), 'utf8')
}

/** `successor`, endorsed by `previous` (the current key until now), which stays valid until `previousExpiresAt`. */
export function endorse(successor: StoredKey, previous: StoredKey, previousExpiresAt: string): StoredKey {
  const sig = sign(null, endorsementStatement(successor, previous.id, previousExpiresAt), privateKeyOf(previous)).toString('base64')
  return { ...successor, endorsement: { by: previous.id, previous_expires_at: previousExpiresAt, sig } }
}

/** The stored document, checked enough that a hand-edited or damaged row fails with a clear message at start. */
export function parseStoredKeys(text: string): StoredKeys {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    throw new Error('the stored signing keys (settings row signing_keys) are not valid JSON')
  }
  const keys = (parsed as Partial<StoredKeys> | null)?.keys
  if (!Array.isArray(keys) || keys.length === 0 || !keys.every((k) => typeof k?.id === 'string' && typeof k.private_key === 'string' && typeof k.public_key === 'string')) {
    throw new Error('the stored signing keys (settings row signing_keys) hold no usable key')
  }
  return { version: 1, keys }
}

/** The public view at `now`: newest first, private keys left out. */
export function publicKeys(stored: StoredKeys, now: number): SigningKeyBody[] {
  const current = stored.keys.length - 1
  return stored.keys.map((key, index): SigningKeyBody => ({
    id: key.id,
    algorithm: 'ed25519',
    public_key: key.public_key,
    created_at: key.created_at,
    status: index === current ? 'current' : key.expires_at !== null && Date.parse(key.expires_at) > now ? 'previous' : 'retired',
    expires_at: index === current ? null : key.expires_at,
    endorsement: key.endorsement,
  })).reverse()
}
