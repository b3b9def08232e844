// Slow clients over a real socket: a dripped body, dripped
// headers, a stalled upload and an upload that outlives its deadline are cut
// off in bounded time, leaving nothing in storage (disk, or S3 objects and
// multipart uploads); an upload that keeps flowing is not cut off by the
// short deadline of ordinary bodies. The deadlines are lowered through the
// same environment variables an operator sets, so this runs in seconds; and
// the tests wait side by side: the connection tests on one site (and the one
// on `npm start`'s process), then the upload tests, each on a site where no
// other upload runs (the connection tests' site is free by then). Every site
// is built before any clock starts: the sites run in this process, and
// building one would hold up the others' timers. Only the site of the test
// about the upload deadline has a short one: elsewhere nothing but the
// deadline under test can cut a connection.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import net from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import type { AddressInfo } from 'node:net'
import { makeSite, storedFiles, type TestSite, type TestUser } from '../helpers/app.js'
import { png } from '../helpers/fixtures.js'
import { startServer, type RunningServer } from '../helpers/server.js'
import { eventually } from '../helpers/wait.js'

const HEADERS_MS = 1000
const BODY_MS = 1000
/**
 * Longer than a loaded machine may hold up this process (after such a pause its
 * timers fire before it reads what arrived meanwhile); the stall test waits it
 * out beside the upload deadline's, which takes as long.
 */
const IDLE_MS = 3000
/** The upload deadline of the site of the test about it. */
const UPLOAD_MS = 3000
/** Every other site's: beyond any of their tests. */
const LONG_UPLOAD_MS = 120_000
const KEEPALIVE_MS = 1000
/** Timers, Node's connection check (every 250 ms here) and a busy test process (s3rver runs in it). */
const SLACK_MS = 2000

/** A site with the lowered deadlines, listening on a real socket, and its user. */
interface Listening {
  site: TestSite
  alice: TestUser
  port: number
}

const sites: TestSite[] = []
after(async () => {
  for (const site of sites) await site.close()
})

async function listeningSite(uploadMs = LONG_UPLOAD_MS): Promise<Listening> {
  const site = await makeSite({
    PACKS_HEADERS_TIMEOUT: `${HEADERS_MS}ms`,
    PACKS_BODY_TIMEOUT: `${BODY_MS}ms`,
    PACKS_IDLE_TIMEOUT: `${IDLE_MS}ms`,
    PACKS_UPLOAD_TIMEOUT: `${uploadMs}ms`,
    PACKS_KEEPALIVE_TIMEOUT: `${KEEPALIVE_MS}ms`,
  })
  sites.push(site)
  const alice = await site.user('alice')
  await site.app.listen({ port: 0, host: '127.0.0.1' })
  return { site, alice, port: (site.app.server.address() as AddressInfo).port }
}

/** The site of the connection tests (then of the upload that keeps flowing), and those of the other two upload tests. */
let shared: Listening
let port: number
let stallSite: Listening
let deadlineSite: Listening
/** `npm start` with a lowered body deadline, in a process of its own. */
let npmStart: RunningServer
before(async () => {
  let started: Promise<RunningServer> | undefined
  try {
    started = startServer({ env: { PACKS_BODY_TIMEOUT: '1s', PACKS_MASTER_PASSWORD: 'pw' } })
    ;[shared, stallSite, deadlineSite] = await Promise.all([listeningSite(), listeningSite(), listeningSite(UPLOAD_MS)])
    port = shared.port
  } finally {
    npmStart = await started!
  }
})
after(() => npmStart?.stop())

interface Connection {
  socket: net.Socket
  /** Date.now() at connect, where `closed` counts from. */
  connectedAt: number
  /** The bytes handed to the socket so far. */
  bytesSent(): number
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
  let sent = 0
  socket.on('data', (chunk) => { received += chunk.toString('latin1') })
  socket.on('error', () => {})
  const closedAt = new Promise<number>((resolve) => socket.once('close', () => {
    closed = true
    resolve(Date.now() - start)
  }))
  return {
    socket,
    connectedAt: start,
    bytesSent: () => sent,
    received: () => received,
    closed: closedAt,
    isClosed: () => closed || socket.destroyed,
    async send(data) {
      if (closed || socket.destroyed || !socket.writable) return false
      sent += Buffer.byteLength(data)
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

/**
 * Resolves with -1 after `ms`, for a race with a connection's close. Its timer
 * does not keep the process alive (the socket does), so a race the close won
 * leaves nothing that holds the finished file open.
 */
const giveUpAfter = (ms: number) => sleep(ms, -1, { ref: false })

/** Closed within `limitMs`, with a 408 `{detail}` if the server could still answer. */
async function assertCutOff(connection: Connection, notBeforeMs: number, limitMs: number): Promise<void> {
  const closedAfter = await Promise.race([connection.closed, giveUpAfter(limitMs + 5000)])
  connection.socket.destroy()
  assert.notEqual(closedAfter, -1, `the server kept the connection open for more than ${limitMs + 5000} ms`)
  assert.ok(closedAfter <= limitMs, `closed after ${closedAfter} ms, more than ${limitMs} ms`)
  assert.ok(closedAfter >= notBeforeMs, `closed after ${closedAfter} ms, before the deadline of ${notBeforeMs} ms`)
  const response = connection.received()
  assert.match(response, /^HTTP\/1\.1 408 /, `answered: ${JSON.stringify(response.slice(0, 200))}`)
  const body = JSON.parse(response.slice(response.indexOf('\r\n\r\n') + 4)) as { detail?: unknown }
  assert.equal(typeof body.detail, 'string')
}

const authorization = (user = shared.alice) => `Authorization: Bearer ${user.username} ${user.token}\r\n`

async function rowCount(site: TestSite, table: 'files' | 'uploads' | 'drafts'): Promise<number> {
  const row = await site.app.db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()
  return Number(row.n)
}


// The tests wait on the clock, not the CPU: within each part they run side by side.
describe('deadlines', () => {
  describe('slow clients', { concurrency: true }, () => {
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
      assert.equal(await rowCount(shared.site, 'drafts'), 0)
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
      const closedAfter = await Promise.race([connection.closed, giveUpAfter(BODY_MS + SLACK_MS)])
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
      const closedAfter = await Promise.race([connection.closed, giveUpAfter(KEEPALIVE_MS + 1000 + SLACK_MS)])
      connection.socket.destroy()
      assert.ok(closedAfter !== -1 && closedAfter >= KEEPALIVE_MS - 50, `closed after ${closedAfter} ms`)
      assert.match(connection.received(), /^HTTP\/1\.1 200 [^]*keep-alive: timeout=1/i)
    })

    // A process of its own: waits alongside the others at no cost to their timers.
    test('the server as npm start runs it cuts off a dripped POST /gate/ (the issue\'s reproduction)', async () => {
      const connection = await connect(npmStart.port)
      await connection.send(`POST /gate/ HTTP/1.1\r\nHost: 127.0.0.1:${npmStart.port}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\npassword=`)
      await drip(connection, 200, 1000 + SLACK_MS + 3000)
      await assertCutOff(connection, 950, 1000 + SLACK_MS)
    })
  })

  describe('uploads', { concurrency: true }, () => {
    const boundary = '----packsTimeoutTest'
    const head = (kind: string) => Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="kind"\r\n\r\n${kind}\r\n`
      + `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="slow.png"\r\nContent-Type: image/png\r\n\r\n`,
    )
    const tail = Buffer.from(`\r\n--${boundary}--\r\n`)

    async function startUpload(at: Listening, kind: string, fileBytes: number): Promise<Connection> {
      const connection = await connect(at.port)
      await connection.send(
        `POST /api/uploads/ HTTP/1.1\r\nHost: 127.0.0.1:${at.port}\r\n${authorization(at.alice)}`
        + `Content-Type: multipart/form-data; boundary=${boundary}\r\n`
        + `Content-Length: ${head(kind).length + fileBytes + tail.length}\r\n\r\n`,
      )
      await connection.send(head(kind))
      return connection
    }

    test('an upload that stalls is aborted at the idle timeout and leaves no file, no pending multipart upload, no row', async () => {
      const at = stallSite
      // The server's end of the connection, to see when it has read the last byte (its idle timer starts there).
      const accepted = new Promise<net.Socket>((resolve) => at.site.app.server.once('connection', resolve))
      // Over one S3 part (5 MiB), so on object storage a multipart upload is really under way when it stalls.
      const connection = await startUpload(at, 'media', 16 * 1024 * 1024)
      const serverEnd = await accepted
      // Looked for while the bytes go out, so that a slow look cannot miss the upload before the stall ends it.
      const storing = eventually(async () => (await storedFiles(at.site)).length > 0, 30_000)
      storing.catch(() => {}) // awaited below, where a failure fails the test
      const sent = Buffer.concat([png(), Buffer.alloc(7 * 1024 * 1024 - png().length, 0x5a)])
      let lastSendAt = 0
      for (let offset = 0; offset < sent.length; offset += 64 * 1024) {
        lastSendAt = Date.now()
        await connection.send(sent.subarray(offset, offset + 64 * 1024))
      }
      // The server reads the last byte after lastSendAt (it was not sent before), and by readAt (a machine under
      // load may leave the last MiB in the socket buffers for a while): the stall begins between the two.
      assert.ok(await eventually(() => serverEnd.bytesRead >= connection.bytesSent() || connection.isClosed(), 30_000), 'the server read the request')
      const readAt = Date.now()
      assert.ok(await storing, 'the server started storing the upload')
      const closedAfter = await Promise.race([connection.closed, giveUpAfter(readAt - connection.connectedAt + IDLE_MS + SLACK_MS + 5000)])
      connection.socket.destroy()
      assert.ok(closedAfter !== -1, 'the server closed the stalled upload')
      const closedAt = connection.connectedAt + closedAfter
      assert.ok(closedAt - readAt <= IDLE_MS + SLACK_MS, `closed ${closedAt - readAt} ms after the server had read the last byte`)
      // Less a margin for the loop time Node's timers count from (taken before a busy turn of the loop reads).
      assert.ok(closedAt - lastSendAt >= IDLE_MS - 500, `closed ${closedAt - lastSendAt} ms after the last byte was sent, before the idle timeout`)
      const response = connection.received()
      assert.match(response, /^(HTTP\/1\.1 408 [^]*\{"detail":"[^"]+"\})?$/, 'a 408 with detail, or nothing')
      if (response !== '') assert.match(response, new RegExp(`"no data arrived for ${IDLE_MS / 1000} s"`), 'the idle timeout\'s answer')
      assert.ok(await eventually(async () => (await storedFiles(at.site)).length === 0, 30_000), `storage is empty: ${(await storedFiles(at.site)).join(', ')}`)
      assert.equal(await rowCount(at.site, 'files'), 0)
      assert.equal(await rowCount(at.site, 'uploads'), 0)
    })

    test('an upload that keeps flowing is not cut off by the short deadline of ordinary bodies', async () => {
      // No upload but this one on the connection tests' site, which they have left.
      const at = shared
      const file = Buffer.concat([png(), Buffer.alloc(256 * 1024, 0x5a)])
      const connection = await startUpload(at, 'thumbnail', file.length)
      const started = Date.now()
      // About 2.5 s at 16 KiB per 150 ms: well past the 1 s body deadline, well within this site's upload deadline.
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
      assert.equal(await rowCount(at.site, 'uploads'), 1)
      const stored = await at.site.app.db.selectFrom('files').select('size').executeTakeFirstOrThrow()
      assert.equal(Number(stored.size), file.length, 'every byte arrived')
    })

    test('an upload that flows but outlasts the upload deadline is aborted and leaves nothing', async () => {
      const at = deadlineSite
      const before = await storedFiles(at.site)
      const uploadsBefore = await rowCount(at.site, 'uploads')
      const connection = await startUpload(at, 'media', 16 * 1024 * 1024)
      await connection.send(png())
      const sentAt = Date.now()
      // 8 KiB every 200 ms: never idle, never finished.
      while (Date.now() - sentAt < UPLOAD_MS + SLACK_MS + 3000 && (await connection.send(Buffer.alloc(8 * 1024, 0x5a)))) await sleep(200)
      const closedAfter = await connection.closed
      connection.socket.destroy()
      assert.ok(closedAfter <= UPLOAD_MS + SLACK_MS, `closed after ${closedAfter} ms`)
      assert.ok(closedAfter >= UPLOAD_MS - 500, `closed after ${closedAfter} ms, before the upload deadline`)
      assert.match(connection.received(), /^(HTTP\/1\.1 408 [^]*\{"detail":"[^"]+"\})?$/, 'a 408 with detail, or nothing')
      assert.ok(await eventually(async () => JSON.stringify(await storedFiles(at.site)) === JSON.stringify(before)),
        `storage is as before: ${(await storedFiles(at.site)).join(', ')}`)
      assert.equal(await rowCount(at.site, 'uploads'), uploadsBefore)
    })
  })

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
})
