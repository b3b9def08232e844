// A client that goes away in the middle of an upload, over a real socket:
// nothing of the half-sent file may stay on disk or in the database.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import http from 'node:http'
import net from 'node:net'
import path from 'node:path'
import type { AddressInfo } from 'node:net'
import { makeSite, storedFiles, type TestSite, type TestUser } from '../helpers/app.js'
import { S3FileStore } from '../../src/storage/s3.js'
import { multipart, png } from '../helpers/fixtures.js'
import { eventually } from '../helpers/wait.js'

let site: TestSite
let alice: TestUser
let port: number

before(async () => {
  site = await makeSite()
  alice = await site.user('alice')
  await site.app.listen({ port: 0, host: '127.0.0.1' })
  port = (site.app.server.address() as AddressInfo).port
})
after(() => site.close())

async function rowCount(table: 'files' | 'uploads'): Promise<number> {
  const row = await site.app.db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()
  return Number(row.n)
}

/** Uploads the store has begun but not finished: temporary files on disk, pending multipart uploads on S3. */
async function partialFiles(): Promise<string[]> {
  if (site.app.store instanceof S3FileStore) return (await storedFiles(site)).filter((key) => key.startsWith('pending-upload:'))
  const root = path.join(site.dataDir, 'files')
  if (!fs.existsSync(root)) return []
  return (fs.readdirSync(root, { recursive: true }) as string[]).filter((p) => p.endsWith('.partial'))
}


/**
 * Sends the request line, headers and the start of a multipart body that
 * announces `declaredBytes` of file, then cuts the connection after `sendBytes`.
 * Resolves with what the server wrote back before the cut (often nothing).
 */
async function abortedUpload(options: { kind: string; declaredBytes: number; sendBytes: number; waitForPartial: boolean }): Promise<string> {
  const boundary = '----packsAbortTest'
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="kind"\r\n\r\n${options.kind}\r\n`
    + `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.png"\r\nContent-Type: image/png\r\n\r\n`,
  )
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`)
  const contentLength = head.length + options.declaredBytes + tail.length
  const socket = net.connect(port, '127.0.0.1')
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject))
  let answer = ''
  socket.on('data', (chunk) => { answer += chunk.toString('latin1') })
  socket.on('error', () => {})
  socket.write(
    `POST /api/uploads/ HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n`
    + `Authorization: Bearer ${alice.username} ${alice.token}\r\n`
    + `Content-Type: multipart/form-data; boundary=${boundary}\r\n`
    + `Content-Length: ${contentLength}\r\n\r\n`,
  )
  socket.write(head)
  // A real PNG start, so the bytes would be accepted had they all arrived.
  const body = Buffer.concat([png(), Buffer.alloc(options.sendBytes - png().length, 0x5a)])
  for (let offset = 0; offset < body.length; offset += 64 * 1024) {
    const chunk = body.subarray(offset, offset + 64 * 1024)
    if (!socket.write(chunk)) await new Promise((resolve) => socket.once('drain', resolve))
  }
  if (options.waitForPartial) {
    // Make sure the server really is midway: the temporary file exists before the cut.
    assert.ok(await eventually(async () => (await partialFiles()).length > 0, 30_000), 'the server started writing the upload')
  }
  socket.destroy()
  return answer
}

test('a connection cut midway through a large upload leaves no file, no partial file and no rows', async () => {
  // Over one S3 part (5 MiB) is sent, so on object storage a multipart upload is really under way at the cut.
  await abortedUpload({ kind: 'media', declaredBytes: 16 * 1024 * 1024, sendBytes: 7 * 1024 * 1024, waitForPartial: true })
  const clean = await eventually(async () => (await storedFiles(site)).length === 0 && (await partialFiles()).length === 0, 30_000)
  assert.ok(clean, `storage is empty after the abort: ${(await storedFiles(site)).join(', ')}`)
  assert.equal(await rowCount('files'), 0)
  assert.equal(await rowCount('uploads'), 0)
})

/** The connections the server holds open. */
const openConnections = () => new Promise<number>((resolve, reject) => site.app.server.getConnections((error, count) => (error ? reject(error) : resolve(count))))

test('a connection cut right after the headers leaves nothing either', async () => {
  await abortedUpload({ kind: 'thumbnail', declaredBytes: 1024 * 1024, sendBytes: 100, waitForPartial: false })
  // Once the server has seen the cut, whatever the request had begun to store is being removed.
  assert.ok(await eventually(async () => (await openConnections()) === 0, 30_000), 'the server closed its end')
  assert.ok(await eventually(async () => (await storedFiles(site)).length === 0, 30_000))
  assert.equal(await rowCount('files'), 0)
  assert.equal(await rowCount('uploads'), 0)
})

test('the server keeps serving after aborted uploads', async () => {
  const res = await fetch(`http://127.0.0.1:${port}/healthz`)
  assert.equal(res.status, 200)
  // And a whole upload over the same real socket path still works.
  const form = new FormData()
  form.append('kind', 'thumbnail')
  form.append('file', new Blob([png()], { type: 'image/png' }), 'ok.png')
  const upload = await fetch(`http://127.0.0.1:${port}/api/uploads/`, {
    method: 'POST',
    headers: { authorization: `Bearer ${alice.username} ${alice.token}` },
    body: form,
  })
  assert.equal(upload.status, 200, await upload.clone().text())
  const body = await upload.json() as { url: string }
  const served = await fetch(`http://127.0.0.1:${port}${body.url}`, { headers: site.gate })
  assert.ok(Buffer.from(await served.arrayBuffer()).equals(png()))
  assert.equal((await storedFiles(site)).length, 1)
})

test('an over-size upload over a real socket gets its 413 and leaves nothing', async () => {
  const before = await storedFiles(site)
  const form = new FormData()
  form.append('kind', 'thumbnail')
  form.append('file', new Blob([png(), new Uint8Array(6 * 1024 * 1024)], { type: 'image/png' }), 'huge.png')
  const res = await fetch(`http://127.0.0.1:${port}/api/uploads/`, {
    method: 'POST',
    headers: { authorization: `Bearer ${alice.username} ${alice.token}` },
    body: form,
  }).catch((error: unknown) => error)
  // The server may answer before it has read the whole body; a client may then see the reset instead.
  if (res instanceof Response) {
    assert.equal(res.status, 413)
    assert.match(((await res.json()) as { detail: string }).detail, /thumbnail limit/)
  }
  assert.ok(await eventually(async () => (await partialFiles()).length === 0, 30_000))
  assert.deepEqual(await storedFiles(site), before)
  assert.equal(await rowCount('uploads'), 1)
})

test('after refusing an upload it has not read, the server closes the connection, so the next request is not stuck behind it', async () => {
  // One keep-alive socket, as a browser reuses it: the 413 must not leave the
  // unread rest of the body in front of the next request on that socket.
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
  try {
    const body = multipart([
      { name: 'kind', value: 'thumbnail' },
      { name: 'file', value: Buffer.concat([png(), Buffer.alloc(6 * 1024 * 1024, 0x5a)]), filename: 'huge.png' },
    ])
    const refused = await request(agent, 'POST', '/api/uploads/', { authorization: `Bearer ${alice.username} ${alice.token}`, ...body.headers }, body.payload)
    if (refused.status !== 0) {
      assert.equal(refused.status, 413)
      assert.equal(refused.headers.connection, 'close')
    }
    const next = await request(agent, 'GET', '/healthz', {}, undefined, 10_000)
    assert.equal(next.status, 200)
  } finally {
    agent.destroy()
  }
})

/** One request through `agent`; status 0 when the server reset the connection before answering. */
function request(
  agent: http.Agent, method: string, urlPath: string, headers: Record<string, string>, body?: Buffer, timeoutMs = 30_000,
): Promise<{ status: number; headers: http.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path: urlPath, headers, agent, timeout: timeoutMs }, (res) => {
      res.resume()
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers }))
    })
    req.on('timeout', () => req.destroy(new Error(`${method} ${urlPath} got no answer within ${timeoutMs} ms`)))
    req.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ECONNRESET' || error.code === 'EPIPE') resolve({ status: 0, headers: {} })
      else reject(error)
    })
    req.end(body)
  })
}
