// Cache-Control on answers that carry secrets. Every answer
// is `no-store` unless its route chooses caching on purpose: a CSRF token, a
// new API token or a draft must never sit in a browser's disk cache or a
// shared proxy, and gated answers are not protected by RFC 9111 §3.5 (the gate
// password is not an Authorization header). The few cacheable routes keep
// their own policy, each safe for its reason (tested at the end).
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import type { LightMyRequestResponse } from 'fastify'
import { csrfTokenFor } from '../../src/auth/csrf.js'
import { siteWith, type TestSite, type TestUser } from '../helpers/app.js'
import { pathOf, publishPack, saveDraft, upload } from '../helpers/packs.js'
import { png } from '../helpers/fixtures.js'

function expectNoStore(res: LightMyRequestResponse, what: string): void {
  assert.ok(res.statusCode < 500, `${what}: ${res.statusCode} ${res.body}`)
  assert.equal(res.headers['cache-control'], 'no-store', `${what} (${res.statusCode}) must not be stored`)
}

describe('Cache-Control: no-store', () => {
  let site: TestSite
  let alice: TestUser
  let session = ''
  let csrf = ''

  before(async () => {
    ;({ site, alice } = await siteWith({ users: ['alice'] }))
    const login = await site.app.inject({ method: 'POST', url: '/login/', headers: site.gate, payload: { username: 'alice', password: alice.password } })
    assert.equal(login.statusCode, 200, login.body)
    expectNoStore(login, 'the JSON sign-in answer (it carries the CSRF token)')
    assert.ok((login.json() as { csrf_token?: string }).csrf_token)
    session = login.cookies.find((c) => c.name === 'packs_session')!.value
    csrf = csrfTokenFor(site.app.gate.siteSecret, session)
  })
  after(() => site.close())

  const asSession = (method: 'GET' | 'POST', url: string, payload?: Record<string, unknown>) =>
    site.app.inject({ method, url, cookies: { packs_session: session }, headers: { 'x-csrf-token': csrf }, ...(payload ? { payload } : {}) })

  test('/api/me/ (the CSRF token), for a session and for a token', async () => {
    const me = await asSession('GET', '/api/me/')
    assert.equal((me.json() as { csrf_token: string }).csrf_token, csrf)
    expectNoStore(me, 'GET /api/me/ with a session')
    expectNoStore(await site.app.inject({ url: '/api/me/', headers: alice.headers }), 'GET /api/me/ with a token')
  })

  test('creating and listing API tokens, through the API and the settings page', async () => {
    const created = await asSession('POST', '/api/tokens/', { name: 'laptop' })
    assert.equal(created.statusCode, 201, created.body)
    expectNoStore(created, 'POST /api/tokens/ (the new token)')
    expectNoStore(await asSession('GET', '/api/tokens/'), 'GET /api/tokens/')
    expectNoStore(await site.app.inject({ url: '/api/tokens/', headers: alice.headers }), 'GET /api/tokens/ with a token')

    // Without JavaScript the settings page itself shows the new token.
    const page = await site.app.inject({
      method: 'POST', url: '/settings/tokens/', cookies: { packs_session: session },
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ name: 'no-js', expires_in_days: '30', csrf_token: csrf }).toString(),
    })
    assert.equal(page.statusCode, 200, page.body)
    assert.match(page.body, /Copy it now/)
    expectNoStore(page, 'POST /settings/tokens/ (the page showing the new token)')
    expectNoStore(await asSession('GET', '/settings/tokens/'), 'GET /settings/tokens/')
  })

  test('every other per-user JSON answer: drafts, uploads, statistics; and errors', async () => {
    const draft = randomUUID()
    await saveDraft(site, alice, draft, { title: 'secret plans' })
    const uploaded = await upload(site, alice, 'thumbnail', png(), { draft })
    const staff = await site.user('root', { staff: true })
    const requests: Array<[string, () => Promise<LightMyRequestResponse>]> = [
      ['GET /api/draft/', () => site.app.inject({ url: `/api/draft/?draft=${draft}`, headers: alice.headers })],
      ['POST /api/draft/', () => site.app.inject({ method: 'POST', url: '/api/draft/', headers: alice.headers, payload: { draft, data: { title: 'x' } } })],
      ['GET /api/drafts/', () => site.app.inject({ url: '/api/drafts/', headers: alice.headers })],
      ['GET /api/stats/', () => site.app.inject({ url: '/api/stats/', headers: staff.headers })],
      ['GET /api/files/ of a draft\'s file, 404 once deleted', async () => {
        await site.app.inject({ method: 'POST', url: `/api/uploads/${uploaded.uuid}/delete/`, headers: alice.headers })
        return site.app.inject({ url: pathOf(uploaded.url), headers: alice.headers })
      }],
      ['a 401', () => site.app.inject({ url: '/api/me/', headers: site.gate })],
      ['a 404', () => site.app.inject({ url: '/api/nothing-here/', headers: alice.headers })],
      ['a 400', () => site.app.inject({ url: '/api/draft/?draft=nope', headers: alice.headers })],
    ]
    for (const [what, send] of requests) expectNoStore(await send(), what)
  })

  test('answers meant to be cached keep their own policy', async () => {
    const pack = await publishPack(site, alice, { title: 'Cached' })
    const latest = await site.app.inject({ url: `/api/packs/${pack.namespace}/${pack.pack_id}/latest`, headers: site.gate })
    // Stored but revalidated on every use, with the requester's own gate password: the origin decides each time.
    assert.equal(latest.headers['cache-control'], 'no-cache')
    const notModified = await site.app.inject({
      url: `/api/packs/${pack.namespace}/${pack.pack_id}/latest`, headers: { ...site.gate, 'if-none-match': String(latest.headers.etag) },
    })
    assert.equal(notModified.statusCode, 304)
    assert.equal(notModified.headers['cache-control'], 'no-cache')
    // Immutable bytes, private: a browser keeps them, a shared cache does not.
    const file = await site.app.inject({ url: pathOf(pack.versions[0]!.download_url), headers: site.gate })
    assert.equal(file.statusCode, 200)
    assert.match(String(file.headers['cache-control']), /^private, /)
  })
})
