// Slow clients over a real socket (issue 8, item 6): a dripped body, dripped
// headers, a stalled upload and an upload that outlives its deadline are cut
// off in bounded time, leaving nothing in storage (disk, or S3 objects and
// multipart uploads); an upload that keeps flowing is not cut off by the
// short deadline of ordinary bodies. The deadlines are lowered through the
// same environment variables an operator sets, so this runs in seconds.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import net from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import type { AddressInfo } from 'node:net'
import { makeSite, storedFiles, type TestSite, type TestUser } from '../helpers/app.js'
import { png } from '../helpers/fixtures.js'
import { startServer, type RunningServer } from '../helpers/server.js'

const HEADERS_MS = 1000
const BODY_MS = 1000
const IDLE_MS = 2000
const UPLOAD_MS = 6000
const KEEPALIVE_MS = 1000
/** Timers, Node's connection check (every 250 ms here) and a busy test process (s3rver runs in it). */
const SLACK_MS = 2000

let site: TestSite
let alice: TestUser
let port: number

before(async () => {
  site = await makeSite({
    PACKS_HEADERS_TIMEOUT: `${HEADERS_MS}ms`,
    PACKS_BODY_TIMEOUT: `${BODY_MS}ms`,
    PACKS_IDLE_TIMEOUT: `${IDLE_MS}ms`,
    PACKS_UPLOAD_TIMEOUT: `${UPLOAD_MS}ms`,
    PACKS_KEEPALIVE_TIMEOUT: `${KEEPALIVE_MS}ms`,
  })
  alice = await site.user('alice')
  await site.app.listen({ port: 0, host: '127.0.0.1' })
  port = (site.app.server.address() as AddressInfo).port
})
after(() => site.close())

interface Connection {
  socket: net.Socket
  /** Everything the server sent so far, as latin1. */
  received(): string
  /** Resolves with the milliseconds from connect to close. */
  closed: Promise<number>
  isClosed(): boolean
  /** Writes unless the server has closed the connection; false once it has. */
  send(data: string | Buffer): Promise<boolean>
}

async function connect(to = port): Promise<Connection> {
  const socket = net.connect(to, '127.0.0.1')
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject))
  const start = Date.now()
  let received = ''
  let closed = false
  socket.on('data', (chunk) => { received += chunk.toString('latin1') })
  socket.on('error', () => {})
  const closedAt = new Promise<number>((resolve) => socket.once('close', () => {
    closed = true
    resolve(Date.now() - start)
  }))
  return {
    socket,
    received: () => received,
    closed: closedAt,
    isClosed: () => closed || socket.destroyed,
    async send(data) {
      if (closed || socket.destroyed || !socket.writable) return false
      if (!socket.write(data)) await Promise.race([new Promise((resolve) => socket.once('drain', resolve)), closedAt])
      return !closed
    },
  }
}

/** Sends one byte every `everyMs` until the server closes the connection or `maxMs` pass. */
async function drip(connection: Connection, everyMs: number, maxMs: number): Promise<void> {
  const deadline = Date.now() + maxMs
  while (Date.now() < deadline && (await connection.send('a'))) await sleep(everyMs)
}

/** Closed within `limitMs`, with a 408 `{detail}` if the server could still answer. */
async function assertCutOff(connection: Connection, notBeforeMs: number, limitMs: number): Promise<void> {
  const timer = sleep(limitMs + 5000).then(() => -1)
  const closedAfter = await Promise.race([connection.closed, timer])
  connection.socket.destroy()
  assert.notEqual(closedAfter, -1, `the server kept the connection open for more than ${limitMs + 5000} ms`)
  assert.ok(closedAfter <= limitMs, `closed after ${closedAfter} ms, more than ${limitMs} ms`)
  assert.ok(closedAfter >= notBeforeMs, `closed after ${closedAfter} ms, before the deadline of ${notBeforeMs} ms`)
  const response = connection.received()
  assert.match(response, /^HTTP\/1\.1 408 /, `answered: ${JSON.stringify(response.slice(0, 200))}`)
  const body = JSON.parse(response.slice(response.indexOf('\r\n\r\n') + 4)) as { detail?: unknown }
  assert.equal(typeof body.detail, 'string')
}

const authorization = () => `Authorization: Bearer ${alice.username} ${alice.token}\r\n`

test('a form body dripped to the public POST /gate/ is cut off at the body deadline', async () => {
  const connection = await connect()
  await connection.send(`POST /gate/ HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\npassword=`)
  await drip(connection, 200, BODY_MS + SLACK_MS + 3000)
  await assertCutOff(connection, BODY_MS - 50, BODY_MS + SLACK_MS)
})

test('a JSON body dripped to POST /api/draft/ is cut off at the body deadline', async () => {
  const connection = await connect()
  await connection.send(`POST /api/draft/ HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n${authorization()}Content-Type: application/json\r\nContent-Length: 5000\r\n\r\n{"draft":"${randomUUID()}","data":{"title":"`)
  await drip(connection, 200, BODY_MS + SLACK_MS + 3000)
  await assertCutOff(connection, BODY_MS - 50, BODY_MS + SLACK_MS)
  assert.equal(await rowCount('drafts'), 0)
})

test('a body that is not a form, sent to an upload route, gets the short deadline too', async () => {
  const connection = await connect()
  await connection.send(`POST /api/uploads/ HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n${authorization()}Content-Type: application/json\r\nContent-Length: 5000\r\n\r\n{"kind":"`)
  await drip(connection, 200, BODY_MS + SLACK_MS + 3000)
  await assertCutOff(connection, BODY_MS - 50, BODY_MS + SLACK_MS)
})

test('a body on a route that never reads it is cut off too (the connection is not held while it drips)', async () => {
  const connection = await connect()
  await connection.send(`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Length: 5000\r\n\r\n`)
  await drip(connection, 200, BODY_MS + SLACK_MS + 3000)
  const closedAfter = await Promise.race([connection.closed, sleep(BODY_MS + SLACK_MS).then(() => -1)])
  connection.socket.destroy()
  assert.ok(closedAfter !== -1 && closedAfter >= BODY_MS - 50, `closed after ${closedAfter} ms`)
  // The route answered at once; only the rest of the connection was cut.
  assert.match(connection.received(), /^HTTP\/1\.1 200 /)
})

test('headers dripped slowly are cut off at the header deadline', async () => {
  const connection = await connect()
  await connection.send(`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n`)
  const deadline = Date.now() + HEADERS_MS + SLACK_MS + 3000
  for (let i = 0; Date.now() < deadline && (await connection.send(`X-Slow-${i}: 1\r\n`)); i++) await sleep(200)
  await assertCutOff(connection, HEADERS_MS - 50, HEADERS_MS + SLACK_MS)
})

test('a connection that never sends a request is closed at the header deadline', async () => {
  const connection = await connect()
  await assertCutOff(connection, HEADERS_MS - 50, HEADERS_MS + SLACK_MS)
})

test('an idle keep-alive connection is closed after the keep-alive timeout, not held open', async () => {
  const connection = await connect()
  await connection.send(`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`)
  // Node adds a second to the advertised keep-alive, so a client that honours the header always closes first.
  const closedAfter = await Promise.race([connection.closed, sleep(KEEPALIVE_MS + 1000 + SLACK_MS).then(() => -1)])
  connection.socket.destroy()
  assert.ok(closedAfter !== -1 && closedAfter >= KEEPALIVE_MS - 50, `closed after ${closedAfter} ms`)
  assert.match(connection.received(), /^HTTP\/1\.1 200 [^]*keep-alive: timeout=1/i)
})

describe('uploads', () => {
  const boundary = '----packsTimeoutTest'
  const head = (kind: string) => Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="kind"\r\n\r\n${kind}\r\n`
    + `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="slow.png"\r\nContent-Type: image/png\r\n\r\n`,
  )
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`)

  async function startUpload(kind: string, fileBytes: number): Promise<Connection> {
    const connection = await connect()
    await connection.send(
      `POST /api/uploads/ HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n${authorization()}`
      + `Content-Type: multipart/form-data; boundary=${boundary}\r\n`
      + `Content-Length: ${head(kind).length + fileBytes + tail.length}\r\n\r\n`,
    )
    await connection.send(head(kind))
    return connection
  }

  test('an upload that stalls is aborted at the idle timeout and leaves no file, no pending multipart upload, no row', async () => {
    // Over one S3 part (5 MiB), so on object storage a multipart upload is really under way when it stalls.
    const connection = await startUpload('media', 16 * 1024 * 1024)
    const sent = Buffer.concat([png(), Buffer.alloc(7 * 1024 * 1024 - png().length, 0x5a)])
    for (let offset = 0; offset < sent.length; offset += 64 * 1024) await connection.send(sent.subarray(offset, offset + 64 * 1024))
    assert.ok(await eventually(async () => (await storedFiles(site)).length > 0), 'the server started storing the upload')
    const stalledAt = Date.now()
    const closedAfter = await Promise.race([connection.closed.then(() => Date.now() - stalledAt), sleep(IDLE_MS + SLACK_MS + 5000).then(() => -1)])
    connection.socket.destroy()
    assert.ok(closedAfter !== -1, 'the server closed the stalled upload')
    assert.ok(closedAfter <= IDLE_MS + SLACK_MS, `closed ${closedAfter} ms after the last byte`)
    assert.ok(closedAfter >= IDLE_MS - 500, `closed ${closedAfter} ms after the last byte, before the idle timeout`)
    assert.match(connection.received(), /^(HTTP\/1\.1 408 [^]*\{"detail":"[^"]+"\})?$/, 'a 408 with detail, or nothing')
    assert.ok(await eventually(async () => (await storedFiles(site)).length === 0), `storage is empty: ${(await storedFiles(site)).join(', ')}`)
    assert.equal(await rowCount('files'), 0)
    assert.equal(await rowCount('uploads'), 0)
  })

  test('an upload that keeps flowing is not cut off by the short deadline of ordinary bodies', async () => {
    const file = Buffer.concat([png(), Buffer.alloc(256 * 1024, 0x5a)])
    const connection = await startUpload('thumbnail', file.length)
    const started = Date.now()
    // About 2.5 s at 16 KiB per 150 ms: well past the 1 s body deadline, well within the upload deadline.
    for (let offset = 0; offset < file.length; offset += 16 * 1024) {
      assert.ok(await connection.send(file.subarray(offset, offset + 16 * 1024)), `the server closed the upload after ${Date.now() - started} ms`)
      await sleep(150)
    }
    await connection.send(tail)
    assert.ok(Date.now() - started > BODY_MS * 2, 'the upload took longer than the body deadline')
    await Promise.race([connection.closed, eventually(() => /\r\n\r\n[^]*\}$/.test(connection.received()), 10_000)])
    connection.socket.destroy()
    const response = connection.received()
    assert.match(response, /^HTTP\/1\.1 200 /, response.slice(0, 300))
    const body = JSON.parse(response.slice(response.indexOf('\r\n\r\n') + 4)) as { uuid?: string; content_type?: string }
    assert.equal(body.content_type, 'image/png', JSON.stringify(body))
    assert.equal(await rowCount('uploads'), 1)
    const stored = await site.app.db.selectFrom('files').select('size').executeTakeFirstOrThrow()
    assert.equal(Number(stored.size), file.length, 'every byte arrived')
  })

  test('an upload that flows but outlasts the upload deadline is aborted and leaves nothing', async () => {
    const before = await storedFiles(site)
    const uploadsBefore = await rowCount('uploads')
    const connection = await startUpload('media', 16 * 1024 * 1024)
    await connection.send(png())
    const sentAt = Date.now()
    // 8 KiB every 200 ms: never idle, never finished.
    while (Date.now() - sentAt < UPLOAD_MS + SLACK_MS + 3000 && (await connection.send(Buffer.alloc(8 * 1024, 0x5a)))) await sleep(200)
    const closedAfter = await connection.closed
    connection.socket.destroy()
    assert.ok(closedAfter <= UPLOAD_MS + SLACK_MS, `closed after ${closedAfter} ms`)
    assert.ok(closedAfter >= UPLOAD_MS - 500, `closed after ${closedAfter} ms, before the upload deadline`)
    assert.match(connection.received(), /^(HTTP\/1\.1 408 [^]*\{"detail":"[^"]+"\})?$/, 'a 408 with detail, or nothing')
    assert.ok(await eventually(async () => JSON.stringify(await storedFiles(site)) === JSON.stringify(before)),
      `storage is as before: ${(await storedFiles(site)).join(', ')}`)
    assert.equal(await rowCount('uploads'), uploadsBefore)
  })
})

describe('npm start', () => {
  let server: RunningServer
  before(async () => {
    server = await startServer({ env: { PACKS_BODY_TIMEOUT: '1s', PACKS_MASTER_PASSWORD: 'pw' } })
  })
  after(() => server.stop())

  test('the server as npm start runs it cuts off a dripped POST /gate/ (the issue\'s reproduction)', async () => {
    const connection = await connect(server.port)
    await connection.send(`POST /gate/ HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\npassword=`)
    await drip(connection, 200, 1000 + SLACK_MS + 3000)
    await assertCutOff(connection, 950, 1000 + SLACK_MS)
  })
})

async function rowCount(table: 'files' | 'uploads' | 'drafts'): Promise<number> {
  const row = await site.app.db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()
  return Number(row.n)
}

/** Polls until `check` holds or the time is up; returns whether it held. */
async function eventually(check: () => boolean | Promise<boolean>, ms = 5000): Promise<boolean> {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    if (await check()) return true
    await sleep(20)
  }
  return check()
}

test('the deadlines come from the environment, with documented defaults; one that cannot work stops start-up', async () => {
  const { ConfigError, loadConfig } = await import('../../src/config/index.js')
  assert.deepEqual(loadConfig({}).timeouts, { headersMs: 15_000, bodyMs: 30_000, uploadMs: 3_600_000, idleMs: 60_000, keepAliveMs: 65_000 })
  assert.equal(loadConfig({ PACKS_UPLOAD_TIMEOUT: '3h' }).timeouts.uploadMs, 3 * 3_600_000)
  // Node refuses a header deadline longer than the request deadline; so do we, in one line.
  assert.throws(() => loadConfig({ PACKS_HEADERS_TIMEOUT: '2h' }), (error: Error) => error instanceof ConfigError && /PACKS_HEADERS_TIMEOUT/.test(error.message))
  assert.throws(() => loadConfig({ PACKS_BODY_TIMEOUT: '2h' }), ConfigError)
  // A Node timer longer than 2^31 - 1 ms fires at once.
  assert.throws(() => loadConfig({ PACKS_UPLOAD_TIMEOUT: '30d' }), /longer than 24 days/)
  assert.throws(() => loadConfig({ PACKS_IDLE_TIMEOUT: 'soon' }), /PACKS_IDLE_TIMEOUT/)
})
