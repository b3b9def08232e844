// GET /readyz (src/http/health.ts): 200 while the database, the store and
// Redis (with REDIS_URL) answer; 503 with a detail naming what does not, and
// never an address or a password; ready again once it is back, without a
// restart. /metrics reports the same checks as packs_backend_up.
//
// Outages as test/e2e/backend-outage.test.ts makes them, each combination its
// own: on the scaled one PostgreSQL, S3 and Redis of this file's own, really
// stopped and started again; on the sqlite one the files directory replaced
// by a file (a volume gone) and the database's connection closed (SQLite has
// no server to stop, and in WAL mode no lock keeps a reader out).
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import type { LightMyRequestResponse } from 'fastify'
import { expectError, makeSite, type TestSite } from '../helpers/app.js'
import { onPostgres } from '../helpers/database.js'
import { pgClusterSkip, startPgCluster, type PgCluster } from '../helpers/pg-cluster.js'
import { METRICS_TOKEN, scrape, valueOf } from '../helpers/prometheus.js'
import { redisSkip, startRedis, type RedisServer } from '../helpers/redis.js'
import { ownS3Server, s3Selected, stopS3Server, type OwnS3Server } from '../helpers/s3.js'
import { tempDir } from '../helpers/temp.js'

const SCALED = onPostgres || s3Selected()
const runsOnSqlite: string | false = SCALED ? 'runs on the sqlite combination: SQLite + disk' : false
const runsOnScaled: string | false = SCALED ? false : 'runs on the scaled combination: PostgreSQL + S3 + Redis'

after(() => stopS3Server())

interface Readyz { status?: string; detail?: string; checks: Record<string, { ok: boolean; ms: number }> }

const readyz = (site: TestSite) => site.app.inject({ method: 'GET', url: '/readyz' })

/** Polls /readyz until it answers `status` (a check's results are reused for a second), at most `ms`. */
async function eventually(site: TestSite, status: number, ms = 15_000): Promise<LightMyRequestResponse> {
  const deadline = Date.now() + ms
  for (;;) {
    const res = await readyz(site)
    if (res.statusCode === status || Date.now() > deadline) return res
    await sleep(100)
  }
}

/** 503 naming `failed` (and only it), with the checks; no URL, address or secret of the site in it. */
async function expectNotReady(site: TestSite, failed: string): Promise<void> {
  const res = await eventually(site, 503)
  const detail = expectError(res, 503, new RegExp(`^not ready: ${failed} \\((answered with an error|no answer within 1\\.5 s)\\)$`))
  const body = res.json() as Readyz
  assert.equal(body.checks[failed]?.ok, false)
  for (const [name, check] of Object.entries(body.checks)) if (name !== failed) assert.equal(check.ok, true, `${name} still answers`)
  for (const secret of [site.config.databaseUrl, site.config.storageUrl, site.config.redisUrl ?? 'redis://', 'postgres', '127.0.0.1', 'password']) {
    assert.ok(!res.body.includes(secret), `the answer does not show ${secret}: ${detail}`)
  }
  const metrics = await scrape(site)
  assert.equal(valueOf(metrics, 'packs_backend_up', { backend: failed }), 0, `/metrics says ${failed} is down`)
}

async function expectReady(site: TestSite): Promise<void> {
  const res = await eventually(site, 200)
  assert.equal(res.statusCode, 200, res.body)
  const body = res.json() as Readyz
  assert.equal(body.status, 'ready')
  const expected = site.config.redisUrl ? ['database', 'redis', 'storage'] : ['database', 'storage']
  assert.deepEqual(Object.keys(body.checks).sort(), expected)
  for (const check of Object.values(body.checks)) {
    assert.equal(check.ok, true)
    assert.ok(check.ms >= 0 && check.ms < 1500, `answered within the time: ${check.ms} ms`)
  }
}

describe('normally', () => {
  let site: TestSite
  before(async () => { site = await makeSite({ PACKS_METRICS_TOKEN: METRICS_TOKEN }) })
  after(() => site?.close())

  test('200 with every backend this site runs on, to anyone (no gate, no token), uncached by anyone between', async () => {
    await expectReady(site)
    const res = await readyz(site)
    assert.equal(res.headers['cache-control'], 'no-store')
    assert.match(String(res.headers['content-type']), /^application\/json/)
    const metrics = await scrape(site)
    for (const backend of Object.keys((res.json() as Readyz).checks)) assert.equal(valueOf(metrics, 'packs_backend_up', { backend }), 1)
  })

  test('a flood of polls runs the checks about once a second, not once a poll', async () => {
    let reads = 0
    const store = site.app.store
    const get = store.get.bind(store)
    store.get = (...args) => { reads++; return get(...args) }
    try {
      await sleep(1100)
      const answers = await Promise.all(Array.from({ length: 200 }, () => readyz(site)))
      assert.ok(answers.every((res) => res.statusCode === 200))
      assert.ok(reads <= 2, `${reads} reads of the store for 200 polls`)
    } finally {
      store.get = get
    }
  })
})

describe('the database gone: SQLite\'s connection closed', { skip: runsOnSqlite }, () => {
  test('503 naming the database', async () => {
    const site = await makeSite({ PACKS_METRICS_TOKEN: METRICS_TOKEN })
    try {
      await expectReady(site)
      await site.app.db.destroy()
      await expectNotReady(site, 'database')
    } finally {
      await site.close().catch(() => {})
    }
  })
})

describe('the store gone: the files directory replaced by a file, then put back', { skip: runsOnSqlite }, () => {
  test('503 naming the storage, then ready again without a restart', async () => {
    const dir = path.join(tempDir('packs-ready-'), 'files')
    const site = await makeSite({ STORAGE_URL: `file:${dir}`, PACKS_METRICS_TOKEN: METRICS_TOKEN })
    try {
      await expectReady(site)
      fs.renameSync(dir, `${dir}.away`)
      fs.writeFileSync(dir, 'not a directory')
      await expectNotReady(site, 'storage')
      fs.rmSync(dir)
      fs.renameSync(`${dir}.away`, dir)
      await expectReady(site)
    } finally {
      await site.close()
    }
  })
})

describe('PostgreSQL shut down, then started again', { skip: runsOnScaled || pgClusterSkip }, () => {
  let cluster: PgCluster
  let site: TestSite

  before(async () => {
    cluster = await startPgCluster()
    const admin = new pg.Client({ connectionString: cluster.adminUrl })
    await admin.connect()
    await admin.query('create database packs_ready')
    await admin.end()
    // Nothing but the checks uses the database here: the webhooks' dispatcher, which polls the outbox in
    // transactions, stays off (one run saw a connection ended by the shutdown raise an error nobody listened to).
    site = await makeSite({ DATABASE_URL: cluster.urlOf('packs_ready'), PACKS_METRICS_TOKEN: METRICS_TOKEN }, { webhooks: { dispatch: false } })
  })
  after(async () => {
    await site?.close()
    await cluster?.destroy()
  })

  test('503 naming the database while it is down; 200 once it is back, without a restart', async () => {
    await expectReady(site)
    await cluster.stop()
    await expectNotReady(site, 'database')
    await cluster.start()
    await expectReady(site)
  })
})

describe('S3 closed, then started again', { skip: runsOnScaled }, () => {
  let s3: OwnS3Server
  let site: TestSite

  before(async () => {
    s3 = await ownS3Server()
    site = await makeSite({ STORAGE_URL: (await s3.bucket()).storageUrl, PACKS_METRICS_TOKEN: METRICS_TOKEN })
  })
  after(async () => {
    await site?.close()
    await s3?.close()
  })

  test('503 naming the storage while it is down; 200 once it is back', async () => {
    await expectReady(site)
    await s3.stop()
    await expectNotReady(site, 'storage')
    await s3.start()
    await expectReady(site)
  })
})

describe('Redis stopped, then started again on the same port', { skip: runsOnScaled || redisSkip }, () => {
  let redis: RedisServer
  let site: TestSite

  before(async () => {
    redis = await startRedis()
    site = await makeSite({ REDIS_URL: redis.url, PACKS_METRICS_TOKEN: METRICS_TOKEN })
  })
  after(async () => {
    await site?.close()
    await redis?.stop()
  })

  test('503 naming redis while it is down; 200 once the client has reconnected', async () => {
    await expectReady(site)
    const port = Number(new URL(redis.url).port)
    await redis.stop()
    await expectNotReady(site, 'redis')
    redis = await startRedis({ port })
    await expectReady(site)
  })
})
