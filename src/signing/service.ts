// Signing update-check answers (docs/update-protocol.md, "Signatures").
// Every 200 answer of the update-check, its batch, its by-hash lookups and the
// key list carries an RFC 9421 HTTP Message Signature (./message-signature.ts):
// Ed25519 over the body's digest, the question asked and the time, valid for
// PACKS_SIGNATURE_TTL; and, for clients written before it, the legacy
// `Packs-Signature: keyid="…", sig=:…:` over the body bytes alone.
//
// The key is made on first start and kept in the settings table like the
// site secret. `npx packs signing-key rotate` writes a new one from another
// process; a running instance re-reads the keys at most every
// RELOAD_INTERVAL_MS (triggered by the requests themselves, so nothing runs
// while the site is idle), and until then signs with the previous key, which
// stays valid for the grace period.
import { sign, type KeyObject } from 'node:crypto'
import type { Db } from '../db/index.js'
import { nowIso } from '../db/time.js'
import { Conflict, BadRequest } from '../errors.js'
import type { SigningKeyBody } from '../api/signing.js'
import { endorse, newKey, parseStoredKeys, privateKeyOf, publicKeys, type StoredKeys } from './keys.js'
import { SIGNATURE_LABEL, contentDigestOf, signatureBase, signatureParams, type AnsweredRequest, type MessageSignature } from './message-signature.js'
import { createSigningKeys, readSigningKeys, replaceSigningKeys } from './repository.js'
import { CLI_ACTOR, recordAudit, siteTarget } from '../audit/service.js'

/** How stale an instance's copy of the keys may be: a rotation reaches every instance within this. */
export const RELOAD_INTERVAL_MS = 5_000
/** How long the previous key stays valid after a rotation, unless the rotation says otherwise. */
export const DEFAULT_GRACE_DAYS = 7
export const MAX_GRACE_DAYS = 365
/** How long a signed answer may be trusted unless PACKS_SIGNATURE_TTL says otherwise. */
export const DEFAULT_SIGNATURE_TTL_MS = 3_600_000

/** A cached answer remembers its signature and the key that made it, so it is signed once per key, not per request. */
export interface Signable {
  body: string
  signature?: string
  signedBy?: string
  /** The body's Content-Digest, computed once. */
  digest?: string
  /** Its last RFC 9421 signature, and the request line and key it was made for (headersFor). */
  message?: { for: string; keyId: string; value: MessageSignature }
}

export class Signer {
  private stored: StoredKeys
  private current: { id: string; key: KeyObject }
  private loadedAt: number
  private reloading: Promise<void> | undefined

  /** How many RFC 9421 signatures this instance has made: tests see that cached answers are not signed per request. */
  signaturesMade = 0

  private constructor(
    private readonly db: Db,
    private readonly clock: () => number,
    text: string,
    private readonly onReloadError: (error: unknown) => void,
    /** A signature's lifetime (PACKS_SIGNATURE_TTL), in seconds. */
    readonly ttlSeconds: number,
  ) {
    this.stored = parseStoredKeys(text)
    this.current = currentOf(this.stored)
    this.loadedAt = clock()
  }

  /** Reads the site's keys, making the first one when there is none (first start; instances racing agree on one). */
  static async open(db: Db, clock: () => number, onReloadError: (error: unknown) => void = () => {}, ttlMs: number = DEFAULT_SIGNATURE_TTL_MS): Promise<Signer> {
    const text = (await readSigningKeys(db)) ?? (await createSigningKeys(db, JSON.stringify(firstKeys(clock()))))
    return new Signer(db, clock, text, onReloadError, Math.floor(ttlMs / 1000))
  }

  get keyId(): string {
    this.reloadIfStale()
    return this.current.id
  }

  /** The header value for these exact bytes. */
  header(body: string): string {
    this.reloadIfStale()
    return headerValue(this.current.id, sign(null, Buffer.from(body, 'utf8'), this.current.key))
  }

  /** The header value for a cached answer: computed once per answer and key. */
  headerFor(answer: Signable): string {
    const keyId = this.keyId
    if (answer.signedBy !== keyId || answer.signature === undefined) {
      answer.signature = headerValue(keyId, sign(null, Buffer.from(answer.body, 'utf8'), this.current.key))
      answer.signedBy = keyId
    }
    return answer.signature
  }

  /**
   * The RFC 9421 fields (Content-Digest, Signature-Input, Signature) of a 200
   * with these exact body bytes, answering `request`: signed now, valid for
   * the TTL.
   */
  messageSignature(request: AnsweredRequest, body: string, digest: string = contentDigestOf(body)): MessageSignature {
    const keyId = this.keyId
    const created = Math.floor(this.clock() / 1000)
    const params = signatureParams(request, created, created + this.ttlSeconds, keyId)
    const signature = sign(null, Buffer.from(signatureBase(request, digest, params), 'utf8'), this.current.key)
    this.signaturesMade++
    return {
      contentDigest: digest,
      signatureInput: `${SIGNATURE_LABEL}=${params}`,
      signature: `${SIGNATURE_LABEL}=:${signature.toString('base64')}:`,
      created,
    }
  }

  /**
   * The RFC 9421 fields for a cached answer: the signature it already carries
   * while the same key signs, the request line is the same, and at least half
   * of its lifetime is left; else a new one, kept for the next request. So
   * every player asking for the same pack shares one signature per half TTL,
   * and every signature a client gets is valid for at least half the TTL.
   */
  messageSignatureFor(answer: Signable, request: AnsweredRequest): MessageSignature {
    const keyId = this.keyId
    const line = `${request.method} ${request.path}?${request.query}`
    const cached = answer.message
    if (cached !== undefined && cached.keyId === keyId && cached.for === line
      && Math.floor(this.clock() / 1000) < cached.value.created + Math.floor(this.ttlSeconds / 2)) return cached.value
    answer.digest ??= contentDigestOf(answer.body)
    const value = this.messageSignature(request, answer.body, answer.digest)
    answer.message = { for: line, keyId, value }
    return value
  }

  /** The public keys as GET /api/update-check/keys/ lists them. */
  publicKeys(): SigningKeyBody[] {
    this.reloadIfStale()
    return publicKeys(this.stored, this.clock())
  }

  /** Re-reads the keys now (after a rotation in this process, and in tests). */
  async reload(): Promise<void> {
    const text = await readSigningKeys(this.db)
    if (text === undefined) return // an import is replacing the settings; keep signing with what we have
    this.stored = parseStoredKeys(text)
    this.current = currentOf(this.stored)
    this.loadedAt = this.clock()
  }

  private reloadIfStale(): void {
    if (this.reloading !== undefined || this.clock() - this.loadedAt < RELOAD_INTERVAL_MS) return
    // Whatever happens, the next try waits a whole interval: a database that is down is not asked on every request.
    this.loadedAt = this.clock()
    this.reloading = this.reload().catch(this.onReloadError).finally(() => { this.reloading = undefined })
  }
}

function firstKeys(now: number): StoredKeys {
  return { version: 1, keys: [newKey(nowIso(now))] }
}

function currentOf(stored: StoredKeys): { id: string; key: KeyObject } {
  const key = stored.keys[stored.keys.length - 1]!
  return { id: key.id, key: privateKeyOf(key) }
}

/** A Structured Field dictionary (RFC 8941): keyid a string, sig a byte sequence. */
function headerValue(keyId: string, signature: Buffer): string {
  return `keyid="${keyId}", sig=:${signature.toString('base64')}:`
}

export interface Rotation {
  previous: string
  current: string
  previousExpiresAt: string
}

/**
 * Makes a new current key, endorsed by the one it replaces, which stays valid
 * for `graceDays`. Recorded in the audit log. Instances sign with the new key
 * within RELOAD_INTERVAL_MS.
 */
export async function rotateSigningKey(db: Db, graceDays: number = DEFAULT_GRACE_DAYS, now: number = Date.now()): Promise<Rotation> {
  if (!Number.isInteger(graceDays) || graceDays < 0 || graceDays > MAX_GRACE_DAYS) {
    throw new BadRequest(`the grace period must be a whole number of days from 0 to ${MAX_GRACE_DAYS}`)
  }
  return db.transaction().execute(async (trx) => {
    const text = (await readSigningKeys(trx)) ?? (await createSigningKeys(trx, JSON.stringify(firstKeys(now))))
    const stored = parseStoredKeys(text)
    const previous = stored.keys[stored.keys.length - 1]!
    const previousExpiresAt = nowIso(now + graceDays * 86_400_000)
    const successor = endorse(newKey(nowIso(now)), previous, previousExpiresAt)
    const keys = [...stored.keys.slice(0, -1), { ...previous, expires_at: previousExpiresAt }, successor]
    if (!(await replaceSigningKeys(trx, text, JSON.stringify({ version: 1, keys } satisfies StoredKeys)))) {
      throw new Conflict('another rotation of the signing key ran at the same time; run it again')
    }
    await recordAudit(trx, CLI_ACTOR, 'site.rotate-signing-key', siteTarget('signing-key'), {
      previous: previous.id, current: successor.id, previous_expires_at: previousExpiresAt,
    })
    return { previous: previous.id, current: successor.id, previousExpiresAt }
  })
}
