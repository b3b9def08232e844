import { test } from 'node:test'
import assert from 'node:assert/strict'
import { LatestCache, packKey } from '../../src/domain/latest-cache.js'

const answer = (version: string) => ({ body: JSON.stringify({ version }), etag: `"${version}"` })

test('answers are kept per pack and origin, and invalidation drops every origin of the pack', () => {
  const cache = new LatestCache()
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
  const cache = new LatestCache()
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
  const cache = new LatestCache()
  const key = packKey('alice', 'caves')
  for (let i = 0; i < 100; i++) cache.set(key, `http://host${i}`, answer('1'), cache.currentGeneration())
  const kept = Array.from({ length: 100 }, (_, i) => cache.get(key, `http://host${i}`)).filter(Boolean).length
  assert.ok(kept > 0 && kept <= 8, `kept ${kept} origins`)
})
