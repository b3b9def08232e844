// The readiness checks' rules (src/http/health.ts): each bounded in time, a
// round's results reused for a while, and a check that never answers run once
// however many rounds ask for it.
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { Readiness, describeFailures, type Probe } from '../../src/http/health.js'

/** A probe that counts its calls and answers as told. */
function probe(name: string, answer: () => Promise<void>): Probe & { calls: number } {
  const counted = { name, calls: 0, check: () => { counted.calls++; return answer() } }
  return counted
}

describe('Readiness', () => {
  test('all answer: ok, with the time each took', async () => {
    const readiness = new Readiness([probe('database', async () => {}), probe('storage', async () => {})], 1000, 0)
    const results = await readiness.results()
    assert.deepEqual(results.map((r) => [r.name, r.ok]), [['database', true], ['storage', true]])
    assert.ok(results.every((r) => r.ms >= 0 && r.ms < 1000))
    assert.equal(describeFailures(results), '')
  })

  test('an error, thrown or rejected, fails its check alone', async () => {
    const readiness = new Readiness([
      probe('database', () => Promise.reject(new Error('connect ECONNREFUSED 10.0.0.20:5432'))),
      probe('redis', () => { throw new Error('The client is closed') }),
      probe('storage', async () => {}),
    ], 1000, 0)
    const results = await readiness.results()
    assert.deepEqual(results.map((r) => [r.name, r.ok, r.failure]), [['database', false, 'error'], ['redis', false, 'error'], ['storage', true, undefined]])
    // The backend's own message (an address here) is not repeated.
    assert.equal(describeFailures(results), 'database (answered with an error), redis (answered with an error)')
  })

  test('a check that never answers fails at its time limit, and is not started again while it hangs', async () => {
    const hung = probe('database', () => new Promise(() => {}))
    const readiness = new Readiness([hung, probe('storage', async () => {})], 50, 0)
    const started = performance.now()
    const first = await readiness.results()
    const took = performance.now() - started
    assert.deepEqual(first.map((r) => [r.name, r.ok, r.failure]), [['database', false, 'timeout'], ['storage', true, undefined]])
    assert.ok(took >= 45 && took < 1000, `failed after its 50 ms: ${took} ms`)
    assert.equal(describeFailures(first), 'database (no answer within 0.05 s)')
    for (let i = 0; i < 5; i++) assert.equal((await readiness.results())[0]!.failure, 'timeout')
    assert.equal(hung.calls, 1, 'one check in flight, however many rounds')
  })

  test('within its window a round\'s results are reused, and concurrent callers share one round', async () => {
    let now = 0
    const counted = probe('database', async () => {})
    const readiness = new Readiness([counted], 1000, 1000, () => now)
    await Promise.all([readiness.results(), readiness.results(), readiness.results()])
    assert.equal(counted.calls, 1)
    now = 999
    await readiness.results()
    assert.equal(counted.calls, 1)
    now = 1001
    await readiness.results()
    assert.equal(counted.calls, 2)
  })
})
