import { test } from 'node:test'
import assert from 'node:assert/strict'
import { hashPassword, safeEqual, verifyPassword } from '../../src/auth/secrets.js'
import { MemoryAttemptLimiter } from '../../src/auth/limiter.js'

test('scrypt password hashes verify the right password only, and are salted', async () => {
  const a = await hashPassword('correct horse')
  const b = await hashPassword('correct horse')
  assert.notEqual(a, b, 'two hashes of one password differ (random salt)')
  assert.match(a, /^scrypt\$32768\$8\$1\$/)
  assert.equal(await verifyPassword('correct horse', a), true)
  assert.equal(await verifyPassword('correct horsf', a), false)
  assert.equal(await verifyPassword('x', 'not-a-hash'), false)
})

test('safeEqual compares strings of any length', () => {
  assert.equal(safeEqual('abc', 'abc'), true)
  assert.equal(safeEqual('abc', 'abcd'), false)
  assert.equal(safeEqual('', ''), true)
})

test('the attempt limiter blocks after the limit until the window passes', async () => {
  let now = 1_000_000
  const limiter = new MemoryAttemptLimiter(2, 60_000, () => now)
  assert.equal(await limiter.retryAfter('a'), 0)
  await limiter.recordFailure('a')
  assert.equal(await limiter.retryAfter('a'), 0)
  await limiter.recordFailure('a')
  assert.equal(await limiter.retryAfter('a'), 60)
  assert.equal(await limiter.retryAfter('b'), 0, 'other keys are unaffected')
  now += 30_000
  assert.equal(await limiter.retryAfter('a'), 30)
  now += 30_001
  assert.equal(await limiter.retryAfter('a'), 0, 'the window has passed')
})
