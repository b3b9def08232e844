// The failed-password limits under attack: the gate's
// and the accounts' counts kept apart, counted before the check so concurrent
// guesses meet the limit, IPv6 counted per /64, scrypt capped, other clients
// and other credentials never held up; on the limiter in memory and in Redis.
// Also the X-Forwarded-For warning and PACKS_TRUST_PROXY lists.
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { Writable } from 'node:stream'
import { after, before, describe, test } from 'node:test'
import type { InjectOptions, LightMyRequestResponse } from 'fastify'
import { buildApp } from '../../src/app.js'
import { DEFAULT_PASSWORD_HASH_COST, loadConfig } from '../../src/config/index.js'
import { passwordWork } from '../../src/auth/password-work.js'
import type { App } from '../../src/http/types.js'
import { MASTER_PASSWORD, expectError, makeSite, type TestSite, type TestUser } from '../helpers/app.js'
import { createTestDatabase } from '../helpers/database.js'
import { publishPack } from '../helpers/packs.js'
import { redisSkip, startRedis, TEST_REDIS_URL, type RedisServer } from '../helpers/redis.js'
import { tempDir } from '../helpers/temp.js'

const LIMIT = 5
const UPDATE_CHECK = '/api/packs/alice/limits-pack/latest'

function statuses(responses: LightMyRequestResponse[]): Record<number, number> {
  const counts: Record<number, number> = {}
  for (const res of responses) counts[res.statusCode] = (counts[res.statusCode] ?? 0) + 1
  return counts
}

/** Every answer is a 401 or a 429 with detail; at most LIMIT are 401; the 429s say why and when to retry. */
function assertLimited(responses: LightMyRequestResponse[], tooMany: RegExp): void {
  const counts = statuses(responses)
  assert.deepEqual(Object.keys(counts).sort(), ['401', '429'], JSON.stringify(counts))
  assert.ok(counts[401]! <= LIMIT, `at most ${LIMIT} guesses were checked: ${JSON.stringify(counts)}`)
  for (const res of responses) {
    if (res.statusCode === 401) expectError(res, 401)
    else assert.ok(Number(expectError(res, 429, tooMany) && res.headers['retry-after']) > 0)
  }
}

for (const backend of ['memory', 'redis'] as const) {
  describe(`failed-password limits, ${backend}`, { skip: backend === 'redis' ? redisSkip : false }, () => {
    let redis: RedisServer | undefined
    let site: TestSite
    let app: App
    let alice: TestUser
    let password: string
    const gateHeader = (remoteAddress: string, candidate: string) =>
      app.inject({ url: UPDATE_CHECK, remoteAddress, headers: { 'x-master-password': candidate } })
    const login = (remoteAddress: string, username: string, candidate: string) =>
      app.inject({ method: 'POST', url: '/login/', remoteAddress, headers: { 'x-master-password': password }, payload: { username, password: candidate } })

    before(async () => {
      // Where the run shares a redis-server (the scaled combination), the site takes a database of it (makeSite);
      // else a server of this file's own.
      if (backend === 'redis' && !TEST_REDIS_URL) redis = await startRedis()
      // The gate password stored as a scrypt hash (no PACKS_MASTER_PASSWORD): its first checks cost a scrypt each.
      site = await makeSite({
        PACKS_MASTER_PASSWORD: '', PACKS_AUTH_FAILURE_LIMIT: String(LIMIT), PACKS_AUTH_FAILURE_WINDOW: '1h',
        // '' keeps the memory limiter even where the fixture would give the site a Redis of its own.
        ...(backend === 'memory' ? { REDIS_URL: '' } : redis ? { REDIS_URL: redis.url } : {}),
      })
      assert.equal(site.config.redisUrl === null, backend === 'memory', `the ${backend} limiter`)
      app = site.app
      password = app.generatedMasterPassword!
      alice = await site.user('alice')
      await publishPack(site, alice, { title: 'Limits Pack' })
    })
    after(async () => {
      await site?.close()
      await redis?.stop()
    })

    // First, while no right password has been verified: every wrong one needs a scrypt.
    test('30 wrong gate passwords at once, each needing a scrypt: at most the limit are checked, the rest get 429', async () => {
      const responses = await Promise.all(Array.from({ length: 30 }, (_, i) => gateHeader('10.5.0.1', `wrong-${i}`)))
      assertLimited(responses, /too many failed attempts at the site password/)
      expectError(await gateHeader('10.5.0.1', password), 429, /too many failed attempts/)
    })

    test('players starting together with the right password, before it was ever verified: one scrypt answers them all', async () => {
      const started = passwordWork.started
      // Half from addresses of their own, half behind one NAT address: more of them than the failure
      // limit, all at once, and none gets 429 (joining a check in flight takes no place in the count).
      const responses = await Promise.all(Array.from({ length: 40 }, (_, i) => gateHeader(i % 2 === 0 ? `10.4.0.${i}` : '10.4.1.1', password)))
      assert.deepEqual(statuses(responses), { 200: 40 })
      assert.equal(passwordWork.started - started, 1)
    })

    test('30 wrong gate passwords at once once the right one is known (no scrypt): the same', async () => {
      const started = passwordWork.started
      const responses = await Promise.all(Array.from({ length: 30 }, (_, i) => gateHeader('10.5.0.3', `wrong-${i}`)))
      assertLimited(responses, /too many failed attempts at the site password/)
      assert.equal(statuses(responses)[401], LIMIT, 'answered at once and atomically: exactly the limit')
      assert.equal(passwordWork.started, started, 'no scrypt ran')
    })

    test('30 wrong sign-ins at once from one address: at most the limit are checked, the rest get 429', async () => {
      const started = passwordWork.started
      const responses = await Promise.all(Array.from({ length: 30 }, () => login('10.5.0.4', 'alice', 'not-alices-password')))
      assertLimited(responses, /too many failed attempts at account passwords/)
      assert.ok(passwordWork.started - started <= LIMIT, `scrypt ran ${passwordWork.started - started} times`)
      expectError(await login('10.5.0.4', 'alice', alice.password), 429)
      assert.equal((await login('10.5.0.5', 'alice', alice.password)).statusCode, 200, 'another address signs in')
    })

    test('right passwords never accumulate: many sign-ins and gate checks from one address stay unblocked', async () => {
      for (let i = 0; i < LIMIT * 2; i++) {
        assert.equal((await login('10.5.0.6', 'alice', alice.password)).statusCode, 200)
        assert.equal((await app.inject({ method: 'POST', url: '/gate/', remoteAddress: '10.5.0.6', payload: { password } })).statusCode, 303)
      }
      const together = await Promise.all(Array.from({ length: LIMIT }, () => login('10.5.0.6', 'alice', alice.password)))
      assert.deepEqual(statuses(together), { 200: LIMIT })
      // LIMIT - 1 failures, then a right one: not blocked.
      for (let i = 0; i < LIMIT - 1; i++) expectError(await login('10.5.0.6', 'alice', 'wrong-password'), 401)
      assert.equal((await login('10.5.0.6', 'alice', alice.password)).statusCode, 200)
    })

    test('a blocked address answers 429 whether the password is right or wrong: no oracle', async () => {
      for (let i = 0; i < LIMIT; i++) expectError(await gateHeader('10.5.0.7', `guess-${i}`), 401)
      const right = await gateHeader('10.5.0.7', password)
      const wrong = await gateHeader('10.5.0.7', 'guess-next')
      const digitless = (res: LightMyRequestResponse) => expectError(res, 429).replace(/\d+/g, 'N')
      assert.equal(digitless(right), digitless(wrong))
      assert.equal(right.headers['retry-after'] !== undefined, wrong.headers['retry-after'] !== undefined)
      // The same for the gate form.
      const form = await app.inject({ method: 'POST', url: '/gate/', remoteAddress: '10.5.0.7', payload: { password } })
      assert.equal(form.statusCode, 429)
    })

    test('a blocked address still gets 200 on the update-check with a token, a session or the gate cookie', async () => {
      const blocked = '10.5.0.8'
      for (let i = 0; i < LIMIT; i++) expectError(await gateHeader(blocked, `guess-${i}`), 401)
      expectError(await gateHeader(blocked, password), 429)
      // Its sign-ins are not blocked (another count), so it can get a session.
      const signIn = await login('10.5.0.9', 'alice', alice.password)
      const session = signIn.cookies.find((c) => c.name === 'packs_session')!.value
      const gateCookie = (await app.inject({ method: 'POST', url: '/gate/', remoteAddress: '10.5.0.9', payload: { password } }))
        .cookies.find((c) => c.name === 'packs_gate')!.value
      const ways: Array<[string, InjectOptions]> = [
        ['token', { url: UPDATE_CHECK, remoteAddress: blocked, headers: alice.headers }],
        ['session', { url: UPDATE_CHECK, remoteAddress: blocked, cookies: { packs_session: session } }],
        ['gate cookie', { url: UPDATE_CHECK, remoteAddress: blocked, cookies: { packs_gate: gateCookie } }],
        ['gate cookie with a wrong header', { url: UPDATE_CHECK, remoteAddress: blocked, cookies: { packs_gate: gateCookie }, headers: { 'x-master-password': 'guess' } }],
        ['the header from another address', { url: UPDATE_CHECK, remoteAddress: '10.5.0.10', headers: { 'x-master-password': password } }],
      ]
      for (const [way, request] of ways) {
        const res = await app.inject(request)
        assert.equal(res.statusCode, 200, `${way}: ${res.body}`)
        assert.equal((res.json() as { name: string }).name, 'Limits Pack')
      }
    })

    test('a wrong current password on the password form counts with sign-ins, not with the gate', async () => {
      const address = '10.5.0.11'
      const signIn = await login('10.5.0.12', 'alice', alice.password)
      const session = signIn.cookies.find((c) => c.name === 'packs_session')!.value
      const csrf = (signIn.json() as { csrf_token: string }).csrf_token
      const change = () => app.inject({
        method: 'POST', url: '/settings/password/', remoteAddress: address, cookies: { packs_session: session },
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ csrf_token: csrf, current_password: 'not-it-at-all', new_password: 'brand-new-pw', new_password_repeat: 'brand-new-pw' }).toString(),
      })
      for (let i = 0; i < LIMIT; i++) assert.equal((await change()).statusCode, 401)
      assert.equal((await change()).statusCode, 429)
      expectError(await login(address, 'alice', alice.password), 429)
      assert.equal((await gateHeader(address, password)).statusCode, 200)
    })

    test('IPv6 addresses are counted per /64; another /64 is not affected', async () => {
      for (let i = 1; i <= LIMIT; i++) expectError(await gateHeader(`2001:db8:5:1::${i.toString(16)}`, 'guess'), 401)
      expectError(await gateHeader('2001:db8:5:1:ffff:1:2:3', password), 429, /too many failed attempts/)
      assert.equal((await gateHeader('2001:db8:5:2::1', password)).statusCode, 200)
      // A dual-stack socket's IPv4-mapped address is its IPv4 address.
      for (let i = 0; i < LIMIT; i++) expectError(await gateHeader('::ffff:10.5.0.13', 'guess'), 401)
      expectError(await gateHeader('10.5.0.13', password), 429)
    })
  })
}

describe('password hashing is capped', () => {
  let site: TestSite
  let alice: TestUser
  before(async () => {
    // Far above the tests' cheap cost, so a flood is still arriving while the first hashes run: measured under a
    // heavy load (parallel test jobs), a flood's 60 requests had all arrived within 0.25 s, while the first of its nine
    // 2^14 hashes finished after 0.3 s and the last after 1.6 s or more (about 50 ms of CPU each). Half the
    // production cost (DEFAULT_PASSWORD_HASH_COST, about 130 ms each): that holds as well, and cost the three
    // floods twice the CPU.
    site = await makeSite({ PACKS_AUTH_FAILURE_LIMIT: String(LIMIT), PACKS_PASSWORD_HASH_COST: String(DEFAULT_PASSWORD_HASH_COST / 2) })
    alice = await site.user('alice')
  })
  after(() => site.close())

  test('a flood of sign-ins from many addresses runs a bounded number of scrypts; the rest get 429 at once', async () => {
    const peakBefore = passwordWork.peak
    const finished: Array<{ res: LightMyRequestResponse; ms: number }> = []
    const start = performance.now()
    // Names that cannot exist skip the database: every request reaches the password check within a few milliseconds.
    await Promise.all(Array.from({ length: 60 }, (_, i) => site.app.inject({
      method: 'POST', url: '/login/', remoteAddress: `10.6.${i >> 8}.${i & 255}`, headers: site.gate,
      payload: { username: '!nobody', password: `guess-${i}` },
    }).then((res) => { finished.push({ res, ms: performance.now() - start }) })))
    assert.ok(Math.max(peakBefore, passwordWork.peak) <= passwordWork.concurrency, `peak ${passwordWork.peak} > ${passwordWork.concurrency}`)
    const busy = finished.filter(({ res }) => res.statusCode === 429)
    const checked = finished.filter(({ res }) => res.statusCode === 401)
    assert.equal(busy.length + checked.length, 60, JSON.stringify(statuses(finished.map((f) => f.res))))
    assert.ok(busy.length > 0, 'the queue overflowed')
    assert.ok(checked.length <= passwordWork.concurrency + passwordWork.queueLimit)
    for (const { res } of busy) {
      expectError(res, 429, /busy checking other passwords/)
      assert.equal(res.headers['retry-after'], '1')
    }
    // Refused without waiting for a scrypt: every refusal came before the last check finished.
    assert.ok(Math.max(...busy.map((b) => b.ms)) < Math.max(...checked.map((c) => c.ms)))
    // Refusals for a busy server cost the addresses nothing: each may still try.
    const retry = await site.app.inject({ method: 'POST', url: '/login/', remoteAddress: '10.6.0.0', headers: site.gate, payload: { username: 'alice', password: alice.password } })
    assert.equal(retry.statusCode, 200, retry.body)
  })

  test('the sign-in form says the server is busy rather than that the password was wrong', async () => {
    const floods = Array.from({ length: 40 }, (_, i) => site.app.inject({
      method: 'POST', url: '/login/', remoteAddress: `10.7.0.${i}`, headers: { ...site.gate, 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' },
      payload: `username=%21nobody&password=guess-${i}`,
    }))
    const pages = await Promise.all(floods)
    const busy = pages.filter((res) => res.statusCode === 429)
    assert.ok(busy.length > 0)
    for (const res of busy) {
      assert.match(res.body, /The server is busy checking other passwords/)
      assert.equal(res.headers['retry-after'], '1')
    }
  })

  test('token and gate-header requests are answered while sign-ins flood', async () => {
    const flood = Promise.all(Array.from({ length: 40 }, (_, i) => site.app.inject({
      method: 'POST', url: '/login/', remoteAddress: `10.8.0.${i}`, headers: site.gate, payload: { username: '!nobody', password: `guess-${i}` },
    })))
    const me = await site.app.inject({ url: '/api/me/', headers: alice.headers })
    assert.equal(me.statusCode, 200)
    const gated = await site.app.inject({ url: '/api/users/autocomplete/', remoteAddress: '10.8.0.1', headers: site.gate })
    assert.equal(gated.statusCode, 200)
    await flood
  })
})

describe('client addresses behind a reverse proxy', () => {
  /** The app with its log captured, on a fresh database (PostgreSQL when the suite runs there). */
  async function siteWithLog(env: Record<string, string>): Promise<{ app: App; warnings: () => string[]; close(): Promise<void> }> {
    const dataDir = tempDir('packs-limits-')
    const database = await createTestDatabase({ migrated: true })
    const lines: string[] = []
    const stream = new Writable({ write(chunk, _encoding, callback) { lines.push(...String(chunk).split('\n').filter(Boolean)); callback() } })
    const config = loadConfig({
      PACKS_DATA_DIR: dataDir, PACKS_MASTER_PASSWORD: MASTER_PASSWORD, PACKS_AUTH_FAILURE_LIMIT: String(LIMIT),
      ...(database.url ? { DATABASE_URL: database.url } : {}), ...env,
    })
    const app = await buildApp(config, { logger: { level: 'info', stream }, sweep: false })
    await app.ready()
    return {
      app,
      warnings: () => lines.map((line) => JSON.parse(line) as { level: number; msg: string }).filter((entry) => entry.level === 40).map((entry) => entry.msg),
      async close() {
        await app.close()
        await database.drop()
        fs.rmSync(dataDir, { recursive: true, force: true })
      },
    }
  }

  test('X-Forwarded-For while PACKS_TRUST_PROXY is unset: one warning in the log, however many requests', async () => {
    const site = await siteWithLog({})
    try {
      const gate = { 'x-master-password': MASTER_PASSWORD }
      await site.app.inject({ url: '/api/users/autocomplete/', headers: gate })
      assert.deepEqual(site.warnings(), [], 'no header, no warning')
      for (let i = 0; i < 5; i++) {
        const res = await site.app.inject({ url: '/api/users/autocomplete/', headers: { ...gate, 'x-forwarded-for': `203.0.113.${i}` } })
        assert.equal(res.statusCode, 200)
      }
      const warnings = site.warnings()
      assert.equal(warnings.length, 1, JSON.stringify(warnings))
      assert.match(warnings[0]!, /X-Forwarded-For but PACKS_TRUST_PROXY is not set.*set PACKS_TRUST_PROXY to the proxy's addresses/)
    } finally {
      await site.close()
    }
  })

  test('with the proxy listed: clients are told apart, no warning, and a client that is not the proxy cannot pick its address', async () => {
    const site = await siteWithLog({ PACKS_TRUST_PROXY: '127.0.0.1' })
    try {
      const via = (remoteAddress: string, client: string, password: string) => site.app.inject({
        url: '/api/users/autocomplete/', remoteAddress, headers: { 'x-master-password': password, 'x-forwarded-for': client },
      })
      for (let i = 0; i < LIMIT; i++) expectError(await via('127.0.0.1', '203.0.113.1', 'guess'), 401)
      expectError(await via('127.0.0.1', '203.0.113.1', MASTER_PASSWORD), 429)
      assert.equal((await via('127.0.0.1', '203.0.113.2', MASTER_PASSWORD)).statusCode, 200, 'another client behind the proxy')
      // Someone reaching the port directly, claiming to be 203.0.113.3, is counted as itself.
      for (let i = 0; i < LIMIT; i++) expectError(await via('198.51.100.7', '203.0.113.3', 'guess'), 401)
      assert.equal((await via('127.0.0.1', '203.0.113.3', MASTER_PASSWORD)).statusCode, 200, 'the victim is not locked out')
      expectError(await via('198.51.100.7', '203.0.113.4', MASTER_PASSWORD), 429)
      assert.deepEqual(site.warnings(), [])
    } finally {
      await site.close()
    }
  })
})
