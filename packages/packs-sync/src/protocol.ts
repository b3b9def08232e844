// The Packs update protocol as a client sees it (docs/update-protocol.md at
// the repository's root): signed answers, the keys document, and following
// the endorsements from a pinned key to a rotated one. HTTP and node:crypto
// only; nothing from the server.
import { createHash, createPublicKey, verify } from 'node:crypto'

export class SyncError extends Error {}

export interface PinnedKey {
  id: string
  public_key: string
}

interface SiteKey extends PinnedKey {
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

const SIGNATURE = /^keyid="([0-9a-f]{16})", sig=:([A-Za-z0-9+/]+={0,2}):$/

function publicKeyOf(key: PinnedKey) {
  const raw = Buffer.from(key.public_key, 'base64')
  if (raw.length !== 32) throw new SyncError(`the site's key ${key.id} is not an Ed25519 key`)
  if (createHash('sha256').update(raw).digest('hex').slice(0, 16) !== key.id) throw new SyncError(`the site's key ${key.id} does not match its id`)
  return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: raw.toString('base64url') }, format: 'jwk' })
}

export class Site {
  constructor(readonly base: string, private readonly password: string) {}

  headers(extra: Record<string, string> = {}): Record<string, string> {
    return { 'x-master-password': this.password, 'user-agent': 'packs-sync/1.0.0', ...extra }
  }

  async request(path: string, init: { method?: string; body?: string } = {}): Promise<Response> {
    try {
      return await fetch(new URL(path, this.base), {
        method: init.method ?? 'GET',
        headers: this.headers(init.body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(init.body === undefined ? {} : { body: init.body }),
        signal: AbortSignal.timeout(30_000),
      })
    } catch (error) {
      throw new SyncError(`cannot reach ${this.base}: ${reason(error)}`)
    }
  }

  async keys(): Promise<SiteKey[]> {
    const res = await this.request('/api/update-check/keys/')
    if (res.status !== 200) throw new SyncError(`the site's keys: ${await describe(res)}`)
    const body = (await res.json()) as { keys?: SiteKey[] }
    if (!Array.isArray(body.keys)) throw new SyncError('the site\'s keys document is malformed')
    return body.keys
  }
}

/**
 * Checks the answer's signature over its exact bytes before anything reads
 * them. `pin` is the key trusted so far (undefined on first use: the key is
 * pinned). A key that is not the pinned one is accepted only when a chain of
 * endorsements leads to it from the pinned key, or when `trustNewKey` says a
 * person decided so. Returns the key to pin from now on.
 */
export async function verifyAnswer(site: Site, body: Buffer, header: string | null, pin: PinnedKey | undefined, trustNewKey: boolean): Promise<PinnedKey> {
  const match = header === null ? null : SIGNATURE.exec(header)
  if (!match) throw new SyncError('the site\'s answer is not signed (no valid Packs-Signature header)')
  const [, keyId, sig] = match as unknown as [string, string, string]
  let key: PinnedKey | undefined = pin?.id === keyId ? pin : undefined
  if (key === undefined) {
    const keys = await site.keys()
    const named = keys.find((k) => k.id === keyId)
    if (!named) throw new SyncError(`the answer is signed by key ${keyId}, which the site does not publish`)
    if (named.expires_at !== null && Date.parse(named.expires_at) <= Date.now()) throw new SyncError(`the answer is signed by key ${keyId}, which expired at ${named.expires_at}`)
    if (pin !== undefined && !trustNewKey && !endorsedFrom(pin, named, keys)) {
      throw new SyncError(`the site's signing key changed from ${pin.id} to ${keyId} without the old key vouching for it; `
        + 'if you know why (the site was restored without its keys), run again with --trust-new-key')
    }
    key = { id: named.id, public_key: named.public_key }
  }
  if (!verify(null, body, publicKeyOf(key), Buffer.from(sig, 'base64'))) throw new SyncError(`the site's answer does not match its signature (key ${keyId})`)
  return key
}

/** Whether `target` is reachable from `pin` by endorsements, each signed by the key before it. */
function endorsedFrom(pin: PinnedKey, target: SiteKey, keys: SiteKey[]): boolean {
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

export async function describe(res: Response): Promise<string> {
  const text = await res.text().catch(() => '')
  try {
    const detail = (JSON.parse(text) as { detail?: unknown }).detail
    if (typeof detail === 'string') return `${res.status} ${detail}`
  } catch {
    // not JSON
  }
  return `HTTP ${res.status}`
}

export function reason(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } })?.cause
  return cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error))
}
