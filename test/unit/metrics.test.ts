import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { BUCKET_SLOTS, DURATION_BUCKETS_SECONDS, RouteMetrics, STATUS_CLASSES, percentile } from '../../src/stats/metrics.js'

describe('percentile', () => {
  test('nearest rank of an ascending array', () => {
    const ten = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
    assert.equal(percentile(ten, 0.5), 5)
    assert.equal(percentile(ten, 0.9), 9)
    assert.equal(percentile(ten, 0.99), 10)
    assert.equal(percentile(ten, 1), 10)
    assert.equal(percentile(ten, 0), 1)
    const hundred = Array.from({ length: 100 }, (_, i) => i + 1)
    assert.equal(percentile(hundred, 0.5), 50)
    assert.equal(percentile(hundred, 0.99), 99)
  })

  test('single and empty samples', () => {
    assert.equal(percentile([42], 0.5), 42)
    assert.equal(percentile([42], 0.99), 42)
    assert.equal(percentile([], 0.5), 0)
  })
})

describe('RouteMetrics', () => {
  test('counts per route, counts only 5xx as errors, and orders by traffic', () => {
    const metrics = new RouteMetrics()
    for (let ms = 1; ms <= 100; ms++) metrics.record('GET /a', ms, ms === 100 ? 500 : ms % 2 ? 200 : 404)
    metrics.record('GET /b', 7, 200)
    metrics.record('GET /b', 3, 503)
    assert.equal(metrics.total, 102)
    const [a, b] = metrics.summary()
    assert.deepEqual(a, { route: 'GET /a', count: 100, errors: 1, p50_ms: 50, p90_ms: 90, p99_ms: 99, max_ms: 100 })
    assert.deepEqual(b, { route: 'GET /b', count: 2, errors: 1, p50_ms: 3, p90_ms: 7, p99_ms: 7, max_ms: 7 })
  })

  test('latencies describe the most recent 1024 requests, while the count covers all', () => {
    const metrics = new RouteMetrics()
    for (let i = 0; i < 1024; i++) metrics.record('GET /slow-then-fast', 1000, 200)
    for (let i = 0; i < 1024; i++) metrics.record('GET /slow-then-fast', 1, 200)
    const [series] = metrics.summary()
    assert.equal(series!.count, 2048)
    assert.equal(series!.max_ms, 1, 'old samples were overwritten')
    assert.equal(series!.p99_ms, 1)
  })

  test('rounds to microseconds', () => {
    const metrics = new RouteMetrics()
    metrics.record('GET /x', 1.23456789, 200)
    assert.equal(metrics.summary()[0]!.p50_ms, 1.235)
  })
})

describe('RouteMetrics totals (GET /metrics)', () => {
  test('per status code, durations in buckets per status class, sums in ms, bytes each way', () => {
    const metrics = new RouteMetrics()
    metrics.record('GET /a', 0.1, 200, 500, 100)
    metrics.record('GET /a', 0.5, 200, 500, 100)
    metrics.record('GET /a', 3, 304)
    metrics.record('GET /a', 200_000, 404)
    metrics.record('GET /a', 7, 503)
    const [a] = metrics.totals()
    assert.equal(a!.route, 'GET /a')
    assert.deepEqual([200, 304, 404, 503].map((code) => a!.statuses[code - 100]), [2, 1, 1, 1])
    assert.equal(a!.statuses.reduce((sum, n) => sum + n, 0), 5)
    const bucket = (statusClass: string, seconds: number | '+Inf') => {
      const b = seconds === '+Inf' ? DURATION_BUCKETS_SECONDS.length : DURATION_BUCKETS_SECONDS.indexOf(seconds)
      return a!.buckets[STATUS_CLASSES.indexOf(statusClass) * BUCKET_SLOTS + b]
    }
    // A bound is inclusive, as Prometheus' `le` says: 0.5 ms falls in the 0.5 ms bucket.
    assert.equal(bucket('2xx', 0.0005), 2)
    assert.equal(bucket('3xx', 0.005), 1)
    assert.equal(bucket('4xx', '+Inf'), 1, 'past the last bound')
    assert.equal(bucket('5xx', 0.01), 1)
    assert.equal(a!.sums[STATUS_CLASSES.indexOf('2xx')], 0.6)
    assert.equal(a!.bytesSent, 1000)
    assert.equal(a!.bytesReceived, 200)
  })

  test('a status Node would never send is counted as a 599, with the server errors', () => {
    const metrics = new RouteMetrics()
    metrics.record('GET /odd', 1, 42)
    const [odd] = metrics.totals()
    assert.equal(odd!.statuses[599 - 100], 1)
    assert.equal(odd!.buckets.slice(STATUS_CLASSES.indexOf('5xx') * BUCKET_SLOTS).reduce((sum, n) => sum + n, 0), 1)
  })
})
