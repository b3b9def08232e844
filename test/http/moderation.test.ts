// Moderation: staff hide packs and disable accounts.
// Hidden: only the owner and staff see the pack (API, page, listing) and the
// update-check answers 404 at once; unhiding restores it. Disabled: the
// account's session and token stop at once (401 naming the reason), sign-in
// is refused, its packs are hidden; enabling restores all of it.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { expectError, siteWith, type TestSite, type TestUser } from '../helpers/app.js'
import { publishPack, type PackJson } from '../helpers/packs.js'

const HTML = { accept: 'text/html' }

let site: TestSite
let alice: TestUser
let bob: TestUser
let carol: TestUser
let root: TestUser
let mod: TestUser

before(async () => {
  ;({ site, alice, bob, carol, root, mod } = await siteWith({ users: ['alice', 'bob', 'carol'], staff: ['root', 'mod'] }))
})
after(() => site.close())

type Headers = Record<string, string>

const post = (url: string, headers: Headers, payload?: unknown) =>
  site.app.inject({ method: 'POST', url, headers, ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) })
const hide = (pack: PackJson, headers: Headers, payload: unknown = {}) => post(`/api/packs/${pack.namespace}/${pack.pack_id}/hide/`, headers, payload)
const unhide = (pack: PackJson, headers: Headers, payload: unknown = {}) => post(`/api/packs/${pack.namespace}/${pack.pack_id}/unhide/`, headers, payload)
const apiPack = (pack: PackJson, headers: Headers) => site.app.inject({ url: `/api/packs/${pack.namespace}/${pack.pack_id}/`, headers })
const pagePack = (pack: PackJson, headers: Headers) => site.app.inject({ url: `/packs/${pack.namespace}/${pack.pack_id}/`, headers: { ...HTML, ...headers } })
const latest = (pack: PackJson) => site.app.inject({ url: `/api/packs/${pack.namespace}/${pack.pack_id}/latest`, headers: site.gate })
async function listed(pack: PackJson, headers: Headers): Promise<boolean> {
  const res = await site.app.inject({ url: '/api/packs/?per_page=100', headers })
  assert.equal(res.statusCode, 200, res.body)
  return (res.json() as { items: { id: string }[] }).items.some((p) => p.id === `${pack.namespace}:${pack.pack_id}`)
}

interface AuditJson { items: { actor: string; action: string; target: string; target_type: string; details: Record<string, unknown> }[]; total: number }
async function audit(query: string): Promise<AuditJson> {
  const res = await site.app.inject({ url: `/api/audit/?${query}`, headers: root.headers })
  assert.equal(res.statusCode, 200, res.body)
  return res.json() as AuditJson
}

/** Signs in with the JSON form: the session cookie and its CSRF token. */
async function signIn(user: TestUser): Promise<{ cookie: string; csrf: string }> {
  const res = await site.app.inject({ method: 'POST', url: '/login/', headers: site.gate, payload: { username: user.username, password: user.password } })
  assert.equal(res.statusCode, 200, res.body)
  const session = res.cookies.find((c) => c.name === 'packs_session')?.value
  assert.ok(session, 'a session cookie')
  return { cookie: `packs_session=${session}`, csrf: (res.json() as { csrf_token: string }).csrf_token }
}

/** Who sees the pack, everywhere a person or a mod looks. */
async function expectVisibleTo(pack: PackJson, who: 'everyone' | 'owner and staff'): Promise<void> {
  const hidden = who !== 'everyone'
  for (const [name, headers] of [['anonymous (gate only)', site.gate], ['another user', bob.headers]] as const) {
    const api = await apiPack(pack, headers)
    const page = await pagePack(pack, headers)
    if (hidden) {
      expectError(api, 404, /pack not found/)
      assert.equal(page.statusCode, 404, `${name}: the page is a 404`)
      assert.doesNotMatch(page.body, new RegExp(pack.title))
    } else {
      assert.equal(api.statusCode, 200, `${name}: ${api.body}`)
      assert.equal(page.statusCode, 200, `${name}: the page`)
    }
    assert.equal(await listed(pack, headers), !hidden, `${name}: ${hidden ? 'not ' : ''}in the listing`)
  }
  for (const [name, headers] of [['owner', alice.headers], ['staff', root.headers]] as const) {
    const api = await apiPack(pack, headers)
    assert.equal(api.statusCode, 200, `${name} sees it: ${api.body}`)
    assert.equal((api.json() as PackJson).hidden, hidden, `${name}: hidden is ${hidden}`)
    const page = await pagePack(pack, headers)
    assert.equal(page.statusCode, 200, `${name} sees the page`)
    assert.equal(page.body.includes('hidden-notice'), hidden, `${name}: the page ${hidden ? 'says' : 'does not say'} it is hidden`)
  }
  const check = await latest(pack)
  if (hidden) expectError(check, 404)
  else assert.equal(check.statusCode, 200, check.body)
}

describe('hiding a pack', () => {
  let pack: PackJson
  before(async () => { pack = await publishPack(site, alice, { title: 'Rule Breaker' }) })

  test('staff hide it: only its owner and staff see it, the update-check answers 404 at once; unhiding restores it', async () => {
    await expectVisibleTo(pack, 'everyone')
    // The update-check's answer is cached now; hiding must drop it.
    assert.equal((await latest(pack)).statusCode, 200)

    const res = await hide(pack, root.headers, { reason: 'breaks rule 3' })
    assert.equal(res.statusCode, 200, res.body)
    const body = res.json() as PackJson
    assert.equal(body.hidden, true)
    assert.equal(body.id, `${pack.namespace}:${pack.pack_id}`)
    await expectVisibleTo(pack, 'owner and staff')

    const page = await pagePack(pack, root.headers)
    assert.match(page.body, /Staff have hidden this pack/)
    assert.match(page.body, /<form id="moderate-pack"[^>]* action="\/api\/packs\/alice\/rule-breaker\/unhide\/"/)
    assert.match(page.body, /Unhide pack/)

    const back = await unhide(pack, mod.headers, { reason: 'fixed' })
    assert.equal(back.statusCode, 200, back.body)
    assert.equal((back.json() as PackJson).hidden, false)
    await expectVisibleTo(pack, 'everyone')
    assert.match((await pagePack(pack, root.headers)).body, /action="\/api\/packs\/alice\/rule-breaker\/hide\/"[^]*Hide pack/)

    const entries = (await audit(`target=alice:rule-breaker&target_type=pack`)).items
    assert.deepEqual(entries.slice(0, 2).map((e) => [e.actor, e.action, e.target, e.details]), [
      ['mod', 'pack.unhide', 'alice:rule-breaker', { reason: 'fixed' }],
      ['root', 'pack.hide', 'alice:rule-breaker', { reason: 'breaks rule 3' }],
    ])
  })

  test('any case in the path; hiding a hidden pack changes nothing and records nothing; no body means no reason', async () => {
    const before_ = (await audit('action=pack.hide')).total
    const first = await post(`/api/packs/ALICE/Rule-Breaker/hide/`, root.headers)
    assert.equal(first.statusCode, 200, first.body)
    assert.equal((await hide(pack, root.headers)).statusCode, 200)
    const after_ = await audit('action=pack.hide')
    assert.equal(after_.total, before_ + 1, 'one entry for two requests')
    assert.deepEqual(after_.items[0]!.details, {}, 'no reason given')
    assert.equal((await unhide(pack, root.headers)).statusCode, 200)
  })

  test('non-staff get 403 (the owner too), anonymous 401; a missing pack is 404 for staff', async () => {
    expectError(await hide(pack, bob.headers), 403, /staff only/)
    expectError(await hide(pack, alice.headers), 403, /staff only/)
    expectError(await unhide(pack, alice.headers), 403, /staff only/)
    expectError(await hide(pack, site.gate), 401)
    expectError(await hide(pack, {}), 401)
    expectError(await post('/api/packs/alice/no-such-pack/hide/', root.headers, {}), 404, /pack not found/)
    expectError(await post('/api/packs/alice:x/y/hide/', root.headers, {}), 404)
    assert.equal((await apiPack(pack, bob.headers)).statusCode, 200, 'nothing was hidden')
  })

  test('hostile bodies are 400s with a detail, and change nothing', async () => {
    expectError(await hide(pack, root.headers, { reason: 'x'.repeat(501) }), 400)
    expectError(await hide(pack, root.headers, { reason: { text: 'x' } }), 400)
    expectError(await hide(pack, root.headers, { reason: 'ok', hidden: false }), 400)
    expectError(await site.app.inject({
      method: 'POST', url: `/api/packs/alice/rule-breaker/hide/`, headers: { ...root.headers, 'content-type': 'application/json' }, payload: '{"reason":',
    }), 400)
    assert.equal((await apiPack(pack, bob.headers)).statusCode, 200, 'still visible')
  })

  test('a staff session needs the CSRF token', async () => {
    const { cookie, csrf } = await signIn(root)
    expectError(await hide(pack, { cookie }), 403, /CSRF/)
    assert.equal((await apiPack(pack, bob.headers)).statusCode, 200, 'still visible')
    const res = await hide(pack, { cookie, 'x-csrf-token': csrf }, { reason: 'from the page' })
    assert.equal(res.statusCode, 200, res.body)
    assert.equal((await unhide(pack, { cookie, 'x-csrf-token': csrf })).statusCode, 200)
  })
})

describe('disabling an account', () => {
  let pack: PackJson
  before(async () => { pack = await publishPack(site, carol, { title: 'Carol Pack' }) })
  const disable = (username: string, headers: Headers, payload: unknown = {}) => post(`/api/users/${username}/disable/`, headers, payload)
  const enable = (username: string, headers: Headers, payload: unknown = {}) => post(`/api/users/${username}/enable/`, headers, payload)
  const me = (headers: Headers) => site.app.inject({ url: '/api/me/', headers })
  const carolLogin = (password = carol.password) =>
    site.app.inject({ method: 'POST', url: '/login/', headers: site.gate, payload: { username: 'carol', password } })
  const visibleTo = async (headers: Headers) => (await apiPack(pack, headers)).statusCode === 200

  test('session and token stop at once (401 naming the reason), sign-in is refused, packs are hidden; enabling restores it all', async () => {
    const { cookie } = await signIn(carol)
    assert.equal((await me({ cookie })).statusCode, 200)
    assert.equal((await me(carol.headers)).statusCode, 200)
    assert.equal((await latest(pack)).statusCode, 200, 'cached before the change')

    const res = await disable('Carol', root.headers, { reason: 'spam account' })
    assert.equal(res.statusCode, 200, res.body)
    const profile = res.json() as { username: string; disabled: boolean; packs: { id: string; hidden: boolean }[] }
    assert.equal(profile.username, 'carol')
    assert.equal(profile.disabled, true)
    assert.deepEqual(profile.packs.map((p) => [p.id, p.hidden]), [['carol:carol-pack', true]])

    expectError(await me(carol.headers), 401, /disabled/)
    expectError(await site.app.inject({ method: 'POST', url: '/api/draft/', headers: carol.headers, payload: { draft: crypto.randomUUID(), data: {} } }), 401, /disabled/)
    expectError(await me({ cookie }), 401, /session/)
    expectError(await carolLogin(), 403, /disabled/)
    // A wrong password says nothing about the account.
    expectError(await carolLogin('wrong-password'), 401, /wrong username or password/)
    const form = await site.app.inject({
      method: 'POST', url: '/login/', headers: { ...site.gate, ...HTML, 'content-type': 'application/x-www-form-urlencoded' },
      payload: `username=carol&password=${encodeURIComponent(carol.password)}`,
    })
    assert.equal(form.statusCode, 403)
    assert.match(form.body, /This account has been disabled by staff/)
    assert.equal(form.cookies.find((c) => c.name === 'packs_session'), undefined, 'no session')

    assert.equal(await visibleTo(site.gate), false)
    assert.equal(await visibleTo(bob.headers), false)
    assert.equal(await visibleTo(root.headers), true, 'staff still see it')
    assert.equal(await listed(pack, site.gate), false)
    expectError(await latest(pack), 404)
    assert.match((await pagePack(pack, root.headers)).body, /The owner&#39;s account is disabled|The owner's account is disabled/)

    const back = await enable('carol', mod.headers)
    assert.equal(back.statusCode, 200, back.body)
    assert.equal((back.json() as { disabled: boolean }).disabled, false)
    assert.equal((await me(carol.headers)).statusCode, 200, 'the same token works again')
    assert.equal((await carolLogin()).statusCode, 200, 'sign-in works again')
    expectError(await me({ cookie }), 401, /session/)
    assert.equal(await visibleTo(site.gate), true)
    assert.equal(await listed(pack, site.gate), true)
    assert.equal((await latest(pack)).statusCode, 200)

    const entries = (await audit('target=CAROL&target_type=user')).items
    assert.deepEqual(entries.slice(0, 2).map((e) => [e.actor, e.action, e.target]), [['mod', 'user.enable', 'carol'], ['root', 'user.disable', 'carol']])
    assert.equal(entries[1]!.details.reason, 'spam account')
    assert.equal(entries[1]!.details.sessions_ended, 1)
  })

  test('a pack hidden by staff stays hidden when its owner is enabled again', async () => {
    assert.equal((await hide(pack, root.headers)).statusCode, 200)
    assert.equal((await disable('carol', root.headers)).statusCode, 200)
    assert.equal((await enable('carol', root.headers)).statusCode, 200)
    assert.equal(await visibleTo(bob.headers), false)
    assert.equal((await unhide(pack, root.headers)).statusCode, 200)
    assert.equal(await visibleTo(bob.headers), true)
  })

  test('staff cannot disable themselves (400) but may disable other staff; non-staff 403; unknown user 404', async () => {
    expectError(await disable('root', root.headers), 400, /your own account/)
    assert.equal((await me(root.headers)).statusCode, 200)
    expectError(await disable('carol', bob.headers), 403, /staff only/)
    expectError(await disable('bob', bob.headers), 403, /staff only/)
    expectError(await enable('carol', carol.headers), 403)
    expectError(await disable('carol', site.gate), 401)
    expectError(await disable('nobody', root.headers), 404, /no user/)
    expectError(await disable('x'.repeat(200), root.headers), 404)
    expectError(await disable('carol', root.headers, { reason: 'y'.repeat(501) }), 400)
    assert.equal((await me(carol.headers)).statusCode, 200, 'nothing changed')

    assert.equal((await disable('mod', root.headers)).statusCode, 200)
    expectError(await me(mod.headers), 401, /disabled/)
    assert.equal((await enable('mod', root.headers)).statusCode, 200)
    assert.equal((await me(mod.headers)).statusCode, 200)
  })

  test('a staff session needs the CSRF token', async () => {
    const { cookie, csrf } = await signIn(root)
    expectError(await disable('carol', { cookie }), 403, /CSRF/)
    assert.equal((await me(carol.headers)).statusCode, 200)
    assert.equal((await disable('carol', { cookie, 'x-csrf-token': csrf })).statusCode, 200)
    assert.equal((await enable('carol', { cookie, 'x-csrf-token': csrf })).statusCode, 200)
  })
})

test('/api/schema/ documents the moderation endpoints, staff-only with bearerAuth', async () => {
  const doc = (await site.app.inject({ url: '/api/schema/', headers: site.gate })).json() as {
    paths: Record<string, Record<string, { summary?: string; security?: unknown[]; responses: Record<string, unknown> }>>
  }
  for (const path of [
    '/api/packs/{namespace}/{pack_id}/hide/', '/api/packs/{namespace}/{pack_id}/unhide/',
    '/api/users/{username}/disable/', '/api/users/{username}/enable/',
  ]) {
    const op = doc.paths[path]?.post
    assert.ok(op, `${path} is documented`)
    assert.match(op.summary ?? '', /staff only/)
    assert.deepEqual(op.security, [{ bearerAuth: [] }])
    for (const status of ['200', '400', '401', '403', '404']) assert.ok(op.responses[status], `${path} lists ${status}`)
  }
})
