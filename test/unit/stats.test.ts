import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { setTimeout as sleep } from 'node:timers/promises'
import { EventLoopMonitor, MemorySnapshotCache } from '../../src/stats/service.js'

describe('MemorySnapshotCache', () => {
  test('reuses the value within the window and rebuilds after it', async () => {
    let now = 1_000
    const cache = new MemorySnapshotCache<{ n: number }>(20_000, () => now)
    let builds = 0
    const build = async () => ({ n: ++builds })
    const first = await cache.get(build)
    now += 19_999
    assert.equal(await cache.get(build), first, 'the same object within the window')
    now += 1
    assert.deepEqual(await cache.get(build), { n: 2 })
    assert.equal(builds, 2)
  })

  test('concurrent misses share one build', async () => {
    const cache = new MemorySnapshotCache<number>(20_000)
    let builds = 0
    const build = async () => {
      builds += 1
      await sleep(20)
      return builds
    }
    const results = await Promise.all([cache.get(build), cache.get(build), cache.get(build)])
    assert.deepEqual(results, [1, 1, 1])
    assert.equal(builds, 1)
  })

  test('a failed build is not cached: every waiter sees the error, the next call retries', async () => {
    const cache = new MemorySnapshotCache<string>(20_000)
    let calls = 0
    const failing = async () => {
      calls += 1
      await sleep(5)
      throw new Error('database down')
    }
    const results = await Promise.allSettled([cache.get(failing), cache.get(failing)])
    assert.deepEqual(results.map((r) => r.status), ['rejected', 'rejected'])
    assert.equal(calls, 1)
    assert.equal(await cache.get(async () => 'ok'), 'ok')
  })

  test('the window starts when the build starts, so a slow build does not extend it', async () => {
    let now = 0
    const cache = new MemorySnapshotCache<number>(100, () => now)
    await cache.get(async () => {
      now += 60
      return 1
    })
    now += 50
    assert.equal(await cache.get(async () => 2), 2)
  })
})

describe('EventLoopMonitor', () => {
  test('reports the delay beyond the sampling interval, and a blocked loop shows', async () => {
    const monitor = new EventLoopMonitor()
    try {
      await sleep(50)
      const end = Date.now() + 120
      while (Date.now() < end) { /* block the loop */ }
      await sleep(30)
      const delay = monitor.read()
      assert.ok(delay.max_ms >= 80, `max ${delay.max_ms} ms reflects the 120 ms block`)
      assert.ok(delay.p50_ms >= 0 && delay.p50_ms <= delay.p99_ms && delay.p99_ms <= delay.max_ms)
      // Each read starts a new window.
      const next = monitor.read()
      assert.ok(next.max_ms < delay.max_ms)
    } finally {
      monitor.stop()
    }
  })
})
