// A small Packs site of the packs-sync tests' own, on a loopback port: the
// three routes packs-sync speaks (the key list, the by-hash batch, the
// downloads), signed as docs/update-protocol.md says (RFC 9421 with
// Content-Digest, and the legacy Packs-Signature beside it, as a real site
// sends both), written here apart from the client's code so one
// misunderstanding of the protocol cannot hide in both. Each test then bends
// one thing a hostile or broken site could do: sign an old answer, answer
// another question, name another pack, stream without end, write escape
// sequences.
import { createHash, generateKeyPairSync, sign, type KeyObject } from 'node:crypto'
import http from 'node:http'

export interface FakeKey {
  id: string
  public_key: string
  private: KeyObject
  created_at: string
  expires_at: string | null
  endorsement: { by: string; previous_expires_at: string; sig: string } | null
}

export function makeKey(): FakeKey {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519')
  const raw = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url')
  return {
    id: createHash('sha256').update(raw).digest('hex').slice(0, 16),
    public_key: raw.toString('base64'),
    private: privateKey,
    created_at: new Date().toISOString(),
    expires_at: null,
    endorsement: null,
  }
}

export interface FakeArchive {
  namespace: string
  pack_id: string
  version: string
  created_at: string
  bytes: Buffer
}

/** How the next answers are signed; each field bends one thing. */
export interface Signing {
  /** Seconds added to now for `created` (negative: an old answer). */
  createdOffset: number
  ttl: number
  /** Sign a batch answer as if the request had been this one (another question). */
  query?: string
  requestDigest?: string
  /** Leave `"content-digest";req` out of a batch answer's signature. */
  omitRequestDigest: boolean
  /** The key that signs batch answers (default: the newest; the key list is always signed by the newest). */
  keyId?: string
}

export const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex')

export class FakeSite {
  keys: FakeKey[] = [makeKey()]
  /** sha256 hex of an installed archive: what it is, and the newest archive of its pack (or null). */
  readonly archives = new Map<string, { archive: FakeArchive; latest: FakeArchive | null }>()
  readonly files = new Map<string, Buffer>()
  signing: Signing = { createdOffset: 0, ttl: 3600, omitRequestDigest: false }
  /** Changes a signed batch answer's body after it was signed (on the way to the client). */
  tamper: ((body: Buffer) => Buffer) | undefined
  /** A route of a test's own, tried first: return true when it answered. */
  override: ((req: http.IncomingMessage, res: http.ServerResponse, body: Buffer) => boolean) | undefined
  readonly servers: http.Server[] = []
  readonly requests: string[] = []

  constructor(readonly password: string) {}

  /** Listens on one more loopback port (a site reachable, or moved, under another URL); returns its URL. */
  async listen(): Promise<string> {
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (chunk: Buffer) => chunks.push(chunk))
      req.on('end', () => this.handle(req, res, Buffer.concat(chunks)))
    })
    this.servers.push(server)
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()))
    return `http://127.0.0.1:${(server.address() as { port: number }).port}`
  }

  close(): void {
    for (const server of this.servers) {
      server.closeAllConnections()
      server.close()
    }
  }

  /** Adds a pack's installed archive and, unless null, its newest archive (served under /files/). */
  publish(installed: FakeArchive, latest: FakeArchive | null): void {
    this.archives.set(sha256(installed.bytes), { archive: installed, latest })
    if (latest) this.files.set(sha256(latest.bytes), latest.bytes)
  }

  /** The site rotates: a new key endorsed by the current one, which expires `graceSeconds` from now (0: at once). */
  rotate(graceSeconds: number): FakeKey {
    const previous = this.keys[this.keys.length - 1]!
    const previousExpiresAt = new Date(Date.now() + graceSeconds * 1000).toISOString()
    const next = makeKey()
    const statement = ['packs-signing-key-v1', next.id, next.public_key, previous.id, previousExpiresAt].join('\n')
    next.endorsement = { by: previous.id, previous_expires_at: previousExpiresAt, sig: sign(null, Buffer.from(statement), previous.private).toString('base64') }
    previous.expires_at = previousExpiresAt
    this.keys.push(next)
    return next
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse, body: Buffer): void {
    this.requests.push(`${req.method} ${req.url}`)
    if (this.override?.(req, res, body)) return
    if (req.headers['x-master-password'] !== this.password) return json(res, 401, { detail: 'the site password is missing or wrong' })
    const url = new URL(req.url!, 'http://site')
    const origin = `http://${req.headers.host}`
    if (req.method === 'GET' && url.pathname === '/api/update-check/keys/') {
      const now = Date.now()
      const keys = [...this.keys].reverse().map((key, index) => ({
        id: key.id, algorithm: 'ed25519', public_key: key.public_key, created_at: key.created_at,
        status: index === 0 ? 'current' : key.expires_at !== null && Date.parse(key.expires_at) > now ? 'previous' : 'retired',
        expires_at: index === 0 ? null : key.expires_at, endorsement: key.endorsement,
      }))
      return this.signed(req, res, 200, Buffer.from(JSON.stringify({ keys })))
    }
    if (req.method === 'POST' && url.pathname === '/api/update-check/by-hash/') {
      const asked = JSON.parse(body.toString('utf8')) as { hashes: string[] }
      const answer: Record<string, unknown> = {}
      for (const hash of asked.hashes) {
        const found = this.archives.get(hash)
        answer[hash] = found === undefined ? null : {
          hash, algorithm: 'sha256', namespace: found.archive.namespace, pack_id: found.archive.pack_id,
          version: { name: found.archive.version, created_at: found.archive.created_at, sha256: hash, size: found.archive.bytes.length },
          latest: found.latest === null ? null : {
            namespace: found.latest.namespace, pack_id: found.latest.pack_id, version: found.latest.version, created_at: found.latest.created_at,
            download_url: `${origin}/files/${sha256(found.latest.bytes)}`, size: found.latest.bytes.length, sha256: sha256(found.latest.bytes),
            filename: `${found.latest.pack_id}-${found.latest.version}.zip`,
          },
        }
      }
      return this.signed(req, res, 200, Buffer.from(JSON.stringify({ hashes: answer })))
    }
    const file = url.pathname.startsWith('/files/') ? this.files.get(url.pathname.slice('/files/'.length)) : undefined
    if (req.method === 'GET' && file) {
      res.writeHead(200, { 'content-type': 'application/zip', 'content-length': String(file.length) })
      return void res.end(file)
    }
    json(res, 404, { detail: 'not found' })
  }

  /** Answers with the RFC 9421 signature of the protocol (bent as `signing` says) and the legacy header. */
  signed(req: http.IncomingMessage, res: http.ServerResponse, status: number, body: Buffer): void {
    const url = new URL(req.url!, 'http://site')
    const bent = req.method === 'POST' ? this.signing : { omitRequestDigest: false, keyId: undefined, query: undefined, requestDigest: undefined }
    const key = this.keys.find((k) => k.id === bent.keyId) ?? this.keys[this.keys.length - 1]!
    const digest = `sha-256=:${createHash('sha256').update(body).digest('base64')}:`
    const requestDigest = bent.requestDigest ?? (req.headers['content-digest'] as string | undefined)
    const components: [string, string][] = [
      ['"@status"', String(status)],
      ['"content-digest"', digest],
      ['"@method";req', req.method!],
      ['"@path";req', url.pathname],
      ['"@query";req', bent.query ?? (url.search === '' ? '?' : url.search)],
    ]
    if (requestDigest !== undefined && !bent.omitRequestDigest) components.push(['"content-digest";req', requestDigest])
    const created = Math.floor(Date.now() / 1000) + this.signing.createdOffset
    const params = `(${components.map(([name]) => name).join(' ')});created=${created};expires=${created + this.signing.ttl};keyid="${key.id}";alg="ed25519";tag="packs-update"`
    const base = [...components.map(([name, value]) => `${name}: ${value}`), `"@signature-params": ${params}`].join('\n')
    const sent = req.method === 'POST' && this.tamper ? this.tamper(body) : body
    res.writeHead(status, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': String(sent.length),
      'content-digest': digest,
      'signature-input': `packs=${params}`,
      signature: `packs=:${sign(null, Buffer.from(base), key.private).toString('base64')}:`,
      'packs-signature': `keyid="${key.id}", sig=:${sign(null, body, key.private).toString('base64')}:`,
    })
    res.end(sent)
  }
}

export function json(res: http.ServerResponse, status: number, value: unknown): void {
  const body = Buffer.from(JSON.stringify(value))
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': String(body.length) })
  res.end(body)
}
