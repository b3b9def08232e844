// Backends unavailable for a while: object storage,
// the database and Redis are really stopped (s3rver closed, the files
// directory gone, PostgreSQL shut down, SQLite locked by another connection,
// redis-server terminated) and started again. While one is down, requests that
// need it get 503 with a `detail` and Retry-After, its real cause is logged
// once, requests that do not need it still work, and nothing half-written is
// left; once it is back, the same process serves again without a restart (the
// S3 client, the pg Pool and node-redis reconnect by themselves).
//
// Each backend combination takes down its own backends: the sqlite one the
// files directory and the SQLite file (and checks which driver errors count as
// "unavailable"); the scaled one S3, PostgreSQL and Redis, each beside the
// combination's other backends. PostgreSQL and Redis outages use a server of
// their own (test/helpers/pg-cluster.ts, test/helpers/redis.ts), since
// stopping the run's shared one would fail other tests.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { createHash, randomBytes, randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import type SQLite from 'better-sqlite3'
import { loadSqlite } from '../../src/db/index.js'
import pg from 'pg'
import { sql } from 'kysely'
import type { LightMyRequestResponse } from 'fastify'
import { LocalFileStore } from '../../src/storage/local.js'
import { RETRY_AFTER_UNAVAILABLE_SECONDS, databaseUnavailable } from '../../src/errors.js'
import { redisUnavailable } from '../../src/shared-state/redis.js'
import { ClientClosedError, ClientOfflineError, ErrorReply, SocketClosedUnexpectedlyError } from 'redis'
import { expectError, makeSite, storedFiles, type TestSite, type TestUser } from '../helpers/app.js'
import { datapack, mp4, multipart, png, type Part } from '../helpers/fixtures.js'
import { pathOf, publishPack, upload, type PackJson } from '../helpers/packs.js'
import { pgClusterSkip, startPgCluster, type PgCluster } from '../helpers/pg-cluster.js'
import { redisSkip, startRedis, type RedisServer } from '../helpers/redis.js'
import { onPostgres } from '../helpers/database.js'
import { ownS3Server, s3Selected, stopS3Server, type OwnS3Server } from '../helpers/s3.js'
import { tempDir } from '../helpers/temp.js'

const MiB = 1024 * 1024

/** The run's combination (scripts/run-tests.js sets PACKS_TEST_*): the scaled one has PostgreSQL, S3 and Redis. */
const SCALED = onPostgres || s3Selected()
const runsOnSqlite: string | false = SCALED ? 'runs on the sqlite combination: SQLite + disk' : false
const runsOnScaled: string | false = SCALED ? false : 'runs on the scaled combination: PostgreSQL + S3 + Redis'

interface LogLine {
  level: number
  msg: string
  err?: { type?: string; message?: string; stack?: string }
}

/** A TestSite whose log lines (error and above) are kept, to check what a failure logs. */
interface OutageSite extends TestSite {
  logs: LogLine[]
}

async function outageSite(env: Record<string, string> = {}): Promise<OutageSite> {
  const logs: LogLine[] = []
  const stream = { write: (line: string) => { logs.push(JSON.parse(line) as LogLine) } }
  const site = await makeSite(env, { logger: { level: 'error', stream } })
  return { ...site, logs }
}

/**
 * Sends one request that needs the missing backend: 503, `{detail}` matching
 * `detail`, Retry-After, and exactly one error line whose err carries the real
 * cause (matching `cause`).
 */
async function expectUnavailable(site: OutageSite, send: () => Promise<LightMyRequestResponse>, detail: RegExp, cause: RegExp): Promise<void> {
  const logged = site.logs.length
  const res = await send()
  expectError(res, 503, detail)
  assert.equal(res.headers['retry-after'], String(RETRY_AFTER_UNAVAILABLE_SECONDS))
  const errors = site.logs.slice(logged).filter((line) => line.level >= 50)
  assert.equal(errors.length, 1, `one error line per failed request: ${JSON.stringify(errors, null, 1)}`)
  assert.match(errors[0]!.err?.message ?? '', cause, 'the logged error carries the real cause')
  assert.ok(errors[0]!.err?.stack, 'with its stack')
}

function postForm(site: TestSite, user: TestUser, url: string, parts: Part[]) {
  const form = multipart(parts)
  return site.app.inject({ method: 'POST', url, headers: { ...user.headers, ...form.headers }, payload: form.payload })
}

const uploadForm = (kind: string, bytes: Buffer): Part[] => [{ name: 'kind', value: kind }, { name: 'file', value: bytes, filename: `f.${kind === 'version' ? 'zip' : 'bin'}` }]

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex')

async function rowCounts(site: TestSite): Promise<Record<string, number>> {
  const counts: Record<string, number> = {}
  for (const table of ['files', 'uploads', 'drafts', 'packs', 'versions'] as const) {
    const row = await site.app.db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()
    counts[table] = Number(row.n)
  }
  return counts
}

/** What the store holds (file names on disk, object keys and pending uploads on S3), wherever its directory is. */
async function storedKeys(site: TestSite): Promise<string[]> {
  const store = site.app.store
  if (!(store instanceof LocalFileStore)) return storedFiles(site)
  return (fs.readdirSync(store.root, { recursive: true }) as string[])
    .filter((name) => fs.statSync(path.join(store.root, name)).isFile())
    .sort()
}

/** Every file row has its bytes and every stored object its row: nothing half-written. */
async function expectConsistent(site: TestSite): Promise<void> {
  const rows = (await site.app.db.selectFrom('files').select('storage_key').execute()).map((r) => r.storage_key).sort()
  const stored = (await storedKeys(site)).map((name) => path.basename(name)).sort()
  assert.deepEqual(stored, rows, 'stored files and file rows match one to one (no pending upload either)')
}

function updateCheck(site: TestSite, pack: { namespace: string; pack_id: string }, headers: Record<string, string> = {}) {
  return site.app.inject({ method: 'GET', url: `/api/packs/${pack.namespace}/${pack.pack_id}/latest`, headers: { ...site.gate, ...headers } })
}

/** Polls `send` until it answers `status` (a client reconnecting in the background), at most `ms`. */
async function eventually(send: () => Promise<LightMyRequestResponse>, status: number, ms = 15_000): Promise<LightMyRequestResponse> {
  const deadline = Date.now() + ms
  for (;;) {
    const res = await send()
    if (res.statusCode === status || Date.now() > deadline) return res
    await sleep(100)
  }
}

after(() => stopS3Server())

/**
 * The database outage's own cluster, begun as this file loads where that test
 * runs: initdb is seconds of waiting on the disk, spent while the storage
 * outage runs instead of before the database one.
 */
const pgClusterStarting: Promise<PgCluster> | undefined = runsOnScaled || pgClusterSkip ? undefined : startPgCluster()
// Its failure is the database test's (its before() awaits it), not an unhandled rejection before then.
pgClusterStarting?.catch(() => {})
after(async () => { await (await pgClusterStarting?.catch(() => undefined))?.destroy() })

interface StorageOutage {
  name: string
  /** Whether this run's combination is not the one this store belongs to. */
  skip: string | false
  /** Starts the store; returns the site's STORAGE_URL. */
  start(): Promise<string>
  down(): Promise<void>
  up(): Promise<void>
  cause: RegExp
  cleanup(): Promise<void>
}

let s3: OwnS3Server | undefined
const filesDir = path.join(os.tmpdir(), `packs-outage-files-${randomUUID()}`)
const storageOutages: StorageOutage[] = [
  {
    name: 'S3: the s3rver closed, then started again on the same port and directory',
    skip: runsOnScaled,
    async start() {
      s3 = await ownS3Server()
      return (await s3.bucket()).storageUrl
    },
    down: () => s3!.stop(),
    up: () => s3!.start(),
    cause: /ECONNREFUSED/,
    cleanup: async () => { await s3?.close() },
  },
  {
    name: 'local disk: the files directory replaced by a file (a volume gone), then put back',
    skip: runsOnSqlite,
    start: async () => `file:${filesDir}`,
    async down() {
      fs.renameSync(filesDir, `${filesDir}.away`)
      fs.writeFileSync(filesDir, 'not a directory')
    },
    async up() {
      fs.rmSync(filesDir)
      fs.renameSync(`${filesDir}.away`, filesDir)
    },
    cause: /ENOTDIR|EEXIST/,
    cleanup: async () => { fs.rmSync(filesDir, { recursive: true, force: true }) },
  },
]

for (const outage of storageOutages) {
  describe(`storage unavailable: ${outage.name}`, { skip: outage.skip }, () => {
    let site: OutageSite
    let alice: TestUser
    let pack: PackJson
    let archive: Buffer
    let archiveFileId: string
    let rowsBefore: Record<string, number>

    before(async () => {
      site = await outageSite({ STORAGE_URL: await outage.start() })
      alice = await site.user('alice')
      archive = await datapack(48)
      pack = await publishPack(site, alice, { title: 'Outage Pack' }, { archive, thumbnail: true })
      archiveFileId = /\/api\/files\/([0-9a-f-]{36})\//.exec(pack.versions[0]!.download_url)![1]!
      rowsBefore = await rowCounts(site)
      await expectConsistent(site)
    })
    after(async () => {
      await site?.close()
      await outage.cleanup()
    })

    test('while it is down: uploads and downloads get 503 with detail, the rest still works', async () => {
      await outage.down()
      try {
        await whileDown()
      } finally {
        await outage.up()
      }
    })

    async function whileDown() {
      const detail = /^storage is unavailable, try again$/
      await expectUnavailable(site, () => postForm(site, alice, '/api/uploads/', uploadForm('thumbnail', png())), detail, outage.cause)
      // Above one part: the multipart-upload path of the S3 store.
      await expectUnavailable(site, () => postForm(site, alice, '/api/uploads/', uploadForm('media', Buffer.concat([mp4(), randomBytes(6 * MiB)]))), detail, outage.cause)
      await expectUnavailable(site, () => postForm(site, alice, `/api/packs/${pack.namespace}/${pack.pack_id}/versions/`, [
        { name: 'version_name', value: '2.0.0' },
        { name: 'file', value: archive, filename: 'v2.zip' },
      ]), detail, outage.cause)
      // The row is there but its bytes cannot be read: unavailable, not "not found".
      await expectUnavailable(site, () => site.app.inject({ method: 'GET', url: `/api/files/${archiveFileId}/`, headers: site.gate }), detail, outage.cause)
      await expectUnavailable(site, () => site.app.inject({ method: 'GET', url: `/api/files/${archiveFileId}/`, headers: { ...site.gate, range: 'bytes=0-9' } }), detail, outage.cause)

      // What the database alone answers goes on: HEAD of a file, the update-check, the listing, a pack.
      const head = await site.app.inject({ method: 'HEAD', url: `/api/files/${archiveFileId}/`, headers: site.gate })
      assert.equal(head.statusCode, 200)
      const latest = await updateCheck(site, pack)
      assert.equal(latest.statusCode, 200, latest.body)
      assert.equal((latest.json() as { version: string }).version, '1.0.0')
      assert.equal((await site.app.inject({ method: 'GET', url: '/api/packs/', headers: site.gate })).statusCode, 200)
      assert.equal((await site.app.inject({ method: 'GET', url: `/api/packs/${pack.namespace}/${pack.pack_id}/`, headers: site.gate })).statusCode, 200)
    }

    test('once it is back: nothing half-written was left, and the same process serves again', async () => {
      assert.deepEqual(await rowCounts(site), rowsBefore, 'no row from the failed requests')
      await expectConsistent(site)

      const served = await site.app.inject({ method: 'GET', url: `/api/files/${archiveFileId}/`, headers: site.gate })
      assert.equal(served.statusCode, 200)
      assert.equal(sha256(served.rawPayload), sha256(archive))
      const big = Buffer.concat([mp4(), randomBytes(6 * MiB)])
      const uploaded = await upload(site, alice, 'media', big)
      const download = await site.app.inject({ method: 'GET', url: pathOf(uploaded.url), headers: site.gate })
      assert.equal(sha256(download.rawPayload), sha256(big))
      const res = await postForm(site, alice, `/api/packs/${pack.namespace}/${pack.pack_id}/versions/`, [
        { name: 'version_name', value: '2.0.0' },
        { name: 'file', value: archive, filename: 'v2.zip' },
      ])
      assert.equal(res.statusCode, 201, res.body)
      assert.equal(((await updateCheck(site, pack)).json() as { version: string }).version, '2.0.0')
      await expectConsistent(site)
      assert.deepEqual(site.logs.filter((line) => line.level >= 50).length, 5, 'only the five failed requests logged errors')
    })
  })
}

describe('database unavailable: PostgreSQL shut down, then started again', { skip: runsOnScaled || pgClusterSkip }, () => {
  let cluster: PgCluster
  let site: OutageSite
  let alice: TestUser
  let pack: PackJson
  let rowsBefore: Record<string, number>
  let storedBefore: string[]
  const detail = /^the database is unavailable, try again$/

  before(async () => {
    cluster = await pgClusterStarting!
    const admin = new pg.Client({ connectionString: cluster.adminUrl })
    await admin.connect()
    await admin.query('create database packs_outage')
    await admin.end()
    site = await outageSite({ DATABASE_URL: cluster.urlOf('packs_outage') })
    alice = await site.user('alice')
    pack = await publishPack(site, alice, { title: 'Outage Pack' })
    // The update-check of this pack is now cached in the process.
    assert.equal((await updateCheck(site, pack)).statusCode, 200)
    rowsBefore = await rowCounts(site)
    storedBefore = await storedKeys(site)
  })
  after(async () => {
    await site?.close()
    await cluster?.destroy()
  })

  test('while it is down: 503 with detail for what needs it; a query cut by the shutdown is classified too', async () => {
    // In flight when the server shuts down: ended with 57P01 admin_shutdown or a terminated connection.
    const inFlight = sql`select pg_sleep(30)`.execute(site.app.db).then(() => undefined, (error: unknown) => error)
    await sleep(200)
    await cluster.stop()
    const cut = await inFlight
    assert.ok(cut instanceof Error, 'the running query failed')
    assert.ok(databaseUnavailable(cut), `classified as unavailable: ${String(cut)} (code ${(cut as { code?: string }).code})`)

    const cause = /ECONNREFUSED/
    await expectUnavailable(site, () => updateCheck(site, { namespace: pack.namespace, pack_id: 'not-cached' }), detail, cause)
    await expectUnavailable(site, () => site.app.inject({ method: 'GET', url: '/api/packs/', headers: site.gate }), detail, cause)
    await expectUnavailable(site, () => site.app.inject({ method: 'GET', url: `/api/packs/${pack.namespace}/${pack.pack_id}/`, headers: site.gate }), detail, cause)
    await expectUnavailable(site, () => postForm(site, alice, '/api/uploads/', uploadForm('thumbnail', png())), detail, cause)
    await expectUnavailable(site, () => site.app.inject({ method: 'POST', url: '/api/draft/', headers: alice.headers, payload: { draft: randomUUID(), data: { title: 'x' } } }), detail, cause)
    // A pack whose answer is cached in this process needs no database to be answered.
    assert.equal((await updateCheck(site, pack)).statusCode, 200)
  })

  test('once it is back: the first request is served (the pool reconnects), and nothing was half-written', async () => {
    await cluster.start()
    const list = await site.app.inject({ method: 'GET', url: '/api/packs/', headers: site.gate })
    assert.equal(list.statusCode, 200, list.body)
    expectError(await updateCheck(site, { namespace: pack.namespace, pack_id: 'not-cached' }), 404)
    assert.deepEqual(await rowCounts(site), rowsBefore)
    assert.deepEqual(await storedKeys(site), storedBefore, 'no bytes stored for the refused upload')
    await upload(site, alice, 'thumbnail', png())
    await expectConsistent(site)
  })
})

describe('database busy: SQLite locked by another connection past busy_timeout', { skip: runsOnSqlite }, () => {
  let site: OutageSite
  let alice: TestUser
  let pack: PackJson
  let lock: SQLite.Database

  before(async () => {
    const dir = tempDir('packs-busy-')
    const file = path.join(dir, 'packs.db')
    site = await outageSite({ DATABASE_URL: `sqlite:${file}` })
    alice = await site.user('alice')
    pack = await publishPack(site, alice, { title: 'Busy Pack' })
    // The driver this Node runs (13, or 12 on Node 20), as the server loads it.
    lock = new (await loadSqlite())(file)
  })
  after(async () => {
    lock?.close()
    await site?.close()
  })

  test('a write waits busy_timeout, then gets 503; reads go on (WAL); after the lock, writes work again', async () => {
    lock.exec('begin immediate')
    try {
      await expectUnavailable(site, () => site.app.inject({
        method: 'POST', url: '/api/draft/', headers: alice.headers, payload: { draft: randomUUID(), data: { title: 'while locked' } },
      }), /^the database is unavailable, try again$/, /SQLITE_BUSY|database is locked/)
      assert.equal((await updateCheck(site, { namespace: pack.namespace, pack_id: 'not-cached' })).statusCode, 404, 'a read is not blocked')
    } finally {
      lock.exec('rollback')
    }
    const saved = await site.app.inject({ method: 'POST', url: '/api/draft/', headers: alice.headers, payload: { draft: randomUUID(), data: { title: 'after' } } })
    assert.equal(saved.statusCode, 200, saved.body)
  })
})

describe('Redis unavailable: redis-server stopped, then started again on the same port', { skip: runsOnScaled || redisSkip }, () => {
  let redis: RedisServer
  let port: number
  let site: OutageSite
  let alice: TestUser
  let staff: TestUser
  let pack: PackJson
  const detail = /^a shared service is unavailable, try again$/
  // Offline while reconnecting, or the socket closed under a command sent just before.
  const cause = /offline|closed|ECONNREFUSED|ECONNRESET/i

  before(async () => {
    redis = await startRedis()
    port = Number(new URL(redis.url).port)
    site = await outageSite({ REDIS_URL: redis.url })
    alice = await site.user('alice')
    staff = await site.user('staffer', { staff: true })
    pack = await publishPack(site, alice, { title: 'Shared Pack' })
    assert.equal((await updateCheck(site, pack)).statusCode, 200)
  })
  after(async () => {
    await site?.close()
    await redis?.stop()
  })

  test('while it is down: the gate-header update-check fails closed with 503 (no stale answer from memory); so do statistics', async () => {
    await redis.stop()
    const etag = String((await eventually(() => updateCheck(site, pack), 503)).headers.etag ?? '')
    assert.equal(etag, '', 'no answer, not even a cached one')
    await expectUnavailable(site, () => updateCheck(site, pack), detail, cause)
    await expectUnavailable(site, () => updateCheck(site, pack, { 'if-none-match': '"anything"' }), detail, cause)
    await expectUnavailable(site, () => site.app.inject({ method: 'GET', url: '/api/stats/', headers: staff.headers }), detail, cause)
    // A request that needs no Redis (a token, a database read) is not affected.
    const list = await site.app.inject({ method: 'GET', url: '/api/packs/', headers: alice.headers })
    assert.equal(list.statusCode, 200, list.body)
    // A new version is committed by the database; that the other instances cannot be told yet must not
    // turn it into an error (a retry would be a 409): the stamp is written once Redis is back.
    const added = await postForm(site, alice, `/api/packs/${pack.namespace}/${pack.pack_id}/versions/`, [
      { name: 'version_name', value: '1.5.0' },
      { name: 'file', value: await datapack(48), filename: 'v1.5.zip' },
    ])
    assert.equal(added.statusCode, 201, added.body)
  })

  test('once it is back (empty: no persistence), the client reconnects by itself and answers are right', async () => {
    redis = await startRedis({ port })
    const latest = await eventually(() => updateCheck(site, pack), 200)
    assert.equal(latest.statusCode, 200, latest.body)
    assert.equal((latest.json() as { version: string }).version, '1.5.0', 'the version added while Redis was down')
    assert.equal((await site.app.inject({ method: 'GET', url: '/api/stats/', headers: staff.headers })).statusCode, 200)
    // The stamps were lost with Redis's data: a new version must still be seen at once.
    const res = await postForm(site, alice, `/api/packs/${pack.namespace}/${pack.pack_id}/versions/`, [
      { name: 'version_name', value: '2.0.0' },
      { name: 'file', value: await datapack(48), filename: 'v2.zip' },
    ])
    assert.equal(res.statusCode, 201, res.body)
    assert.equal(((await updateCheck(site, pack)).json() as { version: string }).version, '2.0.0')
  })
})

describe('which driver errors mean "unavailable" (503) rather than a fault (500)', { skip: runsOnSqlite }, () => {
  const pgError = (code: string) => Object.assign(new pg.DatabaseError(`server error ${code}`, 0, 'error'), { code, severity: 'FATAL' })
  const socketError = (code: string, syscall: string) => Object.assign(new Error(`${syscall} ${code}`), { code, syscall })

  test('database', () => {
    for (const code of ['08006', '08001', '53300', '53100', '57P01', '57P02', '57P03']) assert.ok(databaseUnavailable(pgError(code)), code)
    // Unique violation, bad input, syntax, query canceled by statement_timeout, serialization: the query's, not the server's.
    for (const code of ['23505', '22P02', '42601', '57014', '40001']) assert.ok(!databaseUnavailable(pgError(code)), code)
    for (const code of ['SQLITE_BUSY', 'SQLITE_BUSY_SNAPSHOT', 'SQLITE_LOCKED', 'SQLITE_IOERR_WRITE', 'SQLITE_FULL', 'SQLITE_CANTOPEN']) {
      assert.ok(databaseUnavailable(Object.assign(new Error('sqlite'), { code })), code)
    }
    for (const code of ['SQLITE_CONSTRAINT_UNIQUE', 'SQLITE_MISMATCH', 'SQLITE_ERROR']) assert.ok(!databaseUnavailable(Object.assign(new Error('sqlite'), { code })), code)
    assert.ok(databaseUnavailable(socketError('ECONNREFUSED', 'connect')))
    assert.ok(databaseUnavailable(new AggregateError([socketError('ECONNREFUSED', 'connect'), socketError('ECONNREFUSED', 'connect')], '')))
    assert.ok(databaseUnavailable(new Error('Connection terminated unexpectedly')))
    assert.ok(databaseUnavailable(new Error('timeout exceeded when trying to connect')))
    // A client that hung up mid-request is not the database.
    assert.ok(!databaseUnavailable(Object.assign(new Error('aborted'), { code: 'ECONNRESET' })))
    assert.ok(!databaseUnavailable(new Error('bigint 1e300 does not fit a JavaScript number')))
    assert.ok(!databaseUnavailable('ECONNREFUSED'))
  })

  test('Redis', () => {
    for (const error of [new ClientOfflineError(), new ClientClosedError(), new SocketClosedUnexpectedlyError(), new ErrorReply('LOADING Redis is loading the dataset in memory'), new ErrorReply('READONLY You can\'t write against a read only replica.')]) {
      assert.ok(redisUnavailable(error), error.message)
    }
    for (const error of [new ErrorReply('ERR unknown command'), new ErrorReply('WRONGTYPE Operation against a key holding the wrong kind of value'), new Error('The client is offline')]) {
      assert.ok(!redisUnavailable(error), error.message)
    }
  })
})
