// The bulkhead's line (src/http/bulkhead.ts): slots, first come first served,
// a bounded line, a place given up when its client leaves. No database or
// storage: the class alone, and the routes marked heavy in the HTTP tests.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { Bulkhead } from '../../src/http/bulkhead.js'

const never = () => {}

test('takes up to its slots at once, then lines up, first come first served', async () => {
  const line = new Bulkhead(2, 10)
  const a = await line.acquire(never)
  const b = await line.acquire(never)
  assert.ok(a && b)
  assert.equal(line.inProgress, 2)
  const order: string[] = []
  const c = line.acquire(never).then((release) => { order.push('c'); return release })
  const d = line.acquire(never).then((release) => { order.push('d'); return release })
  assert.equal(line.queued, 2)
  a()
  a() // a second release of the same slot changes nothing
  const releaseC = await c
  assert.deepEqual(order, ['c'])
  assert.equal(line.inProgress, 2)
  b()
  const releaseD = await d
  assert.deepEqual(order, ['c', 'd'])
  releaseC!()
  releaseD!()
  assert.equal(line.inProgress, 0)
  assert.equal(line.queued, 0)
})

test('a full line refuses at once (null), without waiting', async () => {
  const line = new Bulkhead(1, 1)
  const first = await line.acquire(never)
  const waiting = line.acquire(never)
  assert.equal(await line.acquire(never), null)
  first!()
  const second = await waiting
  assert.ok(second)
  second()
  assert.equal(line.inProgress, 0)
})

test('a client that leaves while waiting gives up its place', async () => {
  const line = new Bulkhead(1, 5)
  const first = await line.acquire(never)
  let leave: () => void = never
  const abandoned = line.acquire((cancel) => { leave = cancel })
  const after = line.acquire(never)
  leave()
  assert.equal(await abandoned, null)
  assert.equal(line.queued, 1)
  first!()
  const next = await after
  assert.ok(next)
  next()
  assert.equal(line.inProgress, 0)
})
