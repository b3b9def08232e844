// The access log: the server started as `npm start` starts
// it, with default settings, writes one JSON line per request to stdout, in
// pino's shape, and nothing secret: no credentials (they are headers, never
// logged) and no file link's signature (a capability). PACKS_ACCESS_LOG=off
// and LOG_LEVEL=warn turn it off.
// backends: sqlite — the log line is written by the HTTP layer; no backend is involved in it
import { after, before, mock, test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { LogSink } from '../../src/http/log-sink.js'
import { startServer, type RunningServer } from '../helpers/server.js'
import { eventually } from '../helpers/wait.js'
import { recordWrites } from '../helpers/log-writes.js'
import { tempDir } from '../helpers/temp.js'

const PASSWORD = 'access-log-password'
let server: RunningServer

interface Line { level: number; time: number; msg: string; reqId: string; method: string; url: string; status: number; ms: number; ip: string }

function accessLines(output: string): Line[] {
  return output.split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as Line).filter((line) => line.msg === 'request')
}

before(async () => {
  server = await startServer({ env: { PACKS_MASTER_PASSWORD: PASSWORD } })
})
after(async () => {
  await server.stop()
  fs.rmSync(server.dataDir, { recursive: true, force: true })
})

test('one line per request, with method, path, status, time and address; no secret', async () => {
  // Each request is marked, so the start-up's own /healthz polls do not count.
  const ours = () => accessLines(server.stdout()).filter((line) => line.url.includes('mark=1'))
  const gate = { 'x-master-password': PASSWORD }
  assert.equal((await fetch(`${server.url}/api/packs/nobody/nothing/latest?mark=1`, { headers: gate })).status, 404)
  assert.equal((await fetch(`${server.url}/api/modrinth/files/x?expires=1&signature=s3cr3t-capability&download=1&mark=1`)).status, 403)
  assert.equal((await fetch(`${server.url}/healthz?mark=1`)).status, 200)
  assert.ok(await eventually(() => ours().length >= 3), 'three access-log lines')
  const lines = ours()
  assert.deepEqual(lines.map((l) => [l.method, l.url.replace(/\?.*/, ''), l.status]), [
    ['GET', '/api/packs/nobody/nothing/latest', 404],
    ['GET', '/api/modrinth/files/x', 403],
    ['GET', '/healthz', 200],
  ])
  for (const line of lines) {
    assert.equal(line.level, 30)
    assert.ok(Math.abs(line.time - Date.now()) < 60_000)
    assert.equal(typeof line.ms, 'number')
    assert.equal(line.ip, '127.0.0.1')
    assert.match(line.reqId, /./)
  }
  assert.match(lines[1]!.url, /signature=\[redacted\]/)
  assert.ok(!server.stdout().includes('s3cr3t-capability') && !server.stdout().includes(PASSWORD), 'no secret in the log')
})

test('PACKS_ACCESS_LOG=off and LOG_LEVEL=warn turn it off', async () => {
  for (const env of [{ PACKS_ACCESS_LOG: 'off' }, { LOG_LEVEL: 'warn' }]) {
    const quiet = await startServer({ env: { PACKS_MASTER_PASSWORD: PASSWORD, ...env } })
    try {
      assert.equal((await fetch(`${quiet.url}/healthz`)).status, 200)
      await new Promise((resolve) => setTimeout(resolve, 200))
      assert.deepEqual(accessLines(quiet.stdout()), [], JSON.stringify(env))
    } finally {
      await quiet.stop()
      fs.rmSync(quiet.dataDir, { recursive: true, force: true })
    }
  }
})

// The server's stdout in the tests above is a pipe too; this looks at the writes themselves. (Here rather than in
// test/unit/log-sink.test.ts: making a named pipe takes a process.)
test('to a pipe, the log is written in whole lines of at most 4096 bytes a write (PIPE_BUF), in order', async (t) => {
  const dir = tempDir('packs-log-sink-')
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }))
  const fifo = path.join(dir, 'pipe')
  execFileSync('mkfifo', [fifo])
  // The read end first and without waiting, so opening the write end does not wait either.
  const reader = new net.Socket({ fd: fs.openSync(fifo, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK), readable: true, writable: false })
  const fd = fs.openSync(fifo, 'w')
  t.after(() => {
    reader.destroy()
    fs.closeSync(fd)
    mock.restoreAll()
  })
  let received = ''
  reader.setEncoding('utf8').on('data', (chunk: string) => { received += chunk })
  const writes = recordWrites()
  // No atomicPieces option: the sink sees a pipe and cuts pieces by itself.
  const sink = new LogSink({ fd, batchBytes: 10_000, flushMs: 20 })
  const lines = Array.from({ length: 2000 }, (_, i) => `{"n":${i},"text":"${'é'.repeat(i % 50)}"}\n`)
  for (const line of lines) sink.write(line)
  const expected = lines.join('')
  assert.ok(await eventually(() => received.length >= expected.length), 'everything read from the pipe')
  assert.equal(received, expected)
  assert.ok(writes.length > 1 && writes.every((n) => n <= 4096), `writes: ${writes.length}, largest ${Math.max(...writes)}`)
})
