// Two instances of the app (two buildApp in this process, one SQLite file and
// data directory) sharing one redis-server through REDIS_URL: what one counts,
// builds or publishes, the other sees as soon as Redis pub/sub delivers it (milliseconds).
import assert from 'node:assert/strict'
import { until } from '../helpers/wait.js'
import { after, before, describe, test } from 'node:test'
import { buildApp } from '../../src/app.js'
import { ConfigError, loadConfig } from '../../src/config/index.js'
import type { App } from '../../src/http/types.js'
import { MASTER_PASSWORD, expectError, makeSite, type TestSite, type TestUser } from '../helpers/app.js'
import { datapack, multipart } from '../helpers/fixtures.js'
import { publishPack } from '../helpers/packs.js'
import { redisSkip, startRedis, type RedisServer } from '../helpers/redis.js'

describe('two instances sharing Redis', { skip: redisSkip }, () => {
  let server: RedisServer
  let siteA: TestSite
  let a: App
  let b: App
  let alice: TestUser
  let staff: Record<string, string>

  before(async () => {
    server = await startRedis()
    siteA = await makeSite({ REDIS_URL: server.url, PACKS_AUTH_FAILURE_LIMIT: '3', PACKS_AUTH_FAILURE_WINDOW: '1h', PACKS_STATS_CACHE: '1h' })
    a = siteA.app
    b = await buildApp(siteA.config, { logger: false, sweep: false })
    await b.ready()
    alice = await siteA.user('alice')
    staff = (await siteA.user('admin', { staff: true })).headers
  })
  after(async () => {
    await b?.close()
    await siteA?.close()
    await server?.stop()
  })

  test('failed gate attempts through either instance count against one limit', async () => {
    const attempt = (app: App, password: string) =>
      app.inject({ url: '/api/users/autocomplete/', remoteAddress: '10.2.0.1', headers: { 'x-master-password': password } })
    expectError(await attempt(a, 'wrong'), 401)
    expectError(await attempt(b, 'wrong'), 401)
    expectError(await attempt(a, 'wrong'), 401)
    // Each instance alone saw fewer than 3 failures; together they reached the limit.
    for (const app of [b, a]) {
      const limited = await attempt(app, MASTER_PASSWORD)
      expectError(limited, 429, /too many failed attempts/)
      const retryAfter = Number(limited.headers['retry-after'])
      assert.ok(retryAfter > 3500 && retryAfter <= 3600, `Retry-After ${retryAfter}`)
    }
    // Another address passes on both.
    for (const app of [a, b]) {
      const ok = await app.inject({ url: '/api/users/autocomplete/', remoteAddress: '10.2.0.2', headers: { 'x-master-password': MASTER_PASSWORD } })
      assert.equal(ok.statusCode, 200, ok.body)
    }
  })

  test('the statistics snapshot built by one instance is the one every instance returns', async () => {
    const fromA = await a.inject({ url: '/api/stats/', headers: staff })
    assert.equal(fromA.statusCode, 200, fromA.body)
    const fromB = await b.inject({ url: '/api/stats/', headers: staff })
    assert.equal(fromB.statusCode, 200, fromB.body)
    const snapshotA = fromA.json() as { generated_at: string; counts: { users: number } }
    assert.deepEqual(fromB.json(), snapshotA, 'same snapshot, same generated_at')
    assert.equal(snapshotA.counts.users, 2)
  })

  test('a pack published through A is found by B\'s update-check as soon as the change reaches B', async () => {
    // B has cached "no such pack" for this id before it exists.
    expectError(await b.inject({ url: '/api/packs/alice/shared-pack/latest', headers: siteA.gate }), 404)
    await publishPack(siteA, alice, { title: 'Shared Pack', version_name: 'v1' })
    // By Redis pub/sub, within milliseconds (update-check-feed.test.ts measures it).
    const found = await until(async () => {
      const res = await b.inject({ url: '/api/packs/alice/shared-pack/latest', headers: siteA.gate })
      return res.statusCode === 200 ? res : undefined
    }, 'B finds the pack', 3000)
    assert.equal((found.json() as { version: string }).version, 'v1')
  })

  test('a version added through A is B\'s update-check answer as soon as the change reaches B, and B\'s ETag changes', async () => {
    const url = '/api/packs/alice/shared-pack/latest'
    const before = await b.inject({ url, headers: siteA.gate })
    assert.equal((before.json() as { version: string }).version, 'v1')
    // Asked twice: the answer is now served from B's own cache.
    const cached = await b.inject({ url, headers: { ...siteA.gate, 'if-none-match': String(before.headers.etag) } })
    assert.equal(cached.statusCode, 304)

    const body = multipart([
      { name: 'version_name', value: 'v2' },
      { name: 'file', value: await datapack(48), filename: 'pack.zip', contentType: 'application/zip' },
    ])
    const added = await a.inject({ method: 'POST', url: '/api/packs/alice/shared-pack/versions/', headers: { ...alice.headers, ...body.headers }, payload: body.payload })
    assert.equal(added.statusCode, 201, added.body)

    const after = await until(async () => {
      const res = await b.inject({ url, headers: { ...siteA.gate, 'if-none-match': String(before.headers.etag) } })
      return res.statusCode === 200 ? res : undefined
    }, 'the old ETag no longer matches on B', 3000)
    assert.equal((after.json() as { version: string }).version, 'v2')
    assert.notEqual(after.headers.etag, before.headers.etag)
    // A sees it too (its own cache was dropped by its own publish).
    assert.equal(((await a.inject({ url, headers: siteA.gate })).json() as { version: string }).version, 'v2')
  })
})

describe('REDIS_URL that cannot be used', () => {
  test('an unreachable Redis stops buildApp with a one-line ConfigError', async () => {
    const config = loadConfig({ PACKS_DATA_DIR: '/nonexistent-packs-dir', PACKS_MASTER_PASSWORD: MASTER_PASSWORD, REDIS_URL: 'redis://127.0.0.1:1' })
    await assert.rejects(buildApp(config, { logger: false, sweep: false }), (error: Error) => {
      assert.ok(error instanceof ConfigError)
      assert.match(error.message, /^REDIS_URL: cannot connect to redis:\/\/127\.0\.0\.1:1: .*ECONNREFUSED[^\n]*$/)
      return true
    })
  })
})
