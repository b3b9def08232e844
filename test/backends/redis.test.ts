// backends: scaled — the Redis adapters need the combination's redis-server; the sqlite one keeps shared state in memory
// RedisAttemptLimiter, the Redis snapshot cache and the Redis connection,
// against a real redis-server: a logical database of its own on the run's
// shared server (PACKS_TEST_REDIS_URL), or a server of its own when the file
// runs alone. A window is a key's expiry on Redis's clock: the tests move
// that clock by setting the expiry (PEXPIRE), never by sleeping through it.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { Refusal, Reservation } from '../../src/auth/limiter.js'
import { RedisAttemptLimiter } from '../../src/shared-state/redis-limiter.js'
import { ConfigError } from '../../src/config/index.js'
import { RedisUpdateCheckCache } from '../../src/shared-state/redis-update-check-cache.js'
import { RedisSnapshotCache } from '../../src/shared-state/redis-snapshot-cache.js'
import { openRedis, type RedisConnection } from '../../src/shared-state/redis.js'
import { redisSkip, startRedis, takeRedisDatabase, TEST_REDIS_URL } from '../helpers/redis.js'
import { until } from '../helpers/wait.js'


describe('Redis shared state', { skip: !TEST_REDIS_URL && redisSkip }, () => {
  let url: string
  let release: () => Promise<void>
  // Two connections, as two instances would have.
  let a: RedisConnection
  let b: RedisConnection
  before(async () => {
    const shared = await takeRedisDatabase()
    if (shared) {
      ;({ url, release } = shared)
    } else {
      const server = await startRedis()
      url = server.url
      release = () => server.stop()
    }
    a = await openRedis(url)
    b = await openRedis(url)
  })
  after(async () => {
    await a?.close()
    await b?.close()
    await release?.()
  })

  /** The end of a key's window: it expires (on Redis's clock) now rather than later. */
  const expireNow = async (key: string) => {
    await a.client.pExpire(key, 1)
    // Redis drops an expired key when it is next read: poll, for at most 10 s.
    await until(async () => (await a.client.exists(key)) === 0 || undefined, `${key} to expire`, 10_000, 1)
  }

  describe('RedisAttemptLimiter', () => {
    const granted = (r: Reservation | Refusal): r is Reservation => 'refund' in r

    test('blocks a client after maxFailures in the window, counted across instances', async () => {
      const one = new RedisAttemptLimiter(a.client, 'gate', 3, 60_000)
      const two = new RedisAttemptLimiter(b.client, 'gate', 3, 60_000)
      assert.equal(await one.settle('10.1.0.1', false), 0)
      assert.equal(await two.settle('10.1.0.1', false), 0)
      assert.equal(await one.settle('10.1.0.1', true), 0, 'two failures of three: not blocked, and a success is not counted')
      assert.equal(await one.settle('10.1.0.1', false), 0, 'the third failure is still answered')
      for (const limiter of [one, two]) {
        const retry = await limiter.settle('10.1.0.1', true)
        assert.ok(retry > 55 && retry <= 60, `Retry-After ${retry} s is what remains of the 60 s window`)
        const refused = await limiter.reserve('10.1.0.1')
        assert.ok(!granted(refused) && refused.retryAfter > 55)
      }
      assert.equal(await two.settle('10.1.0.2', true), 0, 'another client is not affected')
      assert.equal(await a.client.hGet('packs:auth-failures:gate:10.1.0.1', 'n'), '3', 'refusals are not counted')
    })

    test('gate and login counts are separate keys', async () => {
      const gate = new RedisAttemptLimiter(a.client, 'gate', 2, 60_000)
      const login = new RedisAttemptLimiter(a.client, 'login', 2, 60_000)
      await gate.settle('10.1.0.5', false)
      await gate.settle('10.1.0.5', false)
      assert.ok((await gate.settle('10.1.0.5', true)) > 0)
      assert.equal(await login.settle('10.1.0.5', true), 0)
      assert.ok(granted(await login.reserve('10.1.0.5')))
      assert.deepEqual((await a.client.keys('packs:auth-failures:*:10.1.0.5')).sort(), ['packs:auth-failures:gate:10.1.0.5', 'packs:auth-failures:login:10.1.0.5'])
      assert.equal(await a.client.hGet('packs:auth-failures:login:10.1.0.5', 'n'), '1')
    })

    test('the window is fixed from the first failure and ends by itself', async () => {
      const limiter = new RedisAttemptLimiter(a.client, 'login', 2, 60_000)
      const key = limiter.redisKey('10.1.0.3')
      await limiter.settle('10.1.0.3', false)
      // 59.6 s of the window pass: 400 ms of it are left.
      await a.client.pExpire(key, 400)
      await limiter.settle('10.1.0.3', false)
      const left = await a.client.pTTL(key)
      assert.ok(left > 0 && left <= 400, `the second failure did not extend the window (PTTL ${left})`)
      assert.equal(await limiter.settle('10.1.0.3', true), 1, 'under a second left rounds up to 1 s')
      await expireNow(key)
      assert.equal(await limiter.settle('10.1.0.3', true), 0)
      await limiter.settle('10.1.0.3', false)
      assert.equal(await limiter.settle('10.1.0.3', true), 0, 'a new window counts from one')
      assert.equal(await a.client.hGet(key, 'n'), '1')
      const fresh = await a.client.pTTL(key)
      assert.ok(fresh > 59_000 && fresh <= 60_000, `the new window is a whole one (PTTL ${fresh})`)
    })

    test('30 reservations at once from two instances: exactly maxFailures granted, and the key expires', async () => {
      const one = new RedisAttemptLimiter(a.client, 'login', 10, 60_000)
      const two = new RedisAttemptLimiter(b.client, 'login', 10, 60_000)
      const results = await Promise.all(Array.from({ length: 30 }, (_, i) => (i % 2 ? one : two).reserve('10.1.0.4')))
      assert.equal(results.filter(granted).length, 10)
      for (const refused of results.filter((r) => !granted(r))) assert.ok(refused.retryAfter > 0)
      const ttl = await a.client.pTTL('packs:auth-failures:login:10.1.0.4')
      assert.ok(ttl > 0 && ttl <= 60_000, `the counter expires (PTTL ${ttl})`)
    })

    test('a refund gives the reserved place back once, and never to a later window', async () => {
      const limiter = new RedisAttemptLimiter(a.client, 'login', 2, 60_000)
      const first = await limiter.reserve('10.1.0.6')
      const second = await limiter.reserve('10.1.0.6')
      assert.ok(granted(first) && granted(second))
      assert.ok(!granted(await limiter.reserve('10.1.0.6')), 'two in flight fill the limit')
      await first.refund()
      await first.refund()
      assert.equal(await a.client.hGet(limiter.redisKey('10.1.0.6'), 'n'), '1', 'the double refund gave back one place')
      await expireNow(limiter.redisKey('10.1.0.6'))
      // A new window: the old reservation's refund must not lower it.
      await limiter.settle('10.1.0.6', false)
      await limiter.settle('10.1.0.6', false)
      await second.refund()
      assert.ok((await limiter.settle('10.1.0.6', true)) > 0, 'still blocked')
    })

    test('a counter left without an expiry is given one instead of blocking for good', async () => {
      const limiter = new RedisAttemptLimiter(a.client, 'gate', 2, 60_000)
      const key = limiter.redisKey('10.1.0.7')
      await a.client.hSet(key, { n: '5', w: 'x' })
      assert.equal(await a.client.pTTL(key), -1)
      assert.ok((await limiter.settle('10.1.0.7', true)) > 0)
      const ttl = await a.client.pTTL(key)
      assert.ok(ttl > 0 && ttl <= 60_000, `PTTL ${ttl}`)
    })
  })

  describe('RedisSnapshotCache', () => {
    test('two instances missing together build once and get the same snapshot', async () => {
      // The build goes on until the instance that did not take the lock polls for it (the
      // builder itself never asks whether the lock is held): the two really missed together.
      let polling!: () => void
      const otherPolls = new Promise<void>((resolve) => { polling = resolve })
      const watched = async () => {
        const connection = await openRedis(url)
        const exists = connection.client.exists.bind(connection.client)
        Object.assign(connection.client, {
          exists: (...args: Parameters<typeof exists>) => {
            polling()
            return exists(...args)
          },
        })
        return connection
      }
      const [c, d] = [await watched(), await watched()]
      let builds = 0
      const build = async () => {
        builds += 1
        await otherPolls
        return { generated_at: new Date().toISOString(), builds }
      }
      try {
        const one = new RedisSnapshotCache<{ generated_at: string; builds: number }>(c.client, 60_000, 'test-once')
        const two = new RedisSnapshotCache<{ generated_at: string; builds: number }>(d.client, 60_000, 'test-once')
        const results = await Promise.all([one.get(build), two.get(build), one.get(build), two.get(build)])
        assert.equal(builds, 1)
        for (const result of results) assert.deepEqual(result, results[0])
        assert.deepEqual(await two.get(build), results[0], 'a later call within the window reads the stored snapshot')
        assert.equal(builds, 1)
      } finally {
        await c.close()
        await d.close()
      }
    })

    test('after the window a new snapshot is built; the window starts when the build reads', async () => {
      let now = 1_000_000
      let builds = 0
      // Each build takes 5 s on the caches' clock.
      const build = async () => {
        now += 5_000
        return { n: ++builds }
      }
      const cache = new RedisSnapshotCache<{ n: number }>(a.client, 60_000, 'test-window', () => now)
      assert.deepEqual(await cache.get(build), { n: 1 })
      assert.deepEqual(await new RedisSnapshotCache<{ n: number }>(b.client, 60_000, 'test-window', () => now).get(build), { n: 1 })
      const left = await a.client.pTTL('packs:test-window:snapshot')
      assert.ok(left > 50_000 && left <= 55_000, `kept for what the 5 s build left of the 60 s window (PTTL ${left})`)
      await expireNow('packs:test-window:snapshot')
      assert.deepEqual(await cache.get(build), { n: 2 })
    })

    test('a build that outlasts the window is answered but not kept', async () => {
      let now = 0
      let builds = 0
      const slow = async () => {
        now += 60_000
        return { n: ++builds }
      }
      const cache = new RedisSnapshotCache<{ n: number }>(a.client, 60_000, 'test-slow', () => now)
      assert.deepEqual(await cache.get(slow), { n: 1 })
      assert.equal(await a.client.exists('packs:test-slow:snapshot'), 0)
      assert.deepEqual(await cache.get(slow), { n: 2 })
    })

    test('a failed build frees the lock: the next call builds', async () => {
      const cache = new RedisSnapshotCache<{ ok: boolean }>(a.client, 2000, 'test-failure')
      await assert.rejects(cache.get(async () => { throw new Error('database down') }), /database down/)
      assert.equal(await a.client.exists('packs:test-failure:building'), 0)
      assert.deepEqual(await new RedisSnapshotCache<{ ok: boolean }>(b.client, 2000, 'test-failure').get(async () => ({ ok: true })), { ok: true })
    })
  })

  describe('RedisUpdateCheckCache', () => {
    const answer = (version: string) => ({ body: `{"version":"${version}"}`, etag: `"${version}"` })

    test('an answer cached on one instance is dropped once another instance invalidates the pack', async () => {
      const one = new RedisUpdateCheckCache(a.client)
      const two = new RedisUpdateCheckCache(b.client)
      await two.revalidate('ns:p1')
      two.set('ns:p1', 'http://x', answer('v1'), two.currentGeneration())
      await two.revalidate('ns:p1')
      assert.deepEqual(two.get('ns:p1', 'http://x'), answer('v1'), 'nothing changed: the answer is served from memory')
      await two.revalidate('ns:p2')
      two.set('ns:p2', 'http://x', answer('other'), two.currentGeneration())

      await one.invalidate('ns:p1')
      await two.revalidate('ns:p1')
      assert.equal(two.get('ns:p1', 'http://x'), undefined)
      await two.revalidate('ns:p2')
      assert.deepEqual(two.get('ns:p2', 'http://x'), answer('other'), 'other packs keep their answers')
    })

    test('a lookup that read the database before a remote change does not store its stale answer', async () => {
      const one = new RedisUpdateCheckCache(a.client)
      const two = new RedisUpdateCheckCache(b.client)
      await two.revalidate('ns:p3')
      const readAt = two.currentGeneration()
      // ...the database read is in flight when another instance publishes and a second request here revalidates.
      await one.invalidate('ns:p3')
      await two.revalidate('ns:p3')
      two.set('ns:p3', 'http://x', answer('old'), readAt)
      assert.equal(two.get('ns:p3', 'http://x'), undefined)
    })

    test('a Redis that lost its data (restart without persistence) still invalidates', async () => {
      const two = new RedisUpdateCheckCache(b.client)
      await new RedisUpdateCheckCache(a.client).invalidate('ns:p4')
      await two.revalidate('ns:p4')
      two.set('ns:p4', 'http://x', answer('v1'), two.currentGeneration())
      await a.client.del('packs:latest:stamps')
      await two.revalidate('ns:p4')
      assert.equal(two.get('ns:p4', 'http://x'), undefined)
    })
  })

  describe('openRedis', () => {
    test('an unreachable server is a one-line ConfigError', async () => {
      // Port 1 on loopback: nothing listens there, the connection is refused at once.
      await assert.rejects(openRedis('redis://127.0.0.1:1'), (error: Error) => {
        assert.ok(error instanceof ConfigError)
        assert.match(error.message, /^REDIS_URL: cannot connect to redis:\/\/127\.0\.0\.1:\d+: .*ECONNREFUSED/)
        assert.ok(!error.message.includes('\n'))
        return true
      })
    })
  })
})
