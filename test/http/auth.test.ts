// The gate and authentication (docs/decisions.md#the-gate, #authentication): header, gate page
// and cookie, Bearer tokens, sessions with CSRF, and failed-attempt limits.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import type { LightMyRequestResponse } from 'fastify'
import { passwordWork } from '../../src/auth/password-work.js'
import { createApiToken } from '../../src/accounts/tokens-service.js'
import { authenticatePassword } from '../../src/accounts/users-service.js'
import { MASTER_PASSWORD, expectError, makeSite, siteWith, type TestSite, type TestUser } from '../helpers/app.js'

/** `name=value` pairs of the response's Set-Cookie headers. */
function cookiesOf(res: LightMyRequestResponse): Record<string, string> {
  return Object.fromEntries(res.cookies.map((c) => [c.name, c.value]))
}

// One site with the default settings for the gate, tokens and sessions: each works with its own user, and none
// comes near the default failure limit (10 per address), so they cannot disturb each other. The limits, the
// generated password and the password checks have sites of their own.
let site: TestSite
let alice: TestUser
before(async () => ({ site, alice } = await siteWith({ users: ['alice'] })))
after(() => site.close())

describe('gate', () => {
  test('/healthz is outside the gate', async () => {
    const res = await site.app.inject({ url: '/healthz' })
    assert.equal(res.statusCode, 200)
    assert.deepEqual(res.json(), { status: 'ok' })
  })

  test('an API request without the gate gets 401 with detail and WWW-Authenticate', async () => {
    for (const url of ['/api/tags/autocomplete/', '/api/files/00000000-0000-4000-8000-000000000000/', '/api/packs/a/b/latest', '/api/schema/', '/api/nowhere/']) {
      expectError(await site.app.inject({ url }), 401)
    }
  })

  test('a wrong X-Master-Password gets 401; the right one passes', async () => {
    expectError(await site.app.inject({ url: '/api/users/autocomplete/', headers: { 'x-master-password': 'wrong' } }), 401, /master password/)
    const res = await site.app.inject({ url: '/api/users/autocomplete/', headers: site.gate })
    assert.equal(res.statusCode, 200)
  })

  test('a page without the gate redirects to the gate form, keeping where it was going', async () => {
    const res = await site.app.inject({ url: '/login/?next=/x' })
    assert.equal(res.statusCode, 303)
    assert.equal(res.headers.location, `/gate/?next=${encodeURIComponent('/login/?next=/x')}`)
    const form = await site.app.inject({ url: res.headers.location as string })
    assert.equal(form.statusCode, 200)
    assert.match(form.body, /<form method="post" action="\/gate\/"/)
    assert.match(form.body, /value="\/login\/\?next=\/x"/)
  })

  test('POST /gate/ with the password sets an HttpOnly cookie that passes the gate, and redirects to next', async () => {
    const res = await site.app.inject({ method: 'POST', url: '/gate/', payload: { password: MASTER_PASSWORD, next: '/login/' } })
    assert.equal(res.statusCode, 303)
    assert.equal(res.headers.location, '/login/')
    const cookie = res.cookies.find((c) => c.name === 'packs_gate')
    assert.ok(cookie?.httpOnly, 'gate cookie is HttpOnly')
    const api = await site.app.inject({ url: '/api/users/autocomplete/', cookies: { packs_gate: cookie!.value } })
    assert.equal(api.statusCode, 200)
    const forged = await site.app.inject({ url: '/api/users/autocomplete/', cookies: { packs_gate: cookie!.value.replace(/.$/, (c) => (c === '0' ? '1' : '0')) } })
    expectError(forged, 401)
  })

  test('POST /gate/ with a wrong password says so and sets no cookie', async () => {
    const res = await site.app.inject({ method: 'POST', url: '/gate/', payload: { password: 'nope', next: '/' } })
    assert.equal(res.statusCode, 401)
    assert.match(res.body, /Wrong password/)
    assert.equal(cookiesOf(res).packs_gate, undefined)
  })

  test('the gate form never redirects off-site', async () => {
    const res = await site.app.inject({ method: 'POST', url: '/gate/', payload: { password: MASTER_PASSWORD, next: '//evil.example/' } })
    assert.equal(res.headers.location, '/')
  })

  test('HTML interpolations are escaped on the gate page', async () => {
    const res = await site.app.inject({ url: '/gate/?next=/"><script>alert(1)</script>' })
    assert.ok(!res.body.includes('<script>alert(1)'))
    // safeNext percent-encodes what a URL cannot hold raw; the characters a path keeps must still be escaped in HTML.
    const kept = await site.app.inject({ url: `/gate/?next=${encodeURIComponent("/it's&more")}` })
    assert.match(kept.body, /value="\/it&#39;s&amp;more"/)
    assert.match(String(res.headers['content-security-policy']), /default-src 'none'/)
  })
})

describe('bearer tokens', () => {
  test('a valid token passes the gate by itself and identifies the user', async () => {
    const res = await site.app.inject({ url: '/api/me/', headers: alice.headers })
    assert.equal(res.statusCode, 200)
    assert.deepEqual(res.json(), { username: 'alice', is_staff: false, csrf_token: null })
  })

  test('the username is matched case-insensitively', async () => {
    const res = await site.app.inject({ url: '/api/me/', headers: { authorization: `Bearer ALICE ${alice.token}` } })
    assert.equal(res.statusCode, 200)
  })

  test('malformed, unknown, wrong-user and wrong-scheme credentials get 401 even with the gate passed', async () => {
    const bob = await site.user('bob')
    const bad = [
      'Bearer',
      `Bearer ${alice.token}`,
      `Bearer alice  ${alice.token}`,
      `Bearer alice ${alice.token} extra`,
      `Basic ${Buffer.from('alice:pw').toString('base64')}`,
      'Bearer alice packs_notarealtoken',
      `Bearer bob ${alice.token}`,
      `bearer alice ${alice.token}x`,
      'Bearer alice ' + 'x'.repeat(10_000),
    ]
    for (const authorization of bad) {
      // Gate-level endpoint: a bad credential still fails rather than falling back to the gate header.
      expectError(await site.app.inject({ url: '/api/users/autocomplete/', headers: { ...site.gate, authorization } }), 401)
    }
    assert.equal((await site.app.inject({ url: '/api/me/', headers: bob.headers })).statusCode, 200)
  })

  test('an expired token gets 401', async () => {
    const { token } = await createApiToken(site.app.db, 'alice', 'old', new Date(Date.now() - 1000))
    expectError(await site.app.inject({ url: '/api/me/', headers: { authorization: `Bearer alice ${token}` } }), 401, /expired/)
  })

  test('a revoked token gets 401', async () => {
    const { token, id } = await createApiToken(site.app.db, 'alice', 'to revoke')
    assert.equal((await site.app.inject({ url: '/api/me/', headers: { authorization: `Bearer alice ${token}` } })).statusCode, 200)
    await site.app.db.updateTable('api_tokens').set({ revoked_at: new Date().toISOString() }).where('id', '=', id).execute()
    expectError(await site.app.inject({ url: '/api/me/', headers: { authorization: `Bearer alice ${token}` } }), 401)
  })

  test('tokens are stored only as SHA-256 hashes, and use is recorded', async () => {
    const rows = await site.app.db.selectFrom('api_tokens').selectAll().execute()
    assert.ok(rows.length > 0)
    for (const row of rows) {
      assert.match(row.token_hash, /^[0-9a-f]{64}$/)
      assert.ok(!Object.values(row).includes(alice.token))
    }
    const used = rows.find((r) => r.name === 'tests' && r.user_id === rows[0]!.user_id)
    assert.ok(used?.last_used_at, 'last_used_at is set once the token is used')
  })

  test('user-only endpoints refuse a gate-only request with 401', async () => {
    expectError(await site.app.inject({ url: '/api/me/', headers: site.gate }), 401, /authentication required/)
  })
})

describe('sessions and CSRF', () => {
  // Made here, after the token tests, which look at every token the site has.
  let carol: TestUser
  before(async () => { carol = await site.user('carol') })
  async function signIn(): Promise<{ session: string; csrf: string }> {
    const res = await site.app.inject({
      method: 'POST', url: '/login/', headers: site.gate, payload: { username: 'carol', password: carol.password },
    })
    assert.equal(res.statusCode, 200, res.body)
    const session = cookiesOf(res).packs_session!
    assert.ok(session)
    assert.ok(res.cookies.find((c) => c.name === 'packs_session')?.httpOnly)
    return { session, csrf: (res.json() as { csrf_token: string }).csrf_token }
  }

  test('the sign-in form sets a session cookie and redirects', async () => {
    const form = await site.app.inject({
      method: 'POST', url: '/login/',
      headers: { ...site.gate, 'content-type': 'application/x-www-form-urlencoded' },
      payload: `username=carol&password=${encodeURIComponent(carol.password)}&next=%2Fapi%2Fme%2F`,
    })
    assert.equal(form.statusCode, 303)
    assert.equal(form.headers.location, '/api/me/')
    assert.ok(cookiesOf(form).packs_session)
  })

  test('a session passes the gate and authenticates', async () => {
    const { session, csrf } = await signIn()
    const res = await site.app.inject({ url: '/api/me/', cookies: { packs_session: session } })
    assert.equal(res.statusCode, 200)
    assert.equal((res.json() as { csrf_token: string }).csrf_token, csrf)
  })

  test('a wrong password is a 401 and sets no cookie; an unknown user looks the same', async () => {
    for (const username of ['carol', 'nobody']) {
      const res = await site.app.inject({ method: 'POST', url: '/login/', headers: site.gate, payload: { username, password: 'wrong-password' } })
      expectError(res, 401, /wrong username or password/)
      assert.equal(cookiesOf(res).packs_session, undefined)
    }
  })

  test('session-authenticated state changes need the CSRF token; token requests do not', async () => {
    const { session, csrf } = await signIn()
    const draft = crypto.randomUUID()
    const body = { draft, data: { title: 'x' } }
    const withoutToken = await site.app.inject({ method: 'POST', url: '/api/draft/', cookies: { packs_session: session }, payload: body })
    expectError(withoutToken, 403, /CSRF/)
    const wrongToken = await site.app.inject({ method: 'POST', url: '/api/draft/', cookies: { packs_session: session }, headers: { 'x-csrf-token': 'f'.repeat(64) }, payload: body })
    expectError(wrongToken, 403, /CSRF/)
    const withToken = await site.app.inject({ method: 'POST', url: '/api/draft/', cookies: { packs_session: session }, headers: { 'x-csrf-token': csrf }, payload: body })
    assert.equal(withToken.statusCode, 200, withToken.body)
    const withBearer = await site.app.inject({ method: 'POST', url: '/api/draft/', headers: carol.headers, payload: body })
    assert.equal(withBearer.statusCode, 200)
  })

  test('logout needs the CSRF token and ends the session', async () => {
    const { session, csrf } = await signIn()
    expectError(await site.app.inject({ method: 'POST', url: '/logout/', cookies: { packs_session: session } }), 403)
    const res = await site.app.inject({
      method: 'POST', url: '/logout/', cookies: { packs_session: session },
      headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: `csrf_token=${csrf}`,
    })
    assert.equal(res.statusCode, 303)
    expectError(await site.app.inject({ url: '/api/me/', cookies: { packs_session: session } }), 401, /session/)
  })

  test('a stale session cookie is a 401 on the API but only dropped on a page', async () => {
    expectError(await site.app.inject({ url: '/api/me/', headers: site.gate, cookies: { packs_session: 'ps_stale' } }), 401)
    const page = await site.app.inject({ url: '/', headers: site.gate, cookies: { packs_session: 'ps_stale' } })
    assert.equal(page.statusCode, 200)
    assert.equal(page.cookies.find((c) => c.name === 'packs_session')?.value, '')
  })
})

describe('failed attempts are limited per client address', () => {
  let site: TestSite
  before(async () => { site = await makeSite({ PACKS_AUTH_FAILURE_LIMIT: '3', PACKS_AUTH_FAILURE_WINDOW: '1h' }) })
  after(() => site.close())

  test('after the limit, gate attempts get 429 with Retry-After, even with the right password', async () => {
    const from = (remoteAddress: string, password: string) =>
      site.app.inject({ url: '/api/users/autocomplete/', remoteAddress, headers: { 'x-master-password': password } })
    for (let i = 0; i < 3; i++) expectError(await from('10.0.0.1', 'wrong'), 401)
    const limited = await from('10.0.0.1', MASTER_PASSWORD)
    expectError(limited, 429, /too many failed attempts/)
    const retryAfter = Number(limited.headers['retry-after'])
    assert.ok(retryAfter > 0 && retryAfter <= 3600, `Retry-After ${retryAfter}`)
    // Another address is not affected, and successes never count.
    for (let i = 0; i < 5; i++) assert.equal((await from('10.0.0.2', MASTER_PASSWORD)).statusCode, 200)
  })

  test('gate failures never block sign-in, and sign-in failures never block the gate', async () => {
    const gateForm = (remoteAddress: string, password: string) =>
      site.app.inject({ method: 'POST', url: '/gate/', remoteAddress, payload: { password } })
    const login = (remoteAddress: string, password: string) =>
      site.app.inject({ method: 'POST', url: '/login/', remoteAddress, headers: site.gate, payload: { username: 'dora', password } })
    await site.user('dora')

    // The gate form and the gate header share the gate's count.
    for (let i = 0; i < 2; i++) assert.equal((await gateForm('10.0.0.3', 'x')).statusCode, 401)
    expectError(await site.app.inject({ url: '/api/users/autocomplete/', remoteAddress: '10.0.0.3', headers: { 'x-master-password': 'y' } }), 401)
    const page = await gateForm('10.0.0.3', MASTER_PASSWORD)
    assert.equal(page.statusCode, 429)
    assert.ok(Number(page.headers['retry-after']) > 0)
    assert.match(page.body, /Try again in \d+ seconds/)
    // Signing in from that address still works, the gate passed with its cookie (obtained elsewhere).
    const gateCookie = (await gateForm('10.0.0.4', MASTER_PASSWORD)).cookies.find((c) => c.name === 'packs_gate')!.value
    const signIn = await site.app.inject({ method: 'POST', url: '/login/', remoteAddress: '10.0.0.3', cookies: { packs_gate: gateCookie }, payload: { username: 'dora', password: 'dora-password' } })
    assert.equal(signIn.statusCode, 200, signIn.body)

    // Three wrong sign-ins block sign-in from 10.0.0.5, not its gate header.
    for (let i = 0; i < 3; i++) expectError(await login('10.0.0.5', 'wrong-pass'), 401)
    expectError(await login('10.0.0.5', 'dora-password'), 429, /too many failed attempts at account passwords/)
    const gated = await site.app.inject({ url: '/api/users/autocomplete/', remoteAddress: '10.0.0.5', headers: site.gate })
    assert.equal(gated.statusCode, 200)
    assert.equal((await gateForm('10.0.0.5', MASTER_PASSWORD)).statusCode, 303)
    assert.equal((await login('10.0.0.6', 'dora-password')).statusCode, 200, 'another address signs in')
  })
})

describe('generated master password', () => {
  test('without PACKS_MASTER_PASSWORD a password is generated once and works', async () => {
    const site = await makeSite({ PACKS_MASTER_PASSWORD: '' })
    try {
      const generated = site.app.generatedMasterPassword
      assert.ok(generated && generated.length >= 20)
      const stored = await site.app.db.selectFrom('settings').select('value').where('key', '=', 'master_password_hash').executeTakeFirst()
      assert.ok(stored && !stored.value.includes(generated), 'only a hash is stored')
      assert.equal((await site.app.inject({ url: '/api/users/autocomplete/', headers: { 'x-master-password': generated } })).statusCode, 200)
      expectError(await site.app.inject({ url: '/api/users/autocomplete/', headers: { 'x-master-password': MASTER_PASSWORD } }), 401)
    } finally {
      await site.close()
    }
  })
})

describe('password checks', () => {
  // A site of its own: the first unknown name it is ever asked about is one this test asks about.
  let site: TestSite
  before(async () => { site = await makeSite() })
  after(() => site.close())

  test('every scrypt goes through the password work queue; an unknown user costs exactly one, like a wrong password', async () => {
    const { db, passwords } = site.app
    await site.user('alice')
    const cost = async (username: string) => {
      const before = passwordWork.started
      assert.equal(await authenticatePassword(db, passwords, username, 'wrong-password'), undefined)
      return passwordWork.started - before
    }
    // The first unknown name used to hash a decoy first: two scrypts, then one.
    assert.deepEqual([await cost('nobody'), await cost('alice'), await cost('nobody'), await cost('bad name!')], [1, 1, 1, 1])
    const before = passwordWork.started
    assert.ok(await authenticatePassword(db, passwords, 'alice', 'alice-password'))
    assert.equal(passwordWork.started - before, 1)
  })
})
