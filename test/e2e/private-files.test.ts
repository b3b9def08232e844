// backends: sqlite — only the SQLite + disk combination keeps the site on the local disk (PostgreSQL and S3 keep nothing in the data directory)
// The site's files are its owner's alone: the database holds the site secret
// (sessions and gate cookies are signed with it), the Ed25519 key that signs
// the update-check and every password hash. A server started under the usual
// umask (022) creates the data directory, the SQLite database and its -wal and
// -shm, the stored files' directories, every stored file and every temporary
// file of an upload in progress 0700 (directories) / 0600 (files); the CLI
// does the same. A site made before (0755/0644) is tightened when the server
// starts, with one line saying how many paths it changed, and none when
// nothing needed it.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { png } from '../helpers/fixtures.js'
import { cliOk, lastLine, startServer, type RunningServer } from '../helpers/server.js'
import { tempDir } from '../helpers/temp.js'
import { until } from '../helpers/wait.js'

const TIGHTENED_LINE = /"msg":"packs: made \d+ paths? private/

let umask: number
before(() => { umask = process.umask(0o022) })
after(() => { process.umask(umask) })

/** Every path under `dir` (itself included), with its permission bits. */
function modes(dir: string): Map<string, number> {
  const found = new Map<string, number>([[dir, fs.lstatSync(dir).mode & 0o7777]])
  for (const name of fs.readdirSync(dir, { recursive: true }) as string[]) {
    const file = path.join(dir, name)
    found.set(file, fs.lstatSync(file).mode & 0o7777)
  }
  return found
}

/** The paths of `found` whose mode is not 0700 (directories) / 0600 (files). */
function notPrivate(found: Map<string, number>): string[] {
  return [...found].filter(([file, mode]) => mode !== (fs.lstatSync(file).isDirectory() ? 0o700 : 0o600))
    .map(([file, mode]) => `${file} ${mode.toString(8)}`)
}

async function user(server: RunningServer, username: string): Promise<Record<string, string>> {
  await cliOk(['user', 'create', username, '--password', `${username}-password`], server.env)
  const token = lastLine((await cliOk(['token', 'create', username, '--name', 'tests'], server.env)).stdout)
  return { authorization: `Bearer ${username} ${token}` }
}

/** An upload that stays pending (its draft is never saved). */
async function pendingUpload(server: RunningServer, headers: Record<string, string>): Promise<void> {
  const form = new FormData()
  form.set('kind', 'media')
  form.set('draft_uuid', randomUUID())
  form.set('file', new Blob([new Uint8Array(png(4, 4, [1, 2, 3]))]), 'pending.png')
  const res = await fetch(`${server.url}/api/uploads/`, { method: 'POST', headers, body: form })
  assert.equal(res.status, 200, await res.text())
}

/**
 * Begins an upload of a large image over a raw socket and sends part of it: the store writes it into a
 * temporary file. Resolves with that file's mode, read while the upload is in progress; then the connection is cut.
 */
async function temporaryFileMode(server: RunningServer, headers: Record<string, string>): Promise<number> {
  const boundary = '----packsPrivateFiles'
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="kind"\r\n\r\nmedia\r\n`
    + `--${boundary}\r\nContent-Disposition: form-data; name="draft_uuid"\r\n\r\n${randomUUID()}\r\n`
    + `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.png"\r\nContent-Type: image/png\r\n\r\n`,
  )
  const declared = 16 * 1024 * 1024
  const socket = net.connect(server.port, '127.0.0.1')
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject))
  socket.on('error', () => {})
  try {
    socket.write(`POST /api/uploads/ HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\nAuthorization: ${headers.authorization}\r\n`
      + `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${head.length + declared + 50}\r\n\r\n`)
    socket.write(head)
    // A real PNG start, then more bytes: less than declared, so the upload stays in progress.
    const body = Buffer.concat([png(), Buffer.alloc(2 * 1024 * 1024, 0x5a)])
    for (let offset = 0; offset < body.length; offset += 64 * 1024) {
      if (!socket.write(body.subarray(offset, offset + 64 * 1024))) await new Promise((resolve) => socket.once('drain', resolve))
    }
    const files = path.join(server.dataDir, 'files')
    const temporary = await until(() => {
      const name = (fs.readdirSync(files, { recursive: true }) as string[]).find((file) => file.endsWith('.partial'))
      return name === undefined ? undefined : path.join(files, name)
    }, 'the temporary file of the upload in progress', 30_000)
    return fs.statSync(temporary).mode & 0o7777
  } finally {
    socket.destroy()
  }
}

/** Makes every path under `dir` (itself included) what an older release under umask 022 made: 0755 / 0644. */
function loosen(dir: string): number {
  const found = modes(dir)
  for (const file of found.keys()) fs.chmodSync(file, fs.statSync(file).isDirectory() ? 0o755 : 0o644)
  return found.size
}

const tightenedLines = (server: RunningServer) => server.stdout().split('\n').filter((line) => TIGHTENED_LINE.test(line))

describe('a site started under umask 022', () => {
  let dataDir: string
  let server: RunningServer
  let headers: Record<string, string>
  let temporaryMode: number

  before(async () => {
    // Not there yet: the server makes it.
    dataDir = path.join(tempDir('packs-private-'), 'data')
    server = await startServer({ dataDir })
    headers = await user(server, 'alice')
    await pendingUpload(server, headers)
    temporaryMode = await temporaryFileMode(server, headers)
  })

  after(async () => {
    await server?.stop()
  })

  test('the data directory, the database, its -wal and -shm, the files directories and files, and a temporary file are 0700 / 0600', () => {
    const found = modes(dataDir)
    const database = path.join(dataDir, 'packs.db')
    for (const file of [database, `${database}-wal`, `${database}-shm`]) assert.equal(found.get(file), 0o600, `${file} is 0600`)
    assert.equal(found.get(dataDir), 0o700)
    assert.equal(found.get(path.join(dataDir, 'files')), 0o700)
    const stored = [...found.keys()].filter((file) => file.startsWith(path.join(dataDir, 'files')) && fs.statSync(file).isFile())
    assert.ok(stored.length >= 1, 'the pending upload is stored')
    assert.deepEqual(notPrivate(found), [])
    assert.equal(temporaryMode, 0o600, 'the temporary file of an upload in progress')
  })

  test('a new site has nothing to tighten: no line about it', () => {
    assert.deepEqual(tightenedLines(server), [])
  })

  test('the CLI on a new data directory makes it and the database private too', async () => {
    const other = path.join(tempDir('packs-private-cli-'), 'data')
    await cliOk(['user', 'create', 'bob', '--password', 'bob-password'], server.env, { PACKS_DATA_DIR: other })
    assert.deepEqual(notPrivate(modes(other)), [])
    assert.ok(fs.existsSync(path.join(other, 'packs.db')))
  })

  test('a site made before (0755 / 0644) is made private when the server starts, with one line saying how many paths', async () => {
    await server.stop()
    const loosened = loosen(dataDir)
    assert.ok(loosened >= 6, `${loosened} paths`)
    const again = await startServer({ dataDir })
    try {
      const lines = tightenedLines(again)
      assert.equal(lines.length, 1, again.stdout())
      const line = JSON.parse(lines[0]!) as { level: number; tightened: number; msg: string }
      assert.equal(line.tightened, loosened, line.msg)
      assert.equal(line.level, 30)
      assert.match(line.msg, new RegExp(`^packs: made ${loosened} paths private that other users of this machine could read \\(now 0700 directories, 0600 files\\): `
        + `the data directory ${dataDir}, \\d+ of the SQLite database ${path.join(dataDir, 'packs.db')} and its journals, \\d+ in the stored files ${path.join(dataDir, 'files')}$`))
      assert.deepEqual(notPrivate(modes(dataDir)), [])
      // And the site still works on its files.
      await pendingUpload(again, headers)
    } finally {
      await again.stop()
    }
    const third = await startServer({ dataDir })
    try {
      assert.deepEqual(tightenedLines(third), [], 'nothing left to tighten')
    } finally {
      await third.stop()
    }
  })
})
