// The update-check's in-process cache (src/update-check/cache.ts): what it keeps, for how long, and within
// which bounds. Its Redis variant is tested with a real Redis in test/http/update-check-cache.test.ts.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { DEFAULT_LIMITS, ENTRY_OVERHEAD, MemoryUpdateCheckCache, packKey } from '../../src/update-check/cache.js'

const answer = (version: string) => ({ body: JSON.stringify({ version }), etag: `"${version}"` })

test('answers are kept per pack and origin, and invalidation drops every origin of the pack', () => {
  const cache = new MemoryUpdateCheckCache()
  const key = packKey('alice', 'caves')
  cache.set(key, 'http://a', answer('1'), cache.currentGeneration())
  cache.set(key, 'http://b', answer('1'), cache.currentGeneration())
  cache.set(packKey('alice', 'other'), 'http://a', null, cache.currentGeneration())
  assert.equal(cache.get(key, 'http://a')?.etag, '"1"')
  assert.equal(cache.get(packKey('alice', 'other'), 'http://a'), null, 'a cached "not found" is null, not a miss')
  cache.invalidate(key)
  assert.equal(cache.get(key, 'http://a'), undefined)
  assert.equal(cache.get(key, 'http://b'), undefined)
  assert.equal(cache.get(packKey('alice', 'other'), 'http://a'), null, 'other packs keep their answers')
})

test('a lookup that read before a publish does not store its stale answer', () => {
  const cache = new MemoryUpdateCheckCache()
  const key = packKey('alice', 'caves')
  const readAt = cache.currentGeneration()
  // ...the lookup reads version 1 from the database; meanwhile version 2 is published:
  cache.invalidate(key)
  cache.set(key, 'http://a', answer('1'), readAt)
  assert.equal(cache.get(key, 'http://a'), undefined, 'the stale answer was refused')
  cache.set(key, 'http://a', answer('2'), cache.currentGeneration())
  assert.equal(cache.get(key, 'http://a')?.etag, '"2"')
})

test('a flood of Host headers does not grow one pack without bound', () => {
  const cache = new MemoryUpdateCheckCache()
  const key = packKey('alice', 'caves')
  for (let i = 0; i < 100; i++) cache.set(key, `http://host${i}`, answer('1'), cache.currentGeneration())
  const kept = Array.from({ length: 100 }, (_, i) => cache.get(key, `http://host${i}`)).filter(Boolean).length
  assert.ok(kept > 0 && kept <= 8, `kept ${kept} origins`)
})

// Everything a client chooses (the Host, the pack id) is bounded.

const sized = (version: string, bytes: number) => ({ body: JSON.stringify({ version, pad: 'x'.repeat(bytes) }), etag: `"${version}"` })

test('answers are kept for the first few origins only; any other origin is answered but not cached', () => {
  const cache = new MemoryUpdateCheckCache()
  const key = packKey('alice', 'caves')
  const real = ['http://127.0.0.1:8000', 'http://localhost:8000', 'http://packs.lan', 'https://packs.example.org']
  for (const origin of real) cache.set(key, origin, answer('1'), cache.currentGeneration())
  for (let i = 0; i < 10_000; i++) {
    const origin = `http://host${i}.example`
    cache.set(key, origin, answer('1'), cache.currentGeneration())
    assert.equal(cache.get(key, origin), undefined, 'a fifth origin is never served from the cache')
  }
  for (const origin of real) assert.equal(cache.get(key, origin)?.etag, '"1"', `${origin} keeps its answer`)
  const usage = cache.usage()
  assert.equal(usage.origins, 4)
  assert.equal(usage.answers, 4)
  // Four small answers, each with room for its signatures (about 1 KB apiece).
  assert.ok(usage.bytes < 6144, `${usage.bytes} bytes`)
})

test('10,000 invented pack ids stay within the "not found" bound and never evict a real pack\'s answer', () => {
  const cache = new MemoryUpdateCheckCache({ maxMissing: 1000 })
  const real = packKey('alice', 'caves')
  cache.set(real, 'http://a', answer('1'), cache.currentGeneration())
  for (let i = 0; i < 10_000; i++) {
    cache.set(packKey('x', `no-such-pack-${i}-${'y'.repeat(80)}`), 'http://a', null, cache.currentGeneration())
  }
  const usage = cache.usage()
  assert.equal(usage.missing, 1000)
  assert.equal(usage.packs, 1)
  assert.equal(cache.get(real, 'http://a')?.etag, '"1"')
  assert.equal(cache.get(packKey('x', `no-such-pack-9999-${'y'.repeat(80)}`), 'http://a'), null, 'the newest are kept')
  assert.equal(cache.get(packKey('x', `no-such-pack-0-${'y'.repeat(80)}`), 'http://a'), undefined, 'the oldest went first')
})

test('at the default size: invented pack ids past DEFAULT_LIMITS.maxMissing are dropped, the real pack kept', () => {
  // What users get (test/http/update-check-cache.test.ts checks an app built without limits has DEFAULT_LIMITS,
  // then exceeds small ones through HTTP); here the full-size bound is filled and exceeded in memory.
  const cache = new MemoryUpdateCheckCache()
  assert.deepEqual(cache.limits, DEFAULT_LIMITS)
  const real = packKey('alice', 'caves')
  cache.set(real, 'http://a', answer('1'), cache.currentGeneration())
  const id = (i: number) => packKey('alice', `no-such-pack-${i}-${'x'.repeat(60)}`)
  const ids = DEFAULT_LIMITS.maxMissing + 50
  for (let i = 0; i < ids; i++) cache.set(id(i), 'http://a', null, cache.currentGeneration())
  const usage = cache.usage()
  assert.equal(usage.missing, DEFAULT_LIMITS.maxMissing)
  assert.equal(usage.packs, 1)
  assert.ok(usage.bytes <= DEFAULT_LIMITS.maxBytes, `${usage.bytes} bytes`)
  assert.equal(cache.get(id(ids - 1), 'http://a'), null)
  assert.equal(cache.get(id(49), 'http://a'), undefined)
  assert.equal(cache.get(id(50), 'http://a'), null)
  assert.equal(cache.get(real, 'http://a')?.etag, '"1"')
})

test('limits given replace those defaults only', () => {
  assert.deepEqual(new MemoryUpdateCheckCache({ maxMissing: 5 }).limits, { ...DEFAULT_LIMITS, maxMissing: 5 })
})

test('the cache stays within its byte bound, dropping the oldest packs first', () => {
  const maxBytes = 64 * 1024
  const cache = new MemoryUpdateCheckCache({ maxBytes })
  for (let i = 0; i < 1000; i++) {
    cache.set(packKey('alice', `pack-${i}`), 'http://a', sized(String(i), 1000), cache.currentGeneration())
    assert.ok(cache.usage().bytes <= maxBytes, `${cache.usage().bytes} bytes after ${i + 1} packs`)
  }
  // Each answer costs its 1 KB body and about 1 KB of room for its signatures and header lists.
  assert.ok(cache.usage().packs > 25, `${cache.usage().packs} packs fit`)
  assert.equal(cache.get(packKey('alice', 'pack-999'), 'http://a')?.etag, '"999"')
  assert.equal(cache.get(packKey('alice', 'pack-0'), 'http://a'), undefined)
  // An answer that alone would take a large share of the budget is served, not kept.
  cache.set(packKey('alice', 'huge'), 'http://a', sized('huge', maxBytes / 4), cache.currentGeneration())
  assert.equal(cache.get(packKey('alice', 'huge'), 'http://a'), undefined)
})

test('the cache stays within its pack-count bound', () => {
  const cache = new MemoryUpdateCheckCache({ maxPacks: 100 })
  for (let i = 0; i < 1000; i++) cache.set(packKey('alice', `pack-${i}`), 'http://a', answer(String(i)), cache.currentGeneration())
  assert.equal(cache.usage().packs, 100)
  assert.equal(cache.get(packKey('alice', 'pack-999'), 'http://a')?.etag, '"999"')
})

test('an invalidation stops stale answers of that pack only; other packs read meanwhile are still stored', () => {
  const cache = new MemoryUpdateCheckCache({ maxChanges: 10 })
  const readAt = cache.currentGeneration()
  // With Redis, each update-check for an id this instance has not seen invalidates it: a flood of them...
  for (let i = 0; i < 5; i++) cache.invalidate(packKey('x', `invented-${i}`))
  // ...must not stop a lookup of another pack, begun before, from storing its answer.
  cache.set(packKey('alice', 'caves'), 'http://a', answer('1'), readAt)
  assert.equal(cache.get(packKey('alice', 'caves'), 'http://a')?.etag, '"1"')
  cache.set(packKey('x', 'invented-3'), 'http://a', answer('stale'), readAt)
  assert.equal(cache.get(packKey('x', 'invented-3'), 'http://a'), undefined, 'the invalidated pack refuses what was read before')
  // Past maxChanges the oldest invalidations are forgotten; a read older than them is refused (never a stale answer).
  for (let i = 5; i < 30; i++) cache.invalidate(packKey('x', `invented-${i}`))
  cache.set(packKey('x', 'invented-0'), 'http://a', answer('stale'), readAt)
  assert.equal(cache.get(packKey('x', 'invented-0'), 'http://a'), undefined)
})

test('fuzzed: under any sequence of stores and invalidations the bounds hold, no stale answer is served, and the byte count does not drift', async () => {
  const fc = (await import('fast-check')).default
  const limits = { maxPacks: 8, maxMissing: 6, maxBytes: 6000, maxOrigins: 3, maxChanges: 5 }
  const PACKS = 20
  const ORIGINS = 6
  const op = fc.oneof(
    fc.record({
      type: fc.constant('set' as const),
      pack: fc.nat(PACKS - 1),
      origin: fc.nat(ORIGINS - 1),
      size: fc.option(fc.nat(500)),
      // How many operations ago the lookup read the database.
      age: fc.nat(6),
    }),
    fc.record({ type: fc.constant('invalidate' as const), pack: fc.nat(PACKS - 1) }),
  )
  fc.assert(fc.property(fc.array(op, { maxLength: 150 }), (ops) => {
    const cache = new MemoryUpdateCheckCache(limits)
    /** The newest version of each pack: what the database holds now. */
    const versions: number[] = new Array(PACKS).fill(0)
    /** Before each operation: the generation a lookup would have taken and what it would have read. */
    const reads: { generation: number; versions: number[] }[] = []
    for (const o of ops) {
      reads.push({ generation: cache.currentGeneration(), versions: [...versions] })
      const key = packKey('p', String(o.pack))
      if (o.type === 'invalidate') {
        versions[o.pack]! += 1
        cache.invalidate(key)
      } else {
        const read = reads[Math.max(0, reads.length - 1 - o.age)]!
        const stored = o.size === null ? null : sized(`${o.pack}.${read.versions[o.pack]}`, o.size)
        cache.set(key, `http://o${o.origin}`, stored, read.generation)
      }
      const usage = cache.usage()
      assert.ok(usage.packs <= limits.maxPacks && usage.missing <= limits.maxMissing && usage.origins <= limits.maxOrigins, JSON.stringify(usage))
      assert.ok(usage.bytes <= limits.maxBytes && usage.bytes >= 0, JSON.stringify(usage))
      for (let p = 0; p < PACKS; p++) {
        for (let origin = 0; origin < ORIGINS; origin++) {
          const served = cache.get(packKey('p', String(p)), `http://o${origin}`)
          if (served) assert.equal(served.etag, `"${p}.${versions[p]}"`, `pack ${p} is served a stale answer`)
        }
      }
    }
    // With every pack dropped only the allowed origins remain (each "http://oN" plus the per-entry estimate).
    for (let p = 0; p < PACKS; p++) cache.invalidate(packKey('p', String(p)))
    const empty = cache.usage()
    assert.equal(empty.packs + empty.missing, 0)
    assert.equal(empty.bytes, empty.origins * ('http://o0'.length + ENTRY_OVERHEAD))
  }), { seed: 8, numRuns: 300 })
})
