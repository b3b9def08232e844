// The Packs update protocol as a client sees it (docs/update-protocol.md at
// the repository's root): signed answers (src/signature.ts), the signed key
// list and following its endorsements from a pinned key to a rotated one,
// retired keys, and reading answers with a cap. HTTP and node:crypto only;
// nothing from the server.
import { createHash, createPublicKey, verify, type KeyObject } from 'node:crypto'
import { SignatureError, checkSignature, contentDigestOf, isoOf, verifyWith, type SentRequest, type SignatureParams } from './signature.js'

export class SyncError extends Error {}

/** The most a batch answer may take (200 archives' matches are far less): read as it arrives, never more. */
export const ANSWER_LIMIT = 16 * 1024 * 1024
/** The most the key list may take. */
export const KEYS_LIMIT = 1024 * 1024
/** The most of an error's body read to find its detail. */
const ERROR_LIMIT = 64 * 1024

export interface PinnedKey {
  id: string
  public_key: string
}

export interface SiteKey extends PinnedKey {
  algorithm: string
  status: string
  expires_at: string | null
  endorsement: { by: string; previous_expires_at: string; sig: string } | null
}

export interface PackLatest {
  namespace: string
  pack_id: string
  version: string
  created_at: string
  download_url: string
  size: number
  sha256: string
  filename: string
}

export interface HashMatch {
  hash: string
  namespace: string
  pack_id: string
  version: { name: string; created_at: string; sha256: string; size: number }
  latest: PackLatest | null
}

export function publicKeyOf(key: PinnedKey): KeyObject {
  const raw = Buffer.from(key.public_key, 'base64')
  if (raw.length !== 32 || raw.toString('base64') !== key.public_key) throw new SyncError(`the site's key ${key.id} is not an Ed25519 key`)
  if (createHash('sha256').update(raw).digest('hex').slice(0, 16) !== key.id) throw new SyncError(`the site's key ${key.id} does not match its id`)
  return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: raw.toString('base64url') }, format: 'jwk' })
}

/** An answer read whole (within its cap), with the request it answers. */
export interface Answer {
  request: SentRequest
  status: number
  headers: Headers
  body: Buffer
}

export class Site {
  readonly base: string

  constructor(base: string, private readonly password: string) {
    this.base = normalizeSite(base)
  }

  headers(extra: Record<string, string> = {}): Record<string, string> {
    return { 'x-master-password': this.password, 'user-agent': 'packs-sync/1.1.0', ...extra }
  }

  /** Asks the site and reads its answer: a 200's body up to `limit` bytes, an error's up to 64 KiB for its detail. */
  async ask(path: string, limit: number, json?: string): Promise<Answer> {
    const url = new URL(path, this.base)
    const body = json === undefined ? undefined : Buffer.from(json, 'utf8')
    const request: SentRequest = { method: body === undefined ? 'GET' : 'POST', url, ...(body === undefined ? {} : { contentDigest: contentDigestOf(body) }) }
    let res: Response
    try {
      res = await fetch(url, {
        method: request.method,
        headers: this.headers(body === undefined ? {} : { 'content-type': 'application/json', 'content-digest': request.contentDigest! }),
        ...(body === undefined ? {} : { body }),
        redirect: 'error',
        signal: AbortSignal.timeout(60_000),
      })
    } catch (error) {
      throw new SyncError(`cannot reach ${this.base}: ${reason(error)}`)
    }
    if (res.status !== 200) {
      const text = (await readCapped(res, ERROR_LIMIT, 'an error', true)).toString('utf8')
      throw new SyncError(`the site refused ${request.method} ${url.pathname}: ${describe(res.status, text)}`)
    }
    return { request, status: res.status, headers: res.headers, body: await readCapped(res, limit, `the answer to ${request.method} ${url.pathname}`) }
  }
}

/** The site's URL as the lock keeps it: scheme, host, port and path, without a trailing slash. */
export function normalizeSite(site: string): string {
  const url = new URL(site)
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`
}

/**
 * Reads a body chunk by chunk, counting as bytes arrive: past `limit` it stops
 * reading (the connection is dropped) and fails, or, when `truncate`, keeps
 * what came so far. A declared Content-Length over the limit fails before
 * reading anything.
 */
export async function readCapped(res: Response, limit: number, what: string, truncate = false): Promise<Buffer> {
  const declared = Number(res.headers.get('content-length'))
  if (!truncate && Number.isFinite(declared) && declared > limit) {
    await res.body?.cancel().catch(() => {})
    throw new SyncError(`${what} is larger than packs-sync accepts (${declared} bytes, at most ${limit})`)
  }
  if (res.body === null) return Buffer.alloc(0)
  const reader = res.body.getReader()
  const chunks: Uint8Array[] = []
  let received = 0
  try {
    while (true) {
      const { done, value } = await reader.read()
      if (done) break
      if (received + value.length > limit) {
        await reader.cancel().catch(() => {})
        if (truncate) {
          chunks.push(value.subarray(0, limit - received))
          break
        }
        throw new SyncError(`${what} is larger than packs-sync accepts (more than ${limit} bytes): stopped reading`)
      }
      received += value.length
      chunks.push(value)
    }
  } catch (error) {
    if (error instanceof SyncError) throw error
    if (truncate) return Buffer.concat(chunks)
    throw new SyncError(`the site went away while sending ${what}: ${reason(error)}`)
  }
  return Buffer.concat(chunks)
}

/** Why the keys of this run are trusted: the pin, and every key an answer may be signed by. */
export interface Trust {
  pin: PinnedKey
  /** Keys the site lists, linked to the pin by endorsements and neither expired nor remembered as retired. */
  accepted: Map<string, KeyObject>
  /** Keys seen retired (id: when), this run and before. */
  retired: Record<string, string>
  /** What changed about the pin, for the player: "pinned …", "now trusting …", or nothing. */
  change: string | undefined
}

/**
 * Reads and verifies GET /api/update-check/keys/ (signed like every answer,
 * by a key it lists) and decides which keys this run accepts. `pin` is the
 * key trusted so far (none on first use: the list's signer is pinned). A
 * signer other than the pin is accepted only when a chain of endorsements
 * leads to it from the pin, or when `trustNewKey` says a person decided so.
 * A key past its expires_at, or once seen so (`retired`, from the lock), is
 * never accepted, the pinned one included.
 */
export async function establishTrust(site: Site, pin: PinnedKey | null, retired: Record<string, string>, trustNewKey: boolean, nowMs: number): Promise<Trust> {
  const answer = await site.ask('/api/update-check/keys/', KEYS_LIMIT)
  const params = signatureOf(answer, 'the site\'s key list', nowMs)
  const keys = parseKeys(answer.body)
  const seenRetired = { ...retired }
  for (const key of keys) {
    if (key.expires_at !== null && Date.parse(key.expires_at) <= nowMs && seenRetired[key.id] === undefined) seenRetired[key.id] = key.expires_at
  }
  const signer = keys.find((key) => key.id === params.keyId)
  if (!signer) throw new SyncError(`the site's key list is signed by key ${params.keyId}, which it does not list`)
  refuseRetired(signer.id, seenRetired, 'the site\'s key list')
  if (!verifyWith(params, publicKeyOf(signer))) throw new SyncError(`the site's key list does not match its signature (key ${signer.id})`)

  let next: PinnedKey = { id: signer.id, public_key: signer.public_key }
  let change: string | undefined
  if (pin === null) {
    change = `pinned the site's signing key ${signer.id}`
  } else if (pin.id === signer.id) {
    next = pin
  } else if (endorsedFrom(pin, signer, keys)) {
    change = `now trusting the site's signing key ${signer.id} (endorsed by the pinned ${pin.id})`
  } else if (trustNewKey) {
    change = `now trusting the site's signing key ${signer.id} (--trust-new-key; it replaces ${pin.id})`
  } else {
    throw new SyncError(`the site's signing key changed from ${pin.id} to ${signer.id} without the old key vouching for it; `
      + 'if you know why (the site was restored without its keys), run again with --trust-new-key')
  }

  const accepted = new Map<string, KeyObject>()
  for (const key of keys) {
    if (seenRetired[key.id] !== undefined) continue
    if (key.id === next.id || endorsedFrom(next, key, keys) || endorsedFrom(key, next, keys)) accepted.set(key.id, publicKeyOf(key))
  }
  return { pin: next, accepted, retired: seenRetired, change }
}

/** Syntax, question and freshness of an answer's signature (not yet which key made it). */
export function signatureOf(answer: Answer, what: string, nowMs: number): SignatureParams {
  try {
    return checkSignature(answer.request, answer.status, answer.headers, answer.body, Math.floor(nowMs / 1000))
  } catch (error) {
    if (error instanceof SignatureError) throw new SyncError(error.message.replace('the site\'s answer', what))
    throw error
  }
}

function refuseRetired(keyId: string, retired: Record<string, string>, what: string): void {
  const at = retired[keyId]
  if (at !== undefined) throw new SyncError(`${what} is signed by key ${keyId}, which was retired at ${at}: refused`)
}

/** Checks a verified-syntax answer against the keys this run trusts. */
export function verifyAnswer(params: SignatureParams, trust: Trust, what: string): void {
  refuseRetired(params.keyId, trust.retired, what)
  const key = trust.accepted.get(params.keyId)
  if (key === undefined) throw new SyncError(`${what} is signed by key ${params.keyId}, which the site's key list does not vouch for`)
  if (!verifyWith(params, key)) throw new SyncError(`${what} does not match its signature (key ${params.keyId}): changed on the way, or an answer to another question`)
}

function parseKeys(body: Buffer): SiteKey[] {
  let keys: unknown
  try {
    keys = (JSON.parse(body.toString('utf8')) as { keys?: unknown }).keys
  } catch {
    throw new SyncError('the site\'s key list is not JSON')
  }
  const valid = (key: SiteKey) => typeof key === 'object' && key !== null && typeof key.id === 'string' && /^[0-9a-f]{16}$/.test(key.id)
    && typeof key.public_key === 'string' && (key.expires_at === null || (typeof key.expires_at === 'string' && !Number.isNaN(Date.parse(key.expires_at))))
    && (key.endorsement === null || (typeof key.endorsement === 'object' && typeof key.endorsement.by === 'string'
      && typeof key.endorsement.previous_expires_at === 'string' && typeof key.endorsement.sig === 'string'))
  if (!Array.isArray(keys) || keys.length > 1000 || !keys.every(valid)) throw new SyncError('the site\'s key list is malformed')
  return keys as SiteKey[]
}

/** Whether `target` is reachable from `pin` by endorsements, each signed by the key before it. */
function endorsedFrom(pin: PinnedKey, target: PinnedKey, keys: SiteKey[]): boolean {
  let trusted = pin
  // Oldest to newest, following whom each key names as its endorser; at most one step per listed key.
  for (let step = 0; step < keys.length; step++) {
    const next = keys.find((k) => k.endorsement?.by === trusted.id)
    if (!next?.endorsement) return false
    const statement = ['packs-signing-key-v1', next.id, next.public_key, next.endorsement.by, next.endorsement.previous_expires_at].join('\n')
    if (!verify(null, Buffer.from(statement), publicKeyOf(trusted), Buffer.from(next.endorsement.sig, 'base64'))) return false
    if (next.id === target.id) return true
    trusted = next
  }
  return false
}

export { isoOf }

/** "<status> <detail>" from an error's JSON body, else "HTTP <status>". */
export function describe(status: number, text: string): string {
  try {
    const detail = (JSON.parse(text) as { detail?: unknown }).detail
    if (typeof detail === 'string') return `${status} ${detail}`
  } catch {
    // not JSON
  }
  return `HTTP ${status}`
}

export function reason(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } })?.cause
  return cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error))
}

/**
 * Text for the player's terminal: every control character (C0, DEL, C1), the
 * Unicode bidirectional controls and the line and paragraph separators are
 * shown as \u{…}, so text from a site (a version name, a detail, a file name)
 * cannot move the cursor, recolour or retitle the terminal, or reorder a line.
 */
export function shown(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g, (c) => `\\u{${c.codePointAt(0)!.toString(16)}}`)
}
