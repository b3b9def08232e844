// Account pages: sign up (docs/decisions.md#usernames) and change password, through
// the forms as a browser posts them.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import type { LightMyRequestResponse } from 'fastify'
import { csrfTokenFor } from '../../src/auth/csrf.js'
import { makeSite, type TestSite } from '../helpers/app.js'

const FORM = { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' }

function form(fields: Record<string, string>): string {
  return new URLSearchParams(fields).toString()
}

function sessionOf(res: LightMyRequestResponse): string | undefined {
  return res.cookies.find((c) => c.name === 'packs_session')?.value || undefined
}

/** The text of the page's role="alert" line. */
function alertOf(res: LightMyRequestResponse): string {
  const match = /<p class="error" role="alert">([^<]*)<\/p>/.exec(res.body)
  assert.ok(match, `the page shows an alert:\n${res.body}`)
  return match[1]!
}

describe('sign up', () => {
  let site: TestSite
  before(async () => { site = await makeSite() })
  after(() => site.close())

  const signUp = (fields: Record<string, string>, headers: Record<string, string> = {}) =>
    site.app.inject({ method: 'POST', url: '/signup/', headers: { ...site.gate, ...FORM, ...headers }, payload: form(fields) })

  test('the form has the labelled fields, a password hint and no CSRF field (there is no session yet)', async () => {
    const res = await site.app.inject({ url: '/signup/?next=/drafts/', headers: { ...site.gate, accept: 'text/html' } })
    assert.equal(res.statusCode, 200)
    assert.match(res.body, /<label for="username">Username<\/label>/)
    assert.match(res.body, /<label for="password">Password<\/label>/)
    assert.match(res.body, /<label for="password_repeat">Repeat password<\/label>/)
    assert.match(res.body, /At least 8 characters/)
    assert.match(res.body, /<button type="submit">Sign up<\/button>/)
    assert.match(res.body, /name="next" value="\/drafts\/"/)
    assert.doesNotMatch(res.body, /name="csrf_token"/)
  })

  test('a new account is signed in at once: session cookie, redirect to next, and /api/me/ knows it', async () => {
    const res = await signUp({ username: 'New.User-1', password: 'long-enough', password_repeat: 'long-enough', next: '/drafts/' })
    assert.equal(res.statusCode, 303, res.body)
    assert.equal(res.headers.location, '/drafts/')
    const cookie = res.cookies.find((c) => c.name === 'packs_session')
    assert.ok(cookie?.value && cookie.httpOnly, 'an HttpOnly session cookie')
    assert.equal(cookie.sameSite, 'Lax')
    const me = await site.app.inject({ url: '/api/me/', cookies: { packs_session: cookie.value } })
    assert.equal(me.statusCode, 200)
    assert.equal((me.json() as { username: string }).username, 'New.User-1')
    // And the password works on the sign-in form.
    const login = await site.app.inject({ method: 'POST', url: '/login/', headers: site.gate, payload: { username: 'new.user-1', password: 'long-enough' } })
    assert.equal(login.statusCode, 200)
  })

  test('next never leads off-site; without next it is the home page', async () => {
    const off = await signUp({ username: 'offsite', password: 'long-enough', password_repeat: 'long-enough', next: '//evil.example/' })
    assert.equal(off.headers.location, '/')
    const none = await signUp({ username: 'nonext', password: 'long-enough', password_repeat: 'long-enough' })
    assert.equal(none.headers.location, '/')
  })

  test('a taken name, in any case, is refused with 409 and the form keeps the name', async () => {
    await site.user('Taken')
    for (const username of ['Taken', 'taken', 'TAKEN']) {
      const res = await signUp({ username, password: 'long-enough', password_repeat: 'long-enough' })
      assert.equal(res.statusCode, 409)
      assert.equal(alertOf(res), 'That username is taken.')
      assert.match(res.body, new RegExp(`id="username" name="username"[^>]*value="${username}"`))
      assert.equal(sessionOf(res), undefined)
    }
    assert.equal((await site.app.db.selectFrom('users').select('id').where('username_lower', '=', 'taken').execute()).length, 1)
  })

  test('invalid names are refused with 400 and a message naming the rule', async () => {
    for (const username of ['', 'has space', 'slash/name', 'é', 'x'.repeat(33), 'semi;colon']) {
      const res = await signUp({ username, password: 'long-enough', password_repeat: 'long-enough' })
      assert.equal(res.statusCode, 400, `${JSON.stringify(username)}: ${res.statusCode}`)
      assert.match(alertOf(res), /Username must be 1-32 characters of letters, digits/)
      assert.equal(sessionOf(res), undefined)
    }
    // 32 characters is still fine.
    const res = await signUp({ username: 'x'.repeat(32), password: 'long-enough', password_repeat: 'long-enough' })
    assert.equal(res.statusCode, 303)
  })

  test('a short password and a mismatch are refused; the username is kept, the passwords are not', async () => {
    const short = await signUp({ username: 'shorty', password: 'seven77', password_repeat: 'seven77' })
    assert.equal(short.statusCode, 400)
    assert.equal(alertOf(short), 'Password must be at least 8 characters.')
    assert.match(short.body, /value="shorty"/)
    assert.doesNotMatch(short.body, /seven77/)
    const mismatch = await signUp({ username: 'mismatch', password: 'long-enough', password_repeat: 'long-enougH' })
    assert.equal(mismatch.statusCode, 400)
    assert.equal(alertOf(mismatch), 'The two passwords do not match.')
    assert.doesNotMatch(mismatch.body, /long-enoug/)
    const missing = await signUp({ username: 'missing' })
    assert.equal(missing.statusCode, 400)
    assert.equal(await site.app.db.selectFrom('users').select('id').where('username_lower', 'in', ['shorty', 'mismatch', 'missing']).executeTakeFirst(), undefined)
  })

  test('the echoed username is escaped', async () => {
    const res = await signUp({ username: '"><script>alert(1)</script>', password: 'long-enough', password_repeat: 'long-enough' })
    assert.equal(res.statusCode, 400)
    assert.ok(!res.body.includes('<script>alert(1)'), 'no live script tag')
    assert.match(res.body, /value="&quot;&gt;&lt;script&gt;alert\(1\)&lt;\/script&gt;"/)
  })

  test('a signed-in user visiting or posting to /signup/ goes home, still signed in as before', async () => {
    const res = await signUp({ username: 'already', password: 'long-enough', password_repeat: 'long-enough' })
    const session = sessionOf(res)!
    const page = await site.app.inject({ url: '/signup/', cookies: { packs_session: session }, headers: { accept: 'text/html' } })
    assert.equal(page.statusCode, 303)
    assert.equal(page.headers.location, '/')
    const again = await site.app.inject({
      method: 'POST', url: '/signup/', cookies: { packs_session: session }, headers: FORM,
      payload: form({ username: 'second', password: 'long-enough', password_repeat: 'long-enough' }),
    })
    assert.equal(again.statusCode, 303)
    assert.equal(sessionOf(again), undefined, 'no new session')
    assert.equal(await site.app.db.selectFrom('users').select('id').where('username_lower', '=', 'second').executeTakeFirst(), undefined)
  })

  test('the sign-up page is behind the gate', async () => {
    const res = await site.app.inject({ url: '/signup/', headers: { accept: 'text/html' } })
    assert.equal(res.statusCode, 303)
    assert.equal(res.headers.location, '/gate/?next=%2Fsignup%2F')
    const post = await site.app.inject({ method: 'POST', url: '/signup/', headers: FORM, payload: form({ username: 'nogate', password: 'long-enough', password_repeat: 'long-enough' }) })
    assert.equal(post.statusCode, 303)
    assert.match(String(post.headers.location), /^\/gate\//)
    assert.equal(await site.app.db.selectFrom('users').select('id').where('username_lower', '=', 'nogate').executeTakeFirst(), undefined)
  })
})

describe('change password', () => {
  let site: TestSite
  before(async () => { site = await makeSite({ PACKS_AUTH_FAILURE_LIMIT: '3' }) })
  after(() => site.close())

  async function signIn(username: string, password: string, remoteAddress = '127.0.0.1'): Promise<{ session: string; csrf: string }> {
    const res = await site.app.inject({ method: 'POST', url: '/login/', remoteAddress, headers: site.gate, payload: { username, password } })
    assert.equal(res.statusCode, 200, res.body)
    const session = sessionOf(res)!
    return { session, csrf: csrfTokenFor(site.app.gate.siteSecret, session) }
  }

  const change = (session: string, fields: Record<string, string>, remoteAddress = '127.0.0.1') =>
    site.app.inject({ method: 'POST', url: '/settings/password/', remoteAddress, cookies: { packs_session: session }, headers: FORM, payload: form(fields) })

  const me = async (session: string) => (await site.app.inject({ url: '/api/me/', cookies: { packs_session: session } })).statusCode

  test('the page needs a user: anonymous browsers are sent to sign in', async () => {
    const res = await site.app.inject({ url: '/settings/password/', headers: { ...site.gate, accept: 'text/html' } })
    assert.equal(res.statusCode, 303)
    assert.equal(res.headers.location, '/login/?next=%2Fsettings%2Fpassword%2F')
  })

  test('the form has the three labelled fields and the session\'s CSRF token', async () => {
    const user = await site.user('formcheck')
    const { session, csrf } = await signIn(user.username, user.password)
    const res = await site.app.inject({ url: '/settings/password/', cookies: { packs_session: session }, headers: { accept: 'text/html' } })
    assert.equal(res.statusCode, 200)
    for (const label of ['Current password', 'New password', 'Repeat new password']) assert.match(res.body, new RegExp(`>${label}</label>`))
    assert.match(res.body, new RegExp(`name="csrf_token" value="${csrf}"`))
    assert.match(res.body, /<button type="submit">Change password<\/button>/)
  })

  test('without the CSRF token the change is refused with 403 and nothing changes', async () => {
    const user = await site.user('csrfless')
    const { session } = await signIn(user.username, user.password)
    const res = await change(session, { current_password: user.password, new_password: 'brand-new-pw', new_password_repeat: 'brand-new-pw' })
    assert.equal(res.statusCode, 403)
    assert.match(res.body, /CSRF/)
    const wrong = await change(session, { csrf_token: 'f'.repeat(64), current_password: user.password, new_password: 'brand-new-pw', new_password_repeat: 'brand-new-pw' })
    assert.equal(wrong.statusCode, 403)
    await signIn(user.username, user.password)
  })

  test('a wrong current password is a 401 page with the message, and counts as a failed attempt', async () => {
    const user = await site.user('wrongcur')
    const { session, csrf } = await signIn(user.username, user.password, '10.1.0.1')
    const fields = { csrf_token: csrf, current_password: 'not-it-at-all', new_password: 'brand-new-pw', new_password_repeat: 'brand-new-pw' }
    for (let i = 0; i < 3; i++) {
      const res = await change(session, fields, '10.1.0.1')
      assert.equal(res.statusCode, 401)
      assert.equal(alertOf(res), 'The current password is wrong.')
      assert.doesNotMatch(res.body, /brand-new-pw|not-it-at-all/)
    }
    // The limit (3 here) is reached: even the right password now waits.
    const limited = await change(session, { ...fields, current_password: user.password }, '10.1.0.1')
    assert.equal(limited.statusCode, 429)
    assert.ok(Number(limited.headers['retry-after']) > 0)
    assert.match(alertOf(limited), /Try again in \d+ seconds/)
    await signIn(user.username, user.password, '10.1.0.2')
  })

  test('a short or mismatched new password is refused with 400 before the current one is checked', async () => {
    const user = await site.user('rules')
    const { session, csrf } = await signIn(user.username, user.password)
    const short = await change(session, { csrf_token: csrf, current_password: user.password, new_password: 'short', new_password_repeat: 'short' })
    assert.equal(short.statusCode, 400)
    assert.equal(alertOf(short), 'Password must be at least 8 characters.')
    const mismatch = await change(session, { csrf_token: csrf, current_password: user.password, new_password: 'brand-new-pw', new_password_repeat: 'brand-new-pX' })
    assert.equal(mismatch.statusCode, 400)
    assert.equal(alertOf(mismatch), 'The two new passwords do not match.')
    await signIn(user.username, user.password)
  })

  test('success: the old password stops working, the new one works, other sessions end, this one stays', async () => {
    const user = await site.user('changer')
    const current = await signIn(user.username, user.password)
    const other = await signIn(user.username, user.password)
    const elsewhere = await signIn(user.username, user.password)
    const res = await change(current.session, { csrf_token: current.csrf, current_password: user.password, new_password: 'brand-new-pw', new_password_repeat: 'brand-new-pw' })
    assert.equal(res.statusCode, 303, res.body)
    assert.equal(res.headers.location, '/settings/password/?changed=1')
    const done = await site.app.inject({ url: res.headers.location as string, cookies: { packs_session: current.session }, headers: { accept: 'text/html' } })
    assert.match(done.body, /<p class="notice" role="status">Password changed.<\/p>/)

    assert.equal(await me(current.session), 200, 'the session that changed it stays signed in')
    assert.equal(await me(other.session), 401, 'other sessions are ended')
    assert.equal(await me(elsewhere.session), 401)
    const oldLogin = await site.app.inject({ method: 'POST', url: '/login/', remoteAddress: '10.9.0.1', headers: site.gate, payload: { username: 'changer', password: user.password } })
    assert.equal(oldLogin.statusCode, 401)
    await signIn('changer', 'brand-new-pw')
    // The API token made before the change still works: tokens are separate credentials.
    assert.equal((await site.app.inject({ url: '/api/me/', headers: user.headers })).statusCode, 200)
  })

  test('another user\'s sessions are not touched', async () => {
    const a = await site.user('keeper-a')
    const b = await site.user('keeper-b')
    const sa = await signIn(a.username, a.password)
    const sb = await signIn(b.username, b.password)
    const res = await change(sa.session, { csrf_token: sa.csrf, current_password: a.password, new_password: 'brand-new-pw', new_password_repeat: 'brand-new-pw' })
    assert.equal(res.statusCode, 303)
    assert.equal(await me(sb.session), 200)
  })
})
