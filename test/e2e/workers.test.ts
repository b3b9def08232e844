// backends: sqlite — the worker processes are the same on every backend; instances.test.ts runs servers on PostgreSQL + S3 + Redis
// WEB_CONCURRENCY=N: N worker processes behind one port, started by `npm start`.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { redisSkip, startRedis, type RedisServer } from '../helpers/redis.js'
import { startExpectingFailure, startServer, type RunningServer } from '../helpers/server.js'
import { METRICS_TOKEN, parseExposition, valueOf } from '../helpers/prometheus.js'

test('several workers without Redis are refused at start with one line: they could not share caches and limits', async () => {
  const result = await startExpectingFailure({ WEB_CONCURRENCY: '2', REDIS_URL: undefined })
  assert.equal(result.code, 1)
  assert.equal(result.stderr.trim(), 'packs: configuration error: WEB_CONCURRENCY=2 needs REDIS_URL: workers share the update-check cache, failed-attempt counts and statistics through Redis')
})

describe('WEB_CONCURRENCY=2 with Redis', { skip: redisSkip }, () => {
  let redis: RedisServer
  let server: RunningServer

  before(async () => {
    redis = await startRedis()
    server = await startServer({ env: { WEB_CONCURRENCY: '2', REDIS_URL: redis.url, PACKS_MASTER_PASSWORD: undefined, PACKS_METRICS_TOKEN: METRICS_TOKEN } })
  })
  after(async () => {
    await server?.stop().catch(() => {})
    await redis?.stop()
  })

  test('a scrape of /metrics, whichever worker takes it, counts every worker\'s requests', async () => {
    const password = /Site password: (\S+)/.exec(server.stdout())![1]!
    const answers = await Promise.all(Array.from({ length: 40 }, () =>
      fetch(`${server.url}/api/tags/autocomplete/?q=metrics`, { headers: { 'x-master-password': password, connection: 'close' } }).then((r) => r.status)))
    assert.deepEqual(new Set(answers), new Set([200]))
    for (let i = 0; i < 6; i++) {
      const res = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}`, connection: 'close' } })
      assert.equal(res.status, 200)
      const metrics = await parseExposition(await res.text())
      assert.equal(valueOf(metrics, 'packs_http_requests_total', { route: '/api/tags/autocomplete/', status: '200' }), 40, `scrape ${i + 1}: both workers' requests`)
      // A gauge of one thing for all workers is taken once, not added up.
      assert.equal(valueOf(metrics, 'packs_build_info'), 1)
    }
  })

  test('two workers serve one port; the generated password is printed once; SIGTERM stops them all', async () => {
    // Workers run the same command line as the primary (npm start's: dist/src/server.js).
    const workers = spawnSync('pgrep', ['-P', String(server.child.pid), '-f', 'dist/src/server.js'], { encoding: 'utf8' }).stdout.trim().split('\n').filter(Boolean)
    assert.equal(workers.length, 2, `two worker processes under the primary: ${workers.join(', ')}`)
    assert.equal(server.stdout().match(/Site password: /g)?.length, 1, 'printed once, by the primary')
    const password = /Site password: (\S+)/.exec(server.stdout())![1]!
    // Many requests over fresh connections land on both workers, all answered.
    const answers = await Promise.all(Array.from({ length: 40 }, () =>
      fetch(`${server.url}/api/tags/autocomplete/`, { headers: { 'x-master-password': password, connection: 'close' } }).then((r) => r.status)))
    assert.deepEqual(new Set(answers), new Set([200]))
    const exit = await server.stop()
    assert.equal(exit.code, 0)
    for (const pid of workers) assert.throws(() => process.kill(Number(pid), 0), 'worker is gone')
  })
})
