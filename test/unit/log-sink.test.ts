// LogSink (src/http/log-sink.ts): the server's log lines, written in batches
// of whole lines (to a pipe, each write at most 4096 bytes: what a pipe takes
// in one piece, so workers sharing stdout never cut into each other's lines),
// in order, and all of them by the time the process exits.
import { afterEach, test, mock } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { LogSink } from '../../src/http/log-sink.js'
import { eventually } from '../helpers/wait.js'
import { recordWrites } from '../helpers/log-writes.js'
import { tempDir } from '../helpers/temp.js'

const dirs: string[] = []
afterEach(() => {
  mock.restoreAll()
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true })
})

function tempFile(): { file: string; fd: number } {
  const dir = tempDir('packs-log-sink-')
  dirs.push(dir)
  const file = path.join(dir, 'out.log')
  return { file, fd: fs.openSync(file, 'a') }
}

// (A pipe, where pieces are the default, is in test/e2e/access-log.test.ts: making one takes a process.)

// Lines of 1 to 250 bytes, multi-byte characters among them, and one longer than a chunk (a long stack trace).
const LINES = Array.from({ length: 2000 }, (_, i) => i === 777 ? `{"long":"${'x'.repeat(30_000)}"}\n` : `{"n":${i},"text":"${'é'.repeat(i % 50)}"}\n`)

for (const atomicPieces of [true, false]) {
  test(`every line arrives, whole and in order; each write is whole lines${atomicPieces ? ' of at most 4096 bytes but a longer line alone (a pipe)' : ', a chunk at a time (a regular file)'}`, async () => {
    const { file, fd } = tempFile()
    const writes = recordWrites()
    const sink = new LogSink({ fd, batchBytes: 10_000, flushMs: 20, ...(atomicPieces ? { atomicPieces } : {}) })
    for (const line of LINES) sink.write(line)
    const expected = LINES.join('')
    assert.ok(await eventually(() => fs.readFileSync(file, 'utf8').length >= expected.length), 'everything written')
    assert.equal(fs.readFileSync(file, 'utf8'), expected)
    const long = Buffer.byteLength(LINES[777]!)
    if (atomicPieces) assert.ok(writes.every((n) => n <= 4096 || n === long), `writes: ${writes.length}, largest ${Math.max(...writes)}`)
    // On a file, by default: chunks (at most batchBytes) and the long line alone, so a few dozen writes.
    else assert.ok(writes.every((n) => n <= 10_000 || n === long) && writes.length < 60, `writes: ${writes.length}`)
    assert.ok(await eventually(() => sink.idle, 2000))
    fs.closeSync(fd)
  })
}


test('a quiet server\'s line is written after flushMs; flushSync writes what is left at once', async () => {
  const { file, fd } = tempFile()
  const sink = new LogSink({ fd, batchBytes: 1 << 20, flushMs: 30 })
  sink.write('{"one":1}\n')
  assert.equal(fs.readFileSync(file, 'utf8'), '', 'not yet: the batch waits')
  assert.ok(await eventually(() => fs.readFileSync(file, 'utf8') === '{"one":1}\n', 2000))
  // Written is not yet acknowledged: until the write's callback runs, an exit would write the line again.
  assert.ok(await eventually(() => sink.idle, 2000))
  sink.write('{"two":2}\n')
  sink.flushSync()
  assert.equal(fs.readFileSync(file, 'utf8'), '{"one":1}\n{"two":2}\n')
  fs.closeSync(fd)
})

test('a reader that does not keep up: the backlog is bounded, and the drop is reported', async () => {
  const { file, fd } = tempFile()
  const sink = new LogSink({ fd, batchBytes: 1 << 20, flushMs: 10_000, maxBacklogBytes: 1000 })
  let accepted = 0
  for (let i = 0; i < 100; i++) if (sink.write(`{"line":${i},"pad":"${'x'.repeat(30)}"}\n`)) accepted++
  assert.ok(accepted < 100 && sink.dropped === 100 - accepted, `${accepted} accepted, ${sink.dropped} dropped`)
  sink.flushSync()
  sink.write('{"after":1}\n')
  sink.flush()
  assert.ok(await eventually(() => fs.readFileSync(file, 'utf8').includes('log lines dropped')))
  fs.closeSync(fd)
})
