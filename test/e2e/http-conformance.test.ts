// The hot path on the wire, read byte by byte from a raw socket as a strict
// HTTP/1.1 client reads it (RFC 9110 / 9112): the update-check and file
// serving, each with 200, 304, HEAD and (files) 206 / 416. What fetch hides is
// checked here: a Content-Length on a 304 that no body follows (wrk waited for
// those 4 bytes forever), body bytes after a HEAD or a 304, and whether the
// next request on the same keep-alive connection still parses. On each
// backend combination (SQLite + disk; PostgreSQL + S3 + Redis, where the
// update-check answer comes through the Redis cache). Each test has a
// connection of its own, so they run side by side.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import net from 'node:net'
import { datapack, pixelPng } from '../helpers/fixtures.js'
import { cliOk, lastLine, startServer, suiteBackends, type RunningServer, type SuiteBackends } from '../helpers/server.js'

const SITE_PASSWORD = 'conformance-site-password'

interface RawResponse {
  status: number
  /** Lower-case names; every value a header had, in order. */
  headers: Map<string, string[]>
  body: Buffer
}

function header(res: RawResponse, name: string): string | undefined {
  const values = res.headers.get(name)
  if (values === undefined) return undefined
  assert.equal(values.length, 1, `one ${name} header, not ${JSON.stringify(values)}`)
  return values[0]
}

/**
 * One keep-alive connection and a strict reader of its responses: the body's
 * length comes from the status and the request method first (no body for
 * HEAD, 1xx, 204, 304: RFC 9112 §6.3), then Transfer-Encoding, then
 * Content-Length. Bytes left over are what the next response must start with.
 */
class RawConnection {
  private buffer = Buffer.alloc(0)
  private ended = false
  private wake: (() => void) | null = null

  private constructor(private readonly socket: net.Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk])
      this.wake?.()
    })
    socket.on('end', () => {
      this.ended = true
      this.wake?.()
    })
    socket.on('error', () => {
      this.ended = true
      this.wake?.()
    })
  }

  static open(port: number): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1', () => resolve(new RawConnection(socket)))
      socket.once('error', reject)
    })
  }

  close(): void {
    this.socket.destroy()
  }

  write(text: string): void {
    this.socket.write(text)
  }

  /** Sends one request (a full head, CRLFs included) and reads its response. */
  async exchange(request: string): Promise<RawResponse> {
    this.write(request)
    return this.read(request.slice(0, request.indexOf(' ')))
  }

  /** Waits until `ready()` holds; fails after `ms` (a client that would hang). */
  private async until(ready: () => boolean, what: string, ms = 5000): Promise<void> {
    const deadline = Date.now() + ms
    while (!ready()) {
      if (this.ended) throw new Error(`connection closed while waiting for ${what}; got ${JSON.stringify(this.buffer.toString('latin1'))}`)
      const left = deadline - Date.now()
      if (left <= 0) throw new Error(`no ${what} within ${ms} ms; got ${JSON.stringify(this.buffer.toString('latin1'))}`)
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left)
        this.wake = () => {
          clearTimeout(timer)
          resolve()
        }
      })
      this.wake = null
    }
  }

  /** Reads one response to a request made with `method`. */
  async read(method: string): Promise<RawResponse> {
    await this.until(() => this.buffer.includes('\r\n\r\n'), 'response head')
    const headEnd = this.buffer.indexOf('\r\n\r\n')
    const lines = this.buffer.subarray(0, headEnd).toString('latin1').split('\r\n')
    this.buffer = this.buffer.subarray(headEnd + 4)
    const statusLine = /^HTTP\/1\.1 (\d{3}) /.exec(lines[0]!)
    assert.ok(statusLine, `a status line first: ${JSON.stringify(lines[0])}`)
    const status = Number(statusLine[1])
    const headers = new Map<string, string[]>()
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':')
      assert.ok(colon > 0, `a header line: ${JSON.stringify(line)}`)
      const name = line.slice(0, colon).toLowerCase()
      headers.set(name, [...(headers.get(name) ?? []), line.slice(colon + 1).trim()])
    }
    const res: RawResponse = { status, headers, body: Buffer.alloc(0) as Buffer }
    if (method === 'HEAD' || status === 304 || status === 204 || status < 200) return res

    const transferEncoding = header(res, 'transfer-encoding')
    if (transferEncoding !== undefined) {
      assert.equal(transferEncoding, 'chunked')
      assert.equal(res.headers.get('content-length'), undefined, 'no Content-Length beside Transfer-Encoding')
      const chunks: Buffer[] = []
      while (true) {
        await this.until(() => this.buffer.includes('\r\n'), 'chunk size')
        const lineEnd = this.buffer.indexOf('\r\n')
        const size = parseInt(this.buffer.subarray(0, lineEnd).toString('latin1'), 16)
        await this.until(() => this.buffer.length >= lineEnd + 2 + size + 2, 'chunk')
        chunks.push(this.buffer.subarray(lineEnd + 2, lineEnd + 2 + size))
        this.buffer = this.buffer.subarray(lineEnd + 2 + size + 2)
        if (size === 0) break
      }
      res.body = Buffer.concat(chunks)
      return res
    }
    const length = header(res, 'content-length')
    assert.ok(length !== undefined && /^\d+$/.test(length), `a ${status} with a body says how long it is: ${length}`)
    const bytes = Number(length)
    await this.until(() => this.buffer.length >= bytes, `${bytes} body bytes`)
    res.body = this.buffer.subarray(0, bytes)
    this.buffer = this.buffer.subarray(bytes)
    return res
  }

  /** Whatever arrived beyond the responses read so far, after a short wait: bytes no header announced. */
  async leftover(ms = 150): Promise<Buffer> {
    await new Promise((resolve) => setTimeout(resolve, ms))
    return this.buffer
  }
}

describe('HTTP conformance of the update-check and file serving (raw socket)', { timeout: 120_000, concurrency: true }, () => {
  let backends: SuiteBackends
  let server: RunningServer
  let latestPath = ''
  let filePath = ''
  let latestBody: Buffer = Buffer.alloc(0)
  let latestEtag = ''
  let fileEtag = ''
  // Every byte differs from its neighbours, so an off-by-one range shows.
  const image = pixelPng(40, 40, (x, y) => [(x * 7 + y) % 256, (y * 13 + x) % 256, (x * y) % 256])

  const request = (method: string, path: string, extra: Record<string, string> = {}): string => {
    const lines = [`${method} ${path} HTTP/1.1`, `Host: 127.0.0.1:${server.port}`, `X-Master-Password: ${SITE_PASSWORD}`]
    for (const [name, value] of Object.entries(extra)) lines.push(`${name}: ${value}`)
    return `${lines.join('\r\n')}\r\n\r\n`
  }

  before(async () => {
    backends = await suiteBackends()
    server = await startServer({ env: { PACKS_MASTER_PASSWORD: SITE_PASSWORD, ...backends.env } })
    // Seeded as an author would: the CLI for the account, HTTP for the rest.
    await cliOk(['user', 'create', 'wire', '--password', 'wire-password-1'], server.env)
    const token = lastLine((await cliOk(['token', 'create', 'wire'], server.env)).stdout)
    const auth = { 'x-master-password': SITE_PASSWORD, authorization: `Bearer wire ${token}` }
    const draft = randomUUID()
    const upload = async (kind: string, bytes: Buffer): Promise<{ url: string }> => {
      const form = new FormData()
      form.set('kind', kind)
      form.set('draft_uuid', draft)
      form.set('file', new Blob([new Uint8Array(bytes)]), `${kind}.bin`)
      const res = await fetch(`${server.url}/api/uploads/`, { method: 'POST', headers: auth, body: form })
      assert.equal(res.status, 200, await res.clone().text())
      return (await res.json()) as { url: string }
    }
    filePath = new URL((await upload('thumbnail', image)).url, server.url).pathname
    await upload('version', await datapack(48))
    const saved = await fetch(`${server.url}/api/draft/`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ draft, data: { title: 'Wire Pack', version_name: '1.0.0' } }),
    })
    assert.equal(saved.status, 200, await saved.text())
    const published = await fetch(`${server.url}/api/draft/publish/`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ draft }),
    })
    const pack = (await published.json()) as { namespace: string; pack_id: string }
    assert.equal(published.status, 201)
    latestPath = `/api/packs/${pack.namespace}/${pack.pack_id}/latest`
    // What the tests compare against, as fetch reads it; each test then reads the wire itself.
    const latest = await fetch(`${server.url}${latestPath}`, { headers: { 'x-master-password': SITE_PASSWORD } })
    latestBody = Buffer.from(await latest.arrayBuffer())
    latestEtag = latest.headers.get('etag') ?? ''
    const file = await fetch(`${server.url}${filePath}`, { headers: { 'x-master-password': SITE_PASSWORD } })
    assert.ok(Buffer.from(await file.arrayBuffer()).equals(image))
    fileEtag = file.headers.get('etag') ?? ''
  })

  after(async () => {
    await server?.stop()
    await backends?.release()
  })

  test('update-check: 200 says its exact length; 304 has no body and no Content-Length, and the connection goes on', async () => {
    const connection = await RawConnection.open(server.port)
    try {
      const ok = await connection.exchange(request('GET', latestPath))
      assert.equal(ok.status, 200)
      assert.equal(header(ok, 'content-length'), String(ok.body.length))
      assert.equal(JSON.parse(ok.body.toString('utf8')).version, '1.0.0')
      assert.ok(ok.body.equals(latestBody), 'the bytes fetch read')
      assert.equal(header(ok, 'etag'), latestEtag)
      assert.match(latestEtag, /^"[0-9a-f]+"$/)

      const notModified = await connection.exchange(request('GET', latestPath, { 'If-None-Match': latestEtag }))
      assert.equal(notModified.status, 304)
      // RFC 9110 §8.6 would allow the 200's length; none at all is what every client reads right.
      assert.equal(header(notModified, 'content-length'), undefined, 'a 304 states no Content-Length')
      assert.equal(header(notModified, 'etag'), latestEtag, 'the 304 repeats the ETag')
      assert.equal(header(notModified, 'cache-control'), 'no-cache')
      assert.equal(header(notModified, 'transfer-encoding'), undefined)
      assert.equal((await connection.leftover()).length, 0, 'no body bytes follow the 304')

      const again = await connection.exchange(request('GET', latestPath))
      assert.equal(again.status, 200, 'the next request on the connection parses')
      assert.ok(again.body.equals(latestBody))
    } finally {
      connection.close()
    }
  })

  test('update-check: 304 and 200 pipelined in one write both parse', async () => {
    const connection = await RawConnection.open(server.port)
    try {
      connection.write(request('GET', latestPath, { 'If-None-Match': `W/${latestEtag}` }) + request('GET', latestPath))
      const first = await connection.read('GET')
      const second = await connection.read('GET')
      assert.equal(first.status, 304, 'If-None-Match compares weakly')
      assert.equal(header(first, 'content-length'), undefined)
      assert.equal(second.status, 200)
      assert.ok(second.body.equals(latestBody))
      assert.equal((await connection.leftover()).length, 0)
    } finally {
      connection.close()
    }
  })

  test('update-check: HEAD has the headers of GET, its Content-Length, and no body bytes', async () => {
    const connection = await RawConnection.open(server.port)
    try {
      const head = await connection.exchange(request('HEAD', latestPath))
      assert.equal(head.status, 200)
      assert.equal(header(head, 'content-length'), String(latestBody.length))
      assert.equal(header(head, 'etag'), latestEtag)
      assert.match(header(head, 'content-type')!, /^application\/json/)
      assert.equal((await connection.leftover()).length, 0, 'no body bytes after HEAD')

      const headNotModified = await connection.exchange(request('HEAD', latestPath, { 'If-None-Match': latestEtag }))
      assert.equal(headNotModified.status, 304)
      const length = header(headNotModified, 'content-length')
      assert.ok(length === undefined || length === String(latestBody.length), `HEAD's 304 states no length or the 200's, not ${length}`)
      assert.equal((await connection.leftover()).length, 0, 'no body bytes after a HEAD 304')

      const get = await connection.exchange(request('GET', latestPath))
      assert.equal(get.status, 200)
      assert.ok(get.body.equals(latestBody))
    } finally {
      connection.close()
    }
  })

  test('update-check: a Range header is ignored (RFC 9110 §14.2): the whole answer, on GET and HEAD', async () => {
    const connection = await RawConnection.open(server.port)
    try {
      const get = await connection.exchange(request('GET', latestPath, { Range: 'bytes=0-3' }))
      assert.equal(get.status, 200)
      assert.ok(get.body.equals(latestBody))
      const head = await connection.exchange(request('HEAD', latestPath, { Range: 'bytes=0-3' }))
      assert.equal(head.status, 200)
      assert.equal(header(head, 'content-length'), String(latestBody.length))
      assert.equal(header(head, 'content-range'), undefined)
      assert.equal((await connection.leftover()).length, 0)
    } finally {
      connection.close()
    }
  })

  test('file: 200 with the exact length; 304 without body or Content-Length; the connection goes on', async () => {
    const connection = await RawConnection.open(server.port)
    try {
      const ok = await connection.exchange(request('GET', filePath))
      assert.equal(ok.status, 200)
      assert.equal(header(ok, 'content-length'), String(image.length))
      assert.ok(ok.body.equals(image))
      assert.equal(header(ok, 'accept-ranges'), 'bytes')
      assert.equal(header(ok, 'etag'), fileEtag)
      assert.match(fileEtag, /^"[0-9a-f]{64}"$/)

      const notModified = await connection.exchange(request('GET', filePath, { 'If-None-Match': fileEtag }))
      assert.equal(notModified.status, 304)
      assert.equal(header(notModified, 'content-length'), undefined, 'a 304 states no Content-Length')
      assert.equal(header(notModified, 'etag'), fileEtag)
      assert.ok(header(notModified, 'cache-control'), 'the 304 repeats Cache-Control')
      assert.equal((await connection.leftover()).length, 0, 'no body bytes follow the 304')

      const again = await connection.exchange(request('GET', filePath))
      assert.equal(again.status, 200)
      assert.ok(again.body.equals(image))
    } finally {
      connection.close()
    }
  })

  test('file: HEAD has the headers of GET, the file\'s Content-Length, and no body bytes; HEAD 304 too', async () => {
    const connection = await RawConnection.open(server.port)
    try {
      const head = await connection.exchange(request('HEAD', filePath))
      assert.equal(head.status, 200)
      assert.equal(header(head, 'content-length'), String(image.length))
      assert.equal(header(head, 'etag'), fileEtag)
      assert.equal(header(head, 'content-type'), 'image/png')
      assert.equal(header(head, 'accept-ranges'), 'bytes')
      assert.equal((await connection.leftover()).length, 0, 'no body bytes after HEAD')

      const headNotModified = await connection.exchange(request('HEAD', filePath, { 'If-None-Match': fileEtag }))
      assert.equal(headNotModified.status, 304)
      const length = header(headNotModified, 'content-length')
      assert.ok(length === undefined || length === String(image.length), `HEAD's 304 states no length or the 200's, not ${length}`)
      assert.equal((await connection.leftover()).length, 0)

      const get = await connection.exchange(request('GET', filePath))
      assert.ok(get.body.equals(image))
    } finally {
      connection.close()
    }
  })

  test('file: 206 carries Content-Range and exactly the range\'s bytes; the connection goes on', async () => {
    const connection = await RawConnection.open(server.port)
    try {
      const middle = await connection.exchange(request('GET', filePath, { Range: 'bytes=10-29' }))
      assert.equal(middle.status, 206)
      assert.equal(header(middle, 'content-range'), `bytes 10-29/${image.length}`)
      assert.equal(header(middle, 'content-length'), '20')
      assert.ok(middle.body.equals(image.subarray(10, 30)))

      const suffix = await connection.exchange(request('GET', filePath, { Range: 'bytes=-7' }))
      assert.equal(suffix.status, 206)
      assert.equal(header(suffix, 'content-range'), `bytes ${image.length - 7}-${image.length - 1}/${image.length}`)
      assert.ok(suffix.body.equals(image.subarray(image.length - 7)))

      const last = await connection.exchange(request('GET', filePath, { Range: `bytes=${image.length - 1}-` }))
      assert.equal(last.status, 206)
      assert.equal(header(last, 'content-length'), '1')
      assert.ok(last.body.equals(image.subarray(image.length - 1)))
      assert.equal((await connection.leftover()).length, 0, 'nothing beyond the range')

      const whole = await connection.exchange(request('GET', filePath))
      assert.ok(whole.body.equals(image))
    } finally {
      connection.close()
    }
  })

  test('file: 416 says the size in Content-Range and its JSON body has the length it states', async () => {
    const connection = await RawConnection.open(server.port)
    try {
      const refused = await connection.exchange(request('GET', filePath, { Range: `bytes=${image.length}-` }))
      assert.equal(refused.status, 416)
      assert.equal(header(refused, 'content-range'), `bytes */${image.length}`)
      assert.equal(typeof JSON.parse(refused.body.toString('utf8')).detail, 'string')
      const next = await connection.exchange(request('GET', filePath))
      assert.equal(next.status, 200)
      assert.ok(next.body.equals(image))
    } finally {
      connection.close()
    }
  })

  test('file: Range on HEAD is ignored: 200, the whole length, no Content-Range, no body', async () => {
    const connection = await RawConnection.open(server.port)
    try {
      const head = await connection.exchange(request('HEAD', filePath, { Range: 'bytes=10-29' }))
      assert.equal(head.status, 200)
      assert.equal(header(head, 'content-length'), String(image.length))
      assert.equal(header(head, 'content-range'), undefined)
      const unsatisfiable = await connection.exchange(request('HEAD', filePath, { Range: `bytes=${image.length}-` }))
      assert.equal(unsatisfiable.status, 200, 'not 416: HEAD has no range to satisfy')
      assert.equal((await connection.leftover()).length, 0)
    } finally {
      connection.close()
    }
  })

  test('a Range built to make a backtracking parser spin is answered at once, with the whole file', async () => {
    // Under Node's 16 KiB header limit; the old pattern needed minutes for this one.
    const hostile = `bytes=${'\t'.repeat(4000)}-${'\t'.repeat(4000)}x`
    const connection = await RawConnection.open(server.port)
    try {
      const started = performance.now()
      const res = await connection.exchange(request('GET', filePath, { Range: hostile }))
      const elapsed = performance.now() - started
      assert.equal(res.status, 200)
      assert.ok(res.body.equals(image))
      assert.ok(elapsed < 1000, `answered in ${elapsed.toFixed(0)} ms`)
    } finally {
      connection.close()
    }
  })
})
