// API tokens of the signed-in user: GET/POST /api/tokens/, DELETE
// /api/tokens/{token_id}/, and the Settings → API tokens page that uses them.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { csrfTokenFor } from '../../src/auth/csrf.js'
import type { ApiTokenBody as ApiToken, CreatedTokenBody as CreatedToken } from '../../src/api/tokens.js'
import { expectError, siteWith, type TestSite, type TestUser } from '../helpers/app.js'

const ISO_Z = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/

describe('API tokens', () => {
  let site: TestSite
  let alice: TestUser
  let bob: TestUser
  /** alice's browser session. */
  let session = ''
  let csrf = ''

  before(async () => {
    ;({ site, Alice: alice, bob } = await siteWith({ users: ['Alice', 'bob'] }))
    const login = await site.app.inject({ method: 'POST', url: '/login/', headers: site.gate, payload: { username: 'alice', password: alice.password } })
    assert.equal(login.statusCode, 200)
    session = login.cookies.find((c) => c.name === 'packs_session')!.value
    csrf = csrfTokenFor(site.app.gate.siteSecret, session)
  })
  after(() => site.close())

  const asSession = (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: unknown, withCsrf = true) =>
    site.app.inject({
      method, url, cookies: { packs_session: session },
      headers: withCsrf ? { 'x-csrf-token': csrf } : {},
      ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
    })

  async function create(name: string, expires_in_days?: number | null): Promise<CreatedToken> {
    const res = await asSession('POST', '/api/tokens/', expires_in_days === undefined ? { name } : { name, expires_in_days })
    assert.equal(res.statusCode, 201, res.body)
    return res.json() as CreatedToken
  }

  const meWith = (authorization: string) => site.app.inject({ url: '/api/me/', headers: { authorization } })

  test('a session creates a token: shown once, with the complete Authorization header value, and it works', async () => {
    const before = Date.now()
    const created = await create('  deploy script  ', 30)
    assert.equal(created.name, 'deploy script', 'the name is trimmed')
    assert.match(created.token, /^packs_/)
    assert.equal(created.authorization, `Bearer Alice ${created.token}`)
    assert.match(created.created_at, ISO_Z)
    assert.equal(created.last_used_at, null)
    assert.equal(created.expired, false)
    assert.equal(created.scope, 'full', 'full access unless a reach is asked for')
    assert.deepEqual(created.packs, [])
    const expires = Date.parse(created.expires_at!)
    assert.ok(Math.abs(expires - (before + 30 * 86_400_000)) < 60_000, `expires in 30 days: ${created.expires_at}`)

    const me = await meWith(created.authorization)
    assert.equal(me.statusCode, 200)
    assert.equal((me.json() as { username: string }).username, 'Alice')
    // Stored as a hash only.
    const row = await site.app.db.selectFrom('api_tokens').selectAll().where('id', '=', created.id).executeTakeFirstOrThrow()
    assert.ok(!Object.values(row).includes(created.token))
  })

  test('the list shows the caller\'s live tokens, newest first, and never the token or its hash', async () => {
    const first = await create('first', null)
    await new Promise((resolve) => setTimeout(resolve, 5)) // distinct created_at, so "newest first" is defined
    const second = await create('second')
    await meWith(second.authorization)
    const res = await asSession('GET', '/api/tokens/')
    assert.equal(res.statusCode, 200)
    const list = res.json() as ApiToken[]
    const ids = list.map((t) => t.id)
    assert.ok(ids.indexOf(second.id) < ids.indexOf(first.id), 'newest first')
    for (const token of list) {
      assert.deepEqual(Object.keys(token).sort(), ['created_at', 'expired', 'expires_at', 'id', 'last_used_at', 'name', 'packs', 'scope'])
      // Reaches are test/http/token-reach.test.ts's; these tokens were all made without one.
      assert.equal(token.scope, 'full')
      assert.deepEqual(token.packs, [])
    }
    assert.equal(list.find((t) => t.id === first.id)!.expires_at, null)
    assert.match(list.find((t) => t.id === second.id)!.last_used_at ?? '', ISO_Z, 'use is recorded')
    const rows = await site.app.db.selectFrom('api_tokens').select(['token_hash']).execute()
    for (const { token_hash } of rows) assert.ok(!res.body.includes(token_hash))
    assert.ok(!res.body.includes(first.token) && !res.body.includes(second.token))
    // bob's tokens are not alice's business, and bob sees none of hers.
    const bobs = await site.app.inject({ url: '/api/tokens/', headers: bob.headers })
    assert.equal(bobs.statusCode, 200)
    assert.deepEqual((bobs.json() as ApiToken[]).map((t) => t.name), ['tests'])
    // The same list answers a token.
    const withToken = await site.app.inject({ url: '/api/tokens/', headers: alice.headers })
    assert.deepEqual((withToken.json() as ApiToken[]).map((t) => t.id), ids)
  })

  test('expired tokens stay listed, marked expired, until revoked', async () => {
    const created = await create('short-lived', 1)
    await site.app.db.updateTable('api_tokens').set({ expires_at: new Date(Date.now() - 1000).toISOString() }).where('id', '=', created.id).execute()
    expectError(await meWith(created.authorization), 401)
    const list = (await asSession('GET', '/api/tokens/')).json() as ApiToken[]
    assert.equal(list.find((t) => t.id === created.id)?.expired, true)
  })

  test('revoking a token stops it at once and removes it from the list', async () => {
    const created = await create('to revoke')
    assert.equal((await meWith(created.authorization)).statusCode, 200)
    const res = await asSession('DELETE', `/api/tokens/${created.id}/`)
    assert.equal(res.statusCode, 200)
    assert.deepEqual(res.json(), { success: true })
    expectError(await meWith(created.authorization), 401, /revoked/)
    const list = (await asSession('GET', '/api/tokens/')).json() as ApiToken[]
    assert.ok(!list.some((t) => t.id === created.id))
    // A second revoke finds nothing.
    expectError(await asSession('DELETE', `/api/tokens/${created.id}/`), 404)
  })

  test('a token can be revoked with a token (upper-case id too), and without a trailing slash', async () => {
    const created = await create('revoked by token')
    const res = await site.app.inject({ method: 'DELETE', url: `/api/tokens/${created.id.toUpperCase()}`, headers: alice.headers })
    assert.equal(res.statusCode, 200, res.body)
    expectError(await meWith(created.authorization), 401)
  })

  test('someone else\'s, an unknown or a malformed token id is 404, and the other user\'s token keeps working', async () => {
    const bobToken = (await site.app.inject({ url: '/api/tokens/', headers: bob.headers })).json() as ApiToken[]
    const bobId = bobToken[0]!.id
    for (const id of [bobId, '00000000-0000-4000-8000-000000000000', 'not-a-uuid', '1', "x' OR '1'='1"]) {
      expectError(await asSession('DELETE', `/api/tokens/${encodeURIComponent(id)}/`), 404)
    }
    expectError(await site.app.inject({ method: 'DELETE', url: `/api/tokens/${bobId}/`, headers: alice.headers }), 404)
    assert.equal((await site.app.inject({ url: '/api/me/', headers: bob.headers })).statusCode, 200)
    const row = await site.app.db.selectFrom('api_tokens').select('revoked_at').where('id', '=', bobId).executeTakeFirstOrThrow()
    assert.equal(row.revoked_at, null)
  })

  test('a token cannot create tokens (403, saying why)', async () => {
    const res = await site.app.inject({ method: 'POST', url: '/api/tokens/', headers: alice.headers, payload: { name: 'minted' } })
    expectError(res, 403, /browser session/)
    const count = await site.app.db.selectFrom('api_tokens').select('id').where('name', '=', 'minted').execute()
    assert.equal(count.length, 0)
  })

  test('session requests need the CSRF token to create or revoke', async () => {
    expectError(await asSession('POST', '/api/tokens/', { name: 'no csrf' }, false), 403, /CSRF/)
    const created = await create('csrf-protected')
    expectError(await asSession('DELETE', `/api/tokens/${created.id}/`, undefined, false), 403, /CSRF/)
    assert.equal((await meWith(created.authorization)).statusCode, 200)
  })

  test('without a user: 401', async () => {
    expectError(await site.app.inject({ url: '/api/tokens/', headers: site.gate }), 401)
    expectError(await site.app.inject({ method: 'POST', url: '/api/tokens/', headers: site.gate, payload: { name: 'x' } }), 401)
    expectError(await site.app.inject({ method: 'DELETE', url: '/api/tokens/00000000-0000-4000-8000-000000000000/', headers: site.gate }), 401)
  })

  test('invalid bodies are 400 with a detail', async () => {
    const bad: unknown[] = [
      {},
      { name: '' },
      { name: '   ' },
      { name: 'x'.repeat(65) },
      { name: 'tab\there' },
      { name: 'ok', expires_in_days: 0 },
      { name: 'ok', expires_in_days: -5 },
      { name: 'ok', expires_in_days: 1.5 },
      { name: 'ok', expires_in_days: 3651 },
      { name: 'ok', expires_in_days: 'soon' },
      { name: 'ok', expires_at: '2099-01-01T00:00:00Z' },
      { name: { text: 'a' } },
    ]
    for (const body of bad) {
      expectError(await asSession('POST', '/api/tokens/', body), 400)
    }
    const notJson = await site.app.inject({
      method: 'POST', url: '/api/tokens/', cookies: { packs_session: session },
      headers: { 'x-csrf-token': csrf, 'content-type': 'application/json' }, payload: '{"name":',
    })
    expectError(notJson, 400)
    const names = (await site.app.db.selectFrom('api_tokens').select('name').execute()).map((r) => r.name)
    assert.ok(!names.includes('ok') && !names.includes(''), `nothing was created: ${names.join(', ')}`)
  })

  test('a 64-character name and null expiry are accepted', async () => {
    const created = await create('n'.repeat(64), null)
    assert.equal(created.name.length, 64)
    assert.equal(created.expires_at, null)
  })

  test('OpenAPI documents the three operations with bearerAuth, their bodies and errors', async () => {
    const doc = (await site.app.inject({ url: '/api/schema/', headers: site.gate })).json() as {
      paths: Record<string, Record<string, { tags?: string[]; security?: Array<Record<string, unknown>>; responses: Record<string, { content?: Record<string, { schema: { properties?: Record<string, unknown>; items?: { properties?: Record<string, unknown> } } }> }>; requestBody?: { content: Record<string, { schema: { properties?: Record<string, unknown> } }> } }>>
    }
    const list = doc.paths['/api/tokens/']?.get
    const post = doc.paths['/api/tokens/']?.post
    const del = doc.paths['/api/tokens/{token_id}/']?.delete
    assert.ok(list && post && del, `paths: ${Object.keys(doc.paths).join(', ')}`)
    for (const op of [list, post, del]) {
      assert.deepEqual(op.tags, ['tokens'])
      assert.ok(op.security?.some((s) => 'bearerAuth' in s))
      assert.ok(op.responses['401'])
    }
    assert.ok(post.responses['201'] && post.responses['400'] && post.responses['403'])
    assert.ok(del.responses['200'] && del.responses['404'])
    const created = post.responses['201']!.content!['application/json']!.schema.properties!
    assert.ok('token' in created && 'authorization' in created && 'expires_at' in created)
    const item = list.responses['200']!.content!['application/json']!.schema.items!.properties!
    assert.ok(!('token' in item) && !('token_hash' in item))
    const body = post.requestBody!.content['application/json']!.schema.properties!
    assert.deepEqual(Object.keys(body).sort(), ['expires_in_days', 'name', 'packs', 'scope'])
  })
})

describe('Settings → API tokens page', () => {
  let site: TestSite
  let carol: TestUser
  let session = ''
  let csrf = ''
  const HTML = { accept: 'text/html' }
  const FORM = { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' }

  before(async () => {
    ;({ site, carol } = await siteWith({ users: ['carol'] }))
    const login = await site.app.inject({ method: 'POST', url: '/login/', headers: site.gate, payload: { username: 'carol', password: carol.password } })
    session = login.cookies.find((c) => c.name === 'packs_session')!.value
    csrf = csrfTokenFor(site.app.gate.siteSecret, session)
  })
  after(() => site.close())

  const page = () => site.app.inject({ url: '/settings/tokens/', cookies: { packs_session: session }, headers: HTML })

  test('anonymous browsers are sent to sign in', async () => {
    const res = await site.app.inject({ url: '/settings/tokens/', headers: { ...site.gate, ...HTML } })
    assert.equal(res.statusCode, 303)
    assert.equal(res.headers.location, '/login/?next=%2Fsettings%2Ftokens%2F')
  })

  test('the server renders the form and the list: names escaped, times in <time>, "never" for unused, a Revoke button per row', async () => {
    await site.app.inject({
      method: 'POST', url: '/api/tokens/', cookies: { packs_session: session }, headers: { 'x-csrf-token': csrf },
      payload: { name: '<img src=x onerror=alert(1)>', expires_in_days: 7 },
    })
    const res = await page()
    assert.equal(res.statusCode, 200)
    assert.match(res.body, /<label for="token-name">Name<\/label>/)
    assert.match(res.body, /<label for="token-expires">Expires<\/label>/)
    assert.match(res.body, /<option value="">Never<\/option>/)
    assert.match(res.body, /<button type="submit">Create token<\/button>/)
    assert.match(res.body, /id="new-token-panel"[^>]* hidden/, 'no token shown on a plain visit')
    assert.match(res.body, /<table class="tokens">/)
    assert.ok(!res.body.includes('<img src=x'), 'the token name is escaped')
    assert.match(res.body, /&lt;img src=x onerror=alert\(1\)&gt;/)
    assert.match(res.body, /<time datetime="\d{4}-\d\d-\d\dT[^"]+Z" title="\d{1,2} \w{3} \d{4}, \d\d:\d\d UTC">\d{1,2} \w{3} \d{4}, \d\d:\d\d UTC<\/time>/)
    assert.match(res.body, /<span class="muted">never<\/span>/)
    // "tests" (made by the helper) and the new one: two Revoke buttons.
    assert.equal(res.body.match(/>Revoke<span class="visually-hidden">/g)?.length, 2)
    assert.match(res.body, /<script type="module" src="\/assets\/tokens-[^"]+\.js">/)
  })

  test('without JavaScript: the form creates a token and the answer shows it once with the header line', async () => {
    const res = await site.app.inject({
      method: 'POST', url: '/settings/tokens/', cookies: { packs_session: session }, headers: FORM,
      payload: new URLSearchParams({ csrf_token: csrf, name: 'no-js', expires_in_days: '' }).toString(),
    })
    assert.equal(res.statusCode, 200)
    const token = /<code id="new-token" class="secret">(packs_[^<]+)<\/code>/.exec(res.body)?.[1]
    assert.ok(token, 'the token is shown')
    assert.ok(res.body.includes(`<code id="new-token-header" class="secret">Authorization: Bearer carol ${token}</code>`))
    assert.match(res.body, /it will not be shown again/)
    assert.equal((await site.app.inject({ url: '/api/me/', headers: { authorization: `Bearer carol ${token}` } })).statusCode, 200)
    // Not on the next visit.
    assert.ok(!(await page()).body.includes(token))
  })

  test('without JavaScript: a bad name re-renders the form with the message; no CSRF token is a 403', async () => {
    const res = await site.app.inject({
      method: 'POST', url: '/settings/tokens/', cookies: { packs_session: session }, headers: FORM,
      payload: new URLSearchParams({ csrf_token: csrf, name: '  ', expires_in_days: '30' }).toString(),
    })
    assert.equal(res.statusCode, 400)
    assert.match(res.body, /role="alert">Name must not be empty.<\/p>/)
    const noCsrf = await site.app.inject({
      method: 'POST', url: '/settings/tokens/', cookies: { packs_session: session }, headers: FORM,
      payload: new URLSearchParams({ name: 'forged' }).toString(),
    })
    assert.equal(noCsrf.statusCode, 403)
  })

  test('without JavaScript: the Revoke form revokes and comes back to the list', async () => {
    const created = (await site.app.inject({
      method: 'POST', url: '/api/tokens/', cookies: { packs_session: session }, headers: { 'x-csrf-token': csrf }, payload: { name: 'form-revoke' },
    })).json() as CreatedToken
    assert.match((await page()).body, new RegExp(`action="/settings/tokens/${created.id}/revoke/"`))
    const res = await site.app.inject({
      method: 'POST', url: `/settings/tokens/${created.id}/revoke/`, cookies: { packs_session: session }, headers: FORM,
      payload: new URLSearchParams({ csrf_token: csrf }).toString(),
    })
    assert.equal(res.statusCode, 303)
    assert.equal(res.headers.location, '/settings/tokens/?revoked=1')
    expectError(await site.app.inject({ url: '/api/me/', headers: { authorization: created.authorization } }), 401)
    const after = await site.app.inject({ url: res.headers.location as string, cookies: { packs_session: session }, headers: HTML })
    assert.match(after.body, /role="status">Token revoked.<\/p>/)
    assert.ok(!after.body.includes('form-revoke'))
  })
})
