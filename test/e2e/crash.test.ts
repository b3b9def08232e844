// kill -9 in the middle of everything. The real server,
// started as `npm start` starts it, is killed while a large upload streams in
// slowly and loops of publishes, new versions and draft deletes keep every
// other kind of write in flight, so each kill lands at a different point of
// each; and `packs import` is killed midway through copying files. After each
// kill: restart on the same data (same database and bucket), the start-up
// consistency check removes what the crash left, and, read straight from the
// database and the store, there is no stored file without its row, no row
// without its file, no unfinished write and no half-published pack; `packs
// doctor` agrees. Each backend combination kills its own kind of site: SQLite
// + disk on the sqlite one, PostgreSQL + S3 + Redis on the scaled one
// (PACKS_TEST_* from scripts/run-tests.js; helpers/server.ts suiteBackends).
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes, randomUUID } from 'node:crypto'
import fs from 'node:fs'
import http from 'node:http'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { openDatabase } from '../../src/db/index.js'
import { png, zip } from '../helpers/fixtures.js'
import { bucketContents, type TestBucket } from '../helpers/s3.js'
import { lastLine, runCli, spawnCli, startServer, suiteBackends, tempDataDir, type CliResult, type RunningServer, type SuiteBackends } from '../helpers/server.js'
import { tempDir } from '../helpers/temp.js'

const SITE_PASSWORD = 'crash-test-password'
const ROUNDS = 3
const MiB = 1024 * 1024
/**
 * The orphan grace of every server and CLI here. Nothing writes while a start-up
 * check or `packs doctor` looks (the load starts once the check is done), so it
 * needs to cover no write in flight: only what a kill left must be older than it
 * by the restart, which is a moment's wait, not a second's.
 */
const GRACE_MS = 200
/** The large upload: long enough never to finish before the kill, however long the server takes to store its first part. */
const BIG_UPLOAD_BYTES = 64 * MiB
/** One S3 part (src/storage/s3.ts): only the large upload is stored in parts, or grows this big on disk. */
const PART_BYTES = 5 * MiB

interface Backend {
  name: string
  dataDir: string
  /** DATABASE_URL / STORAGE_URL / REDIS_URL, or nothing for the embedded defaults in the data directory. */
  env: Record<string, string>
  databaseUrl: string
  bucket?: TestBucket
}

const releaseLater: SuiteBackends[] = []
const removeLater: string[] = []
after(async () => {
  for (const backends of releaseLater) await backends.release()
  for (const dir of removeLater) fs.rmSync(dir, { recursive: true, force: true })
})

/** A fresh site of this run's combination. */
async function makeBackend(): Promise<Backend> {
  const dataDir = tempDataDir()
  removeLater.push(dataDir)
  const backends = await suiteBackends()
  releaseLater.push(backends)
  return { name: backends.name, dataDir, env: backends.env, databaseUrl: backends.databaseUrl(dataDir), bucket: backends.bucket }
}

/** Server and CLI settings: a short grace (GRACE_MS), so what a kill left is soon old enough for the restart. */
function siteEnv(backend: Backend): Record<string, string> {
  return { PACKS_MASTER_PASSWORD: SITE_PASSWORD, PACKS_ORPHAN_GRACE: `${GRACE_MS}ms`, PACKS_DATA_DIR: backend.dataDir, ...backend.env }
}

/** Until what a kill at `killedAt` left is older than the grace. */
const pastGrace = (killedAt: number) => sleep(Math.max(0, killedAt + GRACE_MS + 100 - Date.now()))

/** `packs <args>` on the backend's site (in this process, with its AWS credentials); asserts its exit code. */
async function packs(args: string[], backend: Backend, code: number): Promise<CliResult> {
  const result = await runCli(args, undefined, siteEnv(backend))
  assert.equal(result.code, code, `packs ${args.join(' ')}:\n${result.stdout}${result.stderr}`)
  return result
}

/**
 * What the store really holds, read without the code under test: every file
 * under the files directory (a `.partial` among them), or every object and
 * pending multipart upload (`pending-upload:<key>`) in the bucket.
 */
async function storeContents(backend: Backend): Promise<string[]> {
  if (backend.bucket) {
    const client = backend.bucket.client()
    try {
      return await bucketContents(client, backend.bucket.bucket)
    } finally {
      client.destroy()
    }
  }
  const root = path.join(backend.dataDir, 'files')
  if (!fs.existsSync(root)) return []
  // Read while `packs import` runs: a `.partial` listed may be renamed before its stat (then the whole file is listed next time).
  return (fs.readdirSync(root, { recursive: true }) as string[])
    .filter((p) => fs.statSync(path.join(root, p), { throwIfNoEntry: false })?.isFile() === true)
    .map((p) => path.basename(p))
    .sort()
}

/** The invariants a crash must never break, checked straight in the database and the store. */
async function assertConsistent(backend: Backend, when: string): Promise<{ files: number; packs: number }> {
  const db = await openDatabase(backend.databaseUrl)
  try {
    const rows = (await db.selectFrom('files').select('storage_key').execute()).map((r) => r.storage_key).sort()
    assert.deepEqual(await storeContents(backend), rows, `${when}: the store holds exactly the files that have rows (no orphan, no row without bytes, no unfinished write)`)
    const bare = await db.selectFrom('packs').leftJoin('versions', 'versions.pack_id', 'packs.id').select('packs.pack_id').where('versions.id', 'is', null).execute()
    assert.deepEqual(bare, [], `${when}: every pack has a version`)
    const versionsWithoutFile = await db.selectFrom('versions').leftJoin('files', 'files.id', 'versions.file_id').select('versions.id').where('files.id', 'is', null).execute()
    assert.deepEqual(versionsWithoutFile, [], `${when}: every version has its file row`)
    const publishedUploads = await db.selectFrom('uploads').innerJoin('versions', 'versions.file_id', 'uploads.file_id').select('uploads.id').execute()
    assert.deepEqual(publishedUploads, [], `${when}: no pending upload holds a published file`)
    const packs = await db.selectFrom('packs').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()
    return { files: rows.length, packs: Number(packs.n) }
  } finally {
    await db.destroy()
  }
}

/**
 * Whether the large upload is being stored: a pending multipart upload in the
 * bucket (nothing else here is large enough for one), or a `.partial` file
 * over one part's size on disk. What the kill must interrupt, seen in the store itself.
 */
async function largeWriteUnderWay(backend: Backend): Promise<boolean> {
  if (backend.bucket) return (await storeContents(backend)).some((key) => key.startsWith('pending-upload:'))
  const root = path.join(backend.dataDir, 'files')
  if (!fs.existsSync(root)) return false
  return (fs.readdirSync(root, { recursive: true }) as string[])
    .some((p) => p.endsWith('.partial') && (fs.statSync(path.join(root, p), { throwIfNoEntry: false })?.size ?? 0) >= PART_BYTES)
}

interface LogLine { msg: string; trigger?: string; repaired?: number; remaining?: number }

function logLines(server: RunningServer): LogLine[] {
  return server.stdout().split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as LogLine)
}

/** The summary line of the check the server runs once it listens. */
async function startUpCheck(server: RunningServer): Promise<LogLine> {
  const deadline = Date.now() + 60_000
  for (;;) {
    const summary = logLines(server).find((l) => l.trigger === 'start-up' && l.msg.startsWith('consistency check: checked'))
    if (summary) return summary
    if (Date.now() > deadline) throw new Error(`no start-up consistency check in the log:\n${server.stdout()}\n${server.stderr()}`)
    await sleep(50)
  }
}

/** A version archive with some incompressible padding, so that storing it takes a moment. */
function archive(padKiB: number): Promise<Buffer> {
  return zip({
    'pack.mcmeta': JSON.stringify({ pack: { pack_format: 48, description: 'crash test' } }),
    'data/crash/pad.bin': randomBytes(padKiB * 1024),
  })
}

function form(fields: Record<string, string>, file?: { bytes: Buffer; name: string }): FormData {
  const data = new FormData()
  for (const [name, value] of Object.entries(fields)) data.set(name, value)
  if (file) data.set('file', new Blob([new Uint8Array(file.bytes)]), file.name)
  return data
}

/** Writes of every kind kept in flight against one server until it dies. */
class Load {
  readonly stop = new AbortController()
  sent = 0
  readonly counts = { published: 0, versions: 0, draftsDeleted: 0 }
  private readonly running: Promise<unknown>[] = []

  constructor(private readonly url: string, private readonly auth: Record<string, string>, private readonly base: string, private readonly round: number) {}

  start(): void {
    this.running.push(this.bigUpload(), this.publishes(), this.versions(), this.draftDeletes())
  }

  /** Waits for every loop to notice the server is gone. */
  async finish(): Promise<void> {
    this.stop.abort()
    await Promise.allSettled(this.running)
  }

  private async post(pathname: string, body: FormData | string, json = false): Promise<Response> {
    // A form is encoded here, whole, and sent as bytes: undici streams a FormData body itself, and on Node 24
    // it throws from that stream ("ReadableStream is already closed") when the server dies mid-body,
    // outside any promise the test holds.
    const encoded = body instanceof FormData ? new Request('http://form.invalid/', { method: 'POST', body }) : undefined
    const type = json ? 'application/json' : encoded?.headers.get('content-type')
    return fetch(`${this.url}${pathname}`, {
      method: 'POST',
      headers: type ? { ...this.auth, 'content-type': type } : this.auth,
      body: encoded ? new Uint8Array(await encoded.arrayBuffer()) : body,
      signal: this.stop.signal,
    })
  }

  /** 64 MiB dripped in 256 KiB chunks: still arriving when the server dies, with S3 parts stored. */
  private async bigUpload(): Promise<void> {
    const boundary = `----packsCrash${randomUUID()}`
    const head = Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="kind"\r\n\r\nmedia\r\n`
      + `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.png"\r\nContent-Type: image/png\r\n\r\n`,
    )
    const chunk = Buffer.alloc(256 * 1024, 0x5a)
    const total = BIG_UPLOAD_BYTES
    // node:http rather than fetch with a ReadableStream body (see post()): here the socket's error ends
    // the request, and writes wait for the socket to drain.
    const request = http.request(new URL('/api/uploads/', this.url), {
      method: 'POST',
      headers: { ...this.auth, 'content-type': `multipart/form-data; boundary=${boundary}` },
    })
    const done = new Promise<void>((resolve) => {
      request.on('error', () => resolve())
      request.once('response', (response) => {
        response.resume()
        response.once('end', resolve)
        response.on('error', () => resolve())
      })
    })
    const stop = () => request.destroy()
    this.stop.signal.addEventListener('abort', stop, { once: true })
    const gone = () => request.destroyed
    const write = async (bytes: Buffer) => {
      if (!request.write(bytes)) await Promise.race([new Promise((resolve) => request.once('drain', resolve)), done])
    }
    await write(Buffer.concat([head, png(1, 1)]))
    while (!gone()) {
      await sleep(20)
      if (gone()) break
      if (this.sent >= total) {
        request.end(`\r\n--${boundary}--\r\n`)
        break
      }
      await write(chunk)
      this.sent += chunk.length
    }
    await done
    this.stop.signal.removeEventListener('abort', stop)
  }

  /** Draft, archive, two thumbnails (the older one is deleted on publish), publish; again. */
  private async publishes(): Promise<void> {
    for (let i = 0; !this.stop.signal.aborted; i++) {
      try {
        const draft = randomUUID()
        await this.post('/api/draft/', JSON.stringify({ draft, data: { title: `Crash ${this.round} ${i} ${draft.slice(0, 8)}`, version_name: '1.0' } }), true)
        await this.post('/api/uploads/', form({ kind: 'version', draft_uuid: draft }, { bytes: await archive(128), name: 'p.zip' }))
        await this.post('/api/uploads/', form({ kind: 'thumbnail', draft_uuid: draft }, { bytes: png(4, 4, [1, 2, 3]), name: 'a.png' }))
        await this.post('/api/uploads/', form({ kind: 'thumbnail', draft_uuid: draft }, { bytes: png(5, 5, [3, 2, 1]), name: 'b.png' }))
        const res = await this.post('/api/draft/publish/', JSON.stringify({ draft }), true)
        if (res.status === 201) this.counts.published += 1
      } catch {
        return
      }
    }
  }

  private async versions(): Promise<void> {
    for (let i = 0; !this.stop.signal.aborted; i++) {
      try {
        const res = await this.post(`/api/packs/${this.base}/versions/`, form({ version_name: `r${this.round}.${i}` }, { bytes: await archive(512), name: 'v.zip' }))
        if (res.status === 201) this.counts.versions += 1
      } catch {
        return
      }
    }
  }

  private async draftDeletes(): Promise<void> {
    while (!this.stop.signal.aborted) {
      try {
        const draft = randomUUID()
        await this.post('/api/draft/', JSON.stringify({ draft, data: { title: 'to be deleted' } }), true)
        for (const n of [1, 2, 3]) await this.post('/api/uploads/', form({ kind: 'media', draft_uuid: draft }, { bytes: png(n + 2, n + 2), name: `${n}.png` }))
        const res = await fetch(`${this.url}/api/draft/?draft=${draft}`, { method: 'DELETE', headers: this.auth, signal: this.stop.signal })
        if (res.status === 200) this.counts.draftsDeleted += 1
      } catch {
        return
      }
    }
  }
}

const COMBINATION = process.env.PACKS_TEST_DATABASE_URL ? 'PostgreSQL + S3 + Redis' : 'SQLite + disk'

describe(`kill -9 on ${COMBINATION}`, () => {
  let backend: Backend
  let auth: Record<string, string>
  const base = 'crasher/crash-base'
  /** The server of the last restart, left running for the next test's uploads (which stop it): a start saved. */
  let lastServer: RunningServer | undefined
  after(() => lastServer?.stop())

  before(async () => {
    backend = await makeBackend()
    await packs(['user', 'create', 'crasher', '--password', 'crasher-password'], backend, 0)
    const token = lastLine((await packs(['token', 'create', 'crasher'], backend, 0)).stdout)
    auth = { authorization: `Bearer crasher ${token}` }
  })

  test('mid-upload, mid-publish, mid-version and mid-delete: the restart removes what the kill left; rows and files agree', async (t) => {
    let killedAt = 0
    for (let round = 1; round <= ROUNDS; round++) {
      // What the last kill left must be older than the grace when the start-up check looks.
      await pastGrace(killedAt)
      const server = await startServer({ dataDir: backend.dataDir, env: siteEnv(backend) })
      try {
        const check = await startUpCheck(server)
        t.diagnostic(`restart ${round}: ${check.msg}`)
        assert.equal(check.remaining, 0, check.msg)
        if (round > 1) {
          // At the least, the large upload that was arriving when the server died.
          assert.ok((check.repaired ?? 0) >= 1, `round ${round}: the start-up check repaired what the kill left: ${check.msg}`)
          assert.ok(logLines(server).some((l) => /^consistency check: repaired unfinished-write /.test(l.msg)), 'the unfinished upload was found and removed')
        }
        await assertConsistent(backend, `after restart ${round}`)
        const doctor = await runCli(['doctor'], server.env)
        assert.equal(doctor.code, 0, `packs doctor: ${doctor.stdout}${doctor.stderr}`)
        assert.match(doctor.stdout, /no problems/)

        if (round === 1) {
          const draft = randomUUID()
          const headers = { ...auth, 'content-type': 'application/json' }
          await fetch(`${server.url}/api/draft/`, { method: 'POST', headers, body: JSON.stringify({ draft, data: { title: 'Crash Base', version_name: '0.1' } }) })
          const uploaded = await fetch(`${server.url}/api/uploads/`, { method: 'POST', headers: auth, body: form({ kind: 'version', draft_uuid: draft }, { bytes: await archive(16), name: 'b.zip' }) })
          assert.equal(uploaded.status, 200, await uploaded.text())
          const published = await fetch(`${server.url}/api/draft/publish/`, { method: 'POST', headers, body: JSON.stringify({ draft }) })
          assert.equal(published.status, 201, await published.text())
        }

        const load = new Load(server.url, auth, base, round)
        load.start()
        // Killed once the store holds part of the large upload (what the client sent may still sit in socket
        // buffers of a loaded machine), at a different moment of every loop each round.
        const deadline = Date.now() + 60_000
        let storing = false
        while (!(storing = await largeWriteUnderWay(backend)) && Date.now() < deadline) await sleep(50)
        assert.ok(storing, `the large upload is being stored (${(load.sent / MiB).toFixed(1)} MiB sent)`)
        await sleep(200 + Math.floor(Math.random() * 800))
        server.child.kill('SIGKILL')
        const exit = await server.exited
        assert.equal(exit.signal, 'SIGKILL')
        await load.finish()
        t.diagnostic(`round ${round}: killed after ${(load.sent / MiB).toFixed(1)} MiB of the large upload, ${JSON.stringify(load.counts)} completed`)
        assert.ok(load.sent < BIG_UPLOAD_BYTES, 'the large upload was cut off')
      } finally {
        if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL')
        await server.exited
        killedAt = Date.now()
      }
    }

    await pastGrace(killedAt)
    const server = await startServer({ dataDir: backend.dataDir, env: siteEnv(backend) })
    lastServer = server
    const check = await startUpCheck(server)
    assert.equal(check.remaining, 0, check.msg)
    const { packs } = await assertConsistent(backend, 'after the last restart')
    assert.ok(packs >= 1)
    const latest = await fetch(`${server.url}/api/packs/${base}/latest`, { headers: { 'x-master-password': SITE_PASSWORD } })
    assert.equal(latest.status, 200)
    const download = await fetch((await latest.json() as { download_url: string }).download_url, { headers: { 'x-master-password': SITE_PASSWORD } })
    assert.equal(download.status, 200, 'the newest version is whole and served')
    await download.arrayBuffer()
    const doctor = await runCli(['doctor'], server.env)
    assert.equal(doctor.code, 0, doctor.stdout + doctor.stderr)
  })

  test('packs import killed midway: `packs doctor --repair` or a second run leaves no orphan file', async () => {
    // Files enough to kill the import among them, however many writes the rounds above completed: uploaded
    // to the server of the last restart (or, had the test above stopped before it, to one started here).
    const server = lastServer ?? await startServer({ dataDir: backend.dataDir, env: siteEnv(backend) })
    lastServer = server
    try {
      for (let n = 1; n <= 10; n++) {
        const res = await fetch(`${server.url}/api/uploads/`, { method: 'POST', headers: auth, body: form({ kind: 'thumbnail' }, { bytes: png(n, n), name: `${n}.png` }) })
        assert.equal(res.status, 200, await res.text())
      }
    } finally {
      lastServer = undefined
      await server.stop()
    }
    const exportDir = path.join(tempDir('packs-crash-export-'), 'site')
    removeLater.push(path.dirname(exportDir))
    await packs(['export', exportDir], backend, 0)
    const exported = fs.readdirSync(path.join(exportDir, 'files')).length
    assert.ok(exported >= 10, `enough files to kill the import among them (${exported})`)

    for (const afterwards of ['doctor', 'rerun'] as const) {
      const target = await killedImport(exportDir)
      if (afterwards === 'doctor') {
        const found = await packs(['doctor'], target, 1)
        assert.match(found.stdout, /^found {4}interrupted-import /m)
        // Nothing else runs on this site: every file without a row is debris, however new.
        const repaired = await packs(['doctor', '--repair', '--min-age', '0'], target, 0)
        assert.match(repaired.stdout, /^repaired interrupted-import /m)
        assert.match(repaired.stdout, /^repaired orphan-object /m)
        assert.deepEqual(await storeContents(target), [], 'nothing of the interrupted import is left')
      }
      await packs(['import', exportDir], target, 0)
      const { files } = await assertConsistent(target, `import after a killed one (${afterwards})`)
      assert.equal(files, exported)
      assert.match((await packs(['doctor'], target, 0)).stdout, /no problems/)
    }
  })

  /** A fresh site of the same kind, into which `packs import` was killed after it stored some files and before its rows. */
  async function killedImport(exportDir: string): Promise<Backend> {
    for (let attempt = 1; attempt <= 5; attempt++) {
      const target = await makeBackend()
      // A real process: only a process can be killed with -9 midway.
      const { child, result: exited } = spawnCli(['import', exportDir], undefined, siteEnv(target))
      let done = false
      void exited.then(() => { done = true })
      // A few files in: some stored whole (bytes without rows), perhaps one half-written.
      while (!done && (await storeContents(target)).length < 3) await sleep(5)
      child.kill('SIGKILL')
      await exited
      const db = await openDatabase(target.databaseUrl)
      try {
        const users = await db.selectFrom('users').select('id').execute()
        if (users.length === 0 && (await storeContents(target)).length >= 3) return target
      } finally {
        await db.destroy()
      }
    }
    throw new Error('the import finished before it could be killed, five times')
  }
})
