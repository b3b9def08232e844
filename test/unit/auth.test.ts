import { test } from 'node:test'
import assert from 'node:assert/strict'
import { SecretMatcher, safeEqual } from '../../src/auth/secrets.js'
import { PasswordHasher } from '../../src/auth/passwords.js'
import { setImmediate } from 'node:timers/promises'
import { MemoryAttemptLimiter, type Reservation } from '../../src/auth/limiter.js'
import { clientKey } from '../../src/auth/addresses.js'
import { PasswordWork, PasswordWorkBusy } from '../../src/auth/password-work.js'
import { DEFAULT_PASSWORD_HASH_COST } from '../../src/config/index.js'

test('scrypt password hashes verify the right password only, and are salted', async () => {
  const passwords = new PasswordHasher(DEFAULT_PASSWORD_HASH_COST)
  const a = await passwords.hash('correct horse')
  const b = await passwords.hash('correct horse')
  assert.notEqual(a, b, 'two hashes of one password differ (random salt)')
  assert.match(a, /^scrypt\$32768\$8\$1\$/)
  assert.equal(await passwords.verify('correct horse', a), true)
  assert.equal(await passwords.verify('correct horsf', a), false)
  assert.equal(await passwords.verify('x', 'not-a-hash'), false)
})

test('the hashing cost is a setting; a hash keeps its own cost, so it verifies whatever the setting is now', async () => {
  const cheap = new PasswordHasher(1024)
  const dear = new PasswordHasher(2 ** 14)
  const made = await cheap.hash('correct horse')
  assert.match(made, /^scrypt\$1024\$8\$1\$/)
  assert.equal(await dear.verify('correct horse', made), true, 'made at 2^10, checked where the setting is 2^14')
  assert.equal(await dear.verify('correct horsf', made), false)
  const madeDear = await dear.hash('correct horse')
  assert.match(madeDear, /^scrypt\$16384\$8\$1\$/)
  assert.equal(await cheap.verify('correct horse', madeDear), true)
  assert.equal(await cheap.verifyNobody('correct horse'), false)
})

test('an unknown name costs what a wrong password costs at the configured cost, whatever that is', async () => {
  // The fastest of five runs each, the three kinds taken in turn, so a machine that is busy for a while
  // (CI runs other test files beside this one) slows all three alike rather than one of them.
  const cheap = new PasswordHasher(1024)
  const dear = new PasswordHasher(2 ** 14)
  const dearHash = await dear.hash('right')
  const runs = {
    wrongPassword: () => dear.verify('wrong', dearHash),
    unknownName: () => dear.verifyNobody('wrong'),
    cheapUnknown: () => cheap.verifyNobody('wrong'),
  }
  const best = { wrongPassword: Infinity, unknownName: Infinity, cheapUnknown: Infinity }
  for (let i = 0; i < 5; i++) {
    for (const [name, run] of Object.entries(runs) as [keyof typeof runs, () => Promise<unknown>][]) {
      const start = performance.now()
      await run()
      best[name] = Math.min(best[name], performance.now() - start)
    }
  }
  const { wrongPassword, unknownName, cheapUnknown } = best
  // 2^14 is 16 times the work of 2^10: the decoy follows the setting, not a fixed cost.
  assert.ok(unknownName > 4 * cheapUnknown, `decoy at 2^14 took ${unknownName} ms, at 2^10 ${cheapUnknown} ms`)
  // Within a factor 4 of each other (the same work), where a fixed cheap decoy would be 16 times apart.
  assert.ok(unknownName > wrongPassword / 4 && unknownName < wrongPassword * 4, `decoy ${unknownName} ms vs wrong password ${wrongPassword} ms`)
})

test('safeEqual compares strings of any length', () => {
  assert.equal(safeEqual('abc', 'abc'), true)
  assert.equal(safeEqual('abc', 'abcd'), false)
  assert.equal(safeEqual('', ''), true)
})

test('SecretMatcher matches its secret only, byte for byte, whatever the candidate', () => {
  const matcher = new SecretMatcher('éab')
  assert.equal(matcher.matches('éab'), true)
  // Again: the scratch buffer holds the last candidate, which must not make a later one match.
  assert.equal(matcher.matches('éac'), false)
  assert.equal(matcher.matches('éab'), true)
  // As many bytes written as the secret has, with more to come: not a match.
  assert.equal(matcher.matches('éabc'), false)
  assert.equal(matcher.matches('éa'), false)
  assert.equal(matcher.matches('eab'), false)
  assert.equal(matcher.matches(''), false)
  assert.equal(matcher.matches('x'.repeat(100_000)), false)
  assert.equal(new SecretMatcher('').matches(''), true)
  assert.equal(new SecretMatcher('').matches('a'), false)
})

test('the attempt limiter blocks after the limit until the window passes', async () => {
  let now = 1_000_000
  const limiter = new MemoryAttemptLimiter(2, 60_000, () => now)
  assert.equal(limiter.settle('a', false), 0)
  assert.equal(limiter.settle('a', true), 0, 'a success neither counts nor is refused')
  assert.equal(limiter.settle('a', false), 0, 'the second failure is still answered (401)')
  assert.equal(limiter.settle('a', true), 60, 'blocked: even a right password is refused')
  assert.equal(limiter.settle('a', false), 60)
  assert.deepEqual(limiter.reserve('a'), { retryAfter: 60 })
  assert.equal(limiter.settle('b', true), 0, 'other keys are unaffected')
  now += 30_000
  assert.equal(limiter.settle('a', true), 30)
  now += 30_001
  assert.equal(limiter.settle('a', true), 0, 'the window has passed')
  assert.equal(limiter.size, 0, 'the expired window is gone; b never had one')
})

test('reservations count first: concurrent attempts meet the limit, a refund gives the place back', async () => {
  const limiter = new MemoryAttemptLimiter(3, 60_000)
  const attempts = Array.from({ length: 10 }, () => limiter.reserve('a'))
  const granted = attempts.filter((r): r is Reservation => 'refund' in r)
  assert.equal(granted.length, 3, 'three places, reserved before any check ran')
  for (const refused of attempts.filter((r) => !('refund' in r))) assert.ok(refused.retryAfter > 0)
  // Two were right: their places come back; the third stays a failure.
  await granted[0]!.refund()
  await granted[1]!.refund()
  await granted[1]!.refund()
  assert.equal(limiter.settle('a', true), 0)
  const again = [limiter.reserve('a'), limiter.reserve('a'), limiter.reserve('a')]
  assert.deepEqual(again.map((r) => 'refund' in r), [true, true, false], 'a double refund gave back one place only')
})

test('a refund after the window ended does not lower the next window\'s count', async () => {
  let now = 0
  const limiter = new MemoryAttemptLimiter(2, 1000, () => now)
  const old = limiter.reserve('a') as Reservation
  now = 1500
  assert.equal(limiter.settle('a', false), 0)
  assert.equal(limiter.settle('a', false), 0)
  await old.refund()
  assert.ok(limiter.settle('a', true) > 0, 'still blocked: the old reservation belonged to the old window')
})

test('the memory limiter is bounded, and a flood of new addresses cannot evict a blocked one', () => {
  let now = 0
  const limiter = new MemoryAttemptLimiter(3, 60_000, () => now, 100)
  for (let i = 0; i < 3; i++) limiter.settle('guesser', false)
  assert.ok(limiter.settle('guesser', true) > 0)
  // One failure from each of 10,000 other addresses: the table stays at 100 and the guesser stays blocked.
  for (let i = 0; i < 10_000; i++) {
    now += 1
    limiter.settle(`10.0.${i >> 8}.${i & 255}`, false)
    assert.ok(limiter.size <= 100)
  }
  assert.equal(limiter.size, 100)
  assert.ok(limiter.settle('guesser', true) > 0, 'still blocked')
  // Partly guessed addresses outlast single failures too: eviction takes the fewest failures first.
  limiter.settle('typo', false)
  limiter.settle('typo', false)
  for (let i = 0; i < 500; i++) limiter.settle(`10.1.${i >> 8}.${i & 255}`, false)
  assert.equal(limiter.reserve('typo').retryAfter, 0)
  assert.ok(limiter.settle('typo', true) > 0, 'typo kept its two failures (plus the reservation): blocked at three')
})

test('only when every tracked address is blocked does the longest-blocked one make room', () => {
  let now = 0
  const limiter = new MemoryAttemptLimiter(2, 60_000, () => now, 3)
  for (const key of ['a', 'b', 'c']) {
    now += 1
    limiter.settle(key, false)
    limiter.settle(key, false)
  }
  limiter.settle('d', false)
  assert.equal(limiter.size, 3)
  assert.equal(limiter.settle('a', true), 0, 'a was blocked first and made room: it cost 2 × 3 counted failures')
  assert.ok(limiter.settle('b', true) > 0)
  assert.ok(limiter.settle('c', true) > 0)
})

test('expired windows make room before any live one is evicted', () => {
  let now = 0
  const limiter = new MemoryAttemptLimiter(2, 1000, () => now, 2)
  limiter.settle('old', false)
  now = 500
  limiter.settle('blocked', false)
  limiter.settle('blocked', false)
  now = 1200
  limiter.settle('new', false)
  assert.equal(limiter.size, 2)
  assert.ok(limiter.settle('blocked', true) > 0)
})

test('clientKey: IPv4 as is, IPv4-mapped IPv6 as IPv4, IPv6 grouped by /64, anything else bounded', () => {
  assert.equal(clientKey('203.0.113.7'), '203.0.113.7')
  assert.equal(clientKey('::ffff:203.0.113.7'), '203.0.113.7')
  assert.equal(clientKey('::ffff:cb00:7107'), '203.0.113.7')
  const prefix = '2001:db8:aa:bb::/64'
  for (const ip of ['2001:db8:aa:bb::1', '2001:0db8:00aa:00bb:ffff:ffff:ffff:fffe', '2001:DB8:AA:BB:1:2:3:4', '2001:db8:aa:bb:1::', '2001:db8:aa:bb::10.1.2.3', '2001:db8:aa:bb::1%eth0']) {
    assert.equal(clientKey(ip), prefix, ip)
  }
  assert.notEqual(clientKey('2001:db8:aa:bc::1'), prefix)
  assert.equal(clientKey('::1'), '0:0:0:0::/64')
  assert.equal(clientKey('2001:db8::'), '2001:db8:0:0::/64')
  assert.equal(clientKey('1:2:3::'), '1:2:3:0::/64')
  assert.equal(clientKey('1::2:3:4:5:6:7'), '1:0:2:3::/64')
  const junk = clientKey('x'.repeat(10_000))
  assert.ok(junk.startsWith('other:') && junk.length < 50)
  assert.equal(clientKey('not-an-ip'), 'not-an-ip', 'short strings without a colon pass as they are (bounded)')
})

test('password work: at most `concurrency` hashes at once, a bounded queue, then refused at once', async () => {
  const work = new PasswordWork(2, 3)
  let running = 0
  let peak = 0
  const releases: Array<() => void> = []
  const task = () => new Promise<string>((resolve) => {
    running += 1
    peak = Math.max(peak, running)
    releases.push(() => { running -= 1; resolve('done') })
  })
  const runs = Array.from({ length: 8 }, () => work.run(task).then((v) => v, (e: unknown) => e))
  await setImmediate()
  assert.equal(running, 2)
  assert.equal(work.refused, 3, 'two running, three queued, three refused')
  const refusals = await Promise.all(runs.slice(5))
  // Finish the running tasks one by one: each hands its slot to the next in the queue.
  for (let finished = 0; finished < 5; finished++) {
    while (releases.length === 0) await setImmediate()
    assert.ok(running <= 2)
    releases.shift()!()
  }
  for (const refused of refusals) {
    assert.ok(refused instanceof PasswordWorkBusy)
    assert.equal(refused.status, 429)
    assert.equal(refused.retryAfterSeconds, 1)
  }
  assert.deepEqual(await Promise.all(runs.slice(0, 5)), Array(5).fill('done'))
  assert.equal(peak, 2)
  assert.equal(work.peak, 2)
  // A failing task frees its slot too.
  await assert.rejects(work.run(async () => { throw new Error('boom') }), /boom/)
  assert.equal(await work.run(async () => 'after'), 'after')
})
