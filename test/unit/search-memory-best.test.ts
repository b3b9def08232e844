// The in-memory search copy's first-k selection (src/packs/search-memory.ts `best`): a page of hits out of
// tens of thousands of matches is taken by one pass with a heap, a few thousand by a sort. The database
// comparison (test/http/search-memory.test.ts) has a few hundred packs and so only reaches the sort; here
// both ways are checked against a plain sort, with many ties on the first key as real sorts have (most
// packs have no downloads), on the same total orders the copy uses (ties end at a unique key).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { best, compareCodePoints } from '../../src/packs/search-memory.js'

/** A small deterministic generator (mulberry32). */
function random(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

test('the first k by a total order are those of a full sort, in order, through the heap and through the sort', () => {
  for (const [n, k, seed] of [[50_000, 20, 1], [50_000, 1000, 2], [10_000, 2600, 3], [3000, 20, 4], [100, 20, 5], [9000, 1, 6]] as const) {
    const next = random(seed)
    // Keys like downloads: most 0, a few large; ties broken by the item's own number (a row id).
    const key = Array.from({ length: n }, () => (next() < 0.8 ? 0 : Math.floor(next() * 50)))
    const compare = (a: number, b: number) => key[b]! - key[a]! || a - b
    const items = Int32Array.from({ length: n }, (_, i) => (i * 7919) % n)
    const expected = [...items].sort(compare).slice(0, k)
    assert.deepEqual([...best(items.slice(), k, compare)], expected, `n=${n} k=${k}`)
  }
})

test('k beyond the items gives them all, k of 0 none', () => {
  const items = Int32Array.from([5, 3, 9, 1])
  assert.deepEqual([...best(items.slice(), 10, (a, b) => a - b)], [1, 3, 5, 9])
  assert.deepEqual([...best(items.slice(), 0, (a, b) => a - b)], [])
})

test('code point order, as the database compares keys: a letter outside the BMP after U+FFFD', () => {
  assert.ok(compareCodePoints('\u{1D4AE}cript', '\uFFFDx') > 0, 'U+1D4AE is after U+FFFD')
  assert.ok('\u{1D4AE}' < '\uFFFD', 'UTF-16 code units say the opposite')
  assert.ok(compareCodePoints('ab', 'abc') < 0)
  assert.equal(compareCodePoints('vera\u0000x', 'vera\u0000x'), 0)
  assert.ok(compareCodePoints('vera\u0000z', 'verb\u0000a') < 0, 'the namespace decides first')
})
