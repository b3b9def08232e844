// Profiles: GET /api/users/{username}/ and /users/{username}/
// list a user's packs; hidden ones only to their owner and staff (marked); a
// disabled account is 404 except to staff; names match in any case; pack
// pages and browse cards link the owner there; staff get Disable / Enable.
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
let castle: PackJson
let tower: PackJson
let secret: PackJson

before(async () => {
  ;({ site, alice, bob, carol, root } = await siteWith({ users: ['alice', 'bob', 'carol'], staff: ['root'] }))
  castle = await publishPack(site, alice, { title: 'Castle Walls' })
  tower = await publishPack(site, alice, { title: 'Tower Roofs' })
  secret = await publishPack(site, alice, { title: 'Rule Breaker' })
  await publishPack(site, bob, { title: 'Bob Things' })
  await publishPack(site, carol, { title: 'Carol Pack' })
  const hidden = await site.app.inject({ method: 'POST', url: `/api/packs/alice/${secret.pack_id}/hide/`, headers: root.headers, payload: { reason: 'test' } })
  assert.equal(hidden.statusCode, 200, hidden.body)
  const disabled = await site.app.inject({ method: 'POST', url: '/api/users/carol/disable/', headers: root.headers, payload: {} })
  assert.equal(disabled.statusCode, 200, disabled.body)
})
after(() => site.close())

type Headers = Record<string, string>
interface ProfileJson {
  username: string
  created_at: string
  disabled: boolean
  packs: { id: string; title: string; owner: string; hidden: boolean; downloads: number }[]
  page: number
  per_page: number
  total: number
}

async function profile(username: string, headers: Headers, query = ''): Promise<ProfileJson> {
  const res = await site.app.inject({ url: `/api/users/${username}/${query}`, headers })
  assert.equal(res.statusCode, 200, res.body)
  return res.json() as ProfileJson
}
const page = (path: string, headers: Headers) => site.app.inject({ url: path, headers: { ...HTML, ...headers } })

describe('GET /api/users/{username}/', () => {
  test('anyone past the gate: the user and their public packs, newest update first, paged', async () => {
    const body = await profile('alice', site.gate)
    assert.equal(body.username, 'alice')
    assert.equal(body.disabled, false)
    assert.match(body.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    assert.deepEqual(body.packs.map((p) => p.id), ['alice:tower-roofs', 'alice:castle-walls'])
    assert.ok(body.packs.every((p) => p.owner === 'alice' && !p.hidden))
    assert.equal(body.total, 2)
    assert.equal(body.page, 1)
    assert.equal(body.per_page, 20)
    assert.deepEqual(await profile('alice', bob.headers), body, 'another user sees the same')

    const second = await profile('alice', site.gate, '?per_page=1&page=2')
    assert.deepEqual(second.packs.map((p) => p.id), ['alice:castle-walls'])
    assert.equal(second.total, 2)
    assert.deepEqual((await profile('alice', site.gate, '?page=9')).packs, [], 'past the last page: no packs')
  })

  test('the name matches in any case', async () => {
    const body = await profile('ALiCe', site.gate)
    assert.equal(body.username, 'alice')
    assert.equal(body.total, 2)
  })

  test('their hidden packs show to them and to staff, marked', async () => {
    for (const headers of [alice.headers, root.headers]) {
      const body = await profile('alice', headers)
      assert.deepEqual(body.packs.map((p) => [p.id, p.hidden]), [
        ['alice:rule-breaker', true], ['alice:tower-roofs', false], ['alice:castle-walls', false],
      ])
      assert.equal(body.total, 3)
    }
  })

  test('a disabled account is 404 except to staff, who see it marked with its packs', async () => {
    for (const headers of [site.gate, bob.headers]) expectError(await site.app.inject({ url: '/api/users/carol/', headers }), 404, /no user "carol"/)
    const body = await profile('Carol', root.headers)
    assert.equal(body.disabled, true)
    assert.deepEqual(body.packs.map((p) => [p.id, p.hidden]), [['carol:carol-pack', true]])
  })

  test('unknown names, names no account can have, and hostile input are 404 or 400 with a detail; the gate applies', async () => {
    expectError(await site.app.inject({ url: '/api/users/nobody/', headers: site.gate }), 404, /no user "nobody"/)
    expectError(await site.app.inject({ url: `/api/users/${'x'.repeat(33)}/`, headers: site.gate }), 404)
    expectError(await site.app.inject({ url: `/api/users/${'%E2%98%83'.repeat(500)}/`, headers: site.gate }), 404)
    expectError(await site.app.inject({ url: '/api/users/al%27ice/', headers: site.gate }), 404)
    expectError(await site.app.inject({ url: '/api/users/alice/?page=0', headers: site.gate }), 400)
    expectError(await site.app.inject({ url: '/api/users/alice/?per_page=1000', headers: site.gate }), 400)
    expectError(await site.app.inject({ url: '/api/users/alice/?page=abc', headers: site.gate }), 400)
    expectError(await site.app.inject({ url: '/api/users/alice/' }), 401)
  })

  test('documented in /api/schema/', async () => {
    const res = await site.app.inject({ url: '/api/schema/', headers: site.gate })
    const doc = res.json() as { paths: Record<string, Record<string, { summary?: string; parameters?: { name: string; in: string }[]; responses: Record<string, unknown> }>> }
    const op = doc.paths['/api/users/{username}/']?.get
    assert.ok(op, 'GET /api/users/{username}/ is documented')
    assert.ok(op.summary)
    assert.deepEqual(['200', '401', '404'].filter((s) => op.responses[s]), ['200', '401', '404'])
    assert.deepEqual(op.parameters?.map((p) => `${p.in}:${p.name}`).sort(), ['path:username', 'query:page', 'query:per_page'])
  })
})

describe('/users/{username}/', () => {
  test('lists their public packs as cards, with the owner linked and no staff controls', async () => {
    const res = await page('/users/Alice/', site.gate)
    assert.equal(res.statusCode, 200)
    assert.match(res.body, /<title>alice · Packs<\/title>/)
    assert.match(res.body, /<h1>alice<\/h1>/)
    assert.match(res.body, /<span class="profile-count">2 packs<\/span>/)
    assert.match(res.body, /<a href="\/packs\/alice\/tower-roofs\/">Tower Roofs<\/a>[^]*<a href="\/packs\/alice\/castle-walls\/">Castle Walls<\/a>/)
    assert.match(res.body, /by <a class="owner" href="\/users\/alice\/">alice<\/a>/)
    assert.doesNotMatch(res.body, /Rule Breaker/)
    assert.doesNotMatch(res.body, /moderate-account|Disable account/)
    assert.doesNotMatch(res.body, /profile-[0-9A-Za-z_-]+\.js/, 'no staff script')
  })

  test('the owner sees their hidden pack marked "Hidden"', async () => {
    const { cookie } = await signIn(alice)
    const res = await page('/users/alice/', { cookie })
    assert.equal(res.statusCode, 200)
    assert.match(res.body, /<h2 id="profile-packs-heading">Your packs<\/h2>/)
    const card = res.body.slice(res.body.indexOf('>Rule Breaker<') - 200)
    assert.match(card.slice(0, 600), /<article class="card pack-card is-hidden">[^]*Rule Breaker<\/a> <span class="hidden-badge"[^>]*>Hidden<\/span>/)
    assert.doesNotMatch(res.body, /moderate-account/, 'not staff')
  })

  test('staff see hidden packs and a Disable form on others\' profiles, never on their own', async () => {
    const { cookie } = await signIn(root)
    const res = await page('/users/alice/', { cookie })
    assert.equal(res.statusCode, 200)
    assert.match(res.body, /Rule Breaker<\/a> <span class="hidden-badge"/)
    assert.match(res.body, /<form id="moderate-account"[^>]* action="\/api\/users\/alice\/disable\/"/)
    assert.match(res.body, /Disable account<\/button>/)
    assert.match(res.body, /<script type="module" src="\/assets\/profile-[^"]+\.js">/)
    const own = await page('/users/root/', { cookie })
    assert.equal(own.statusCode, 200)
    assert.doesNotMatch(own.body, /moderate-account/)
  })

  test('a disabled account\'s page is a 404 except to staff, who see it marked with Enable', async () => {
    for (const headers of [site.gate, bob.headers]) {
      const res = await page('/users/carol/', headers)
      assert.equal(res.statusCode, 404)
      assert.doesNotMatch(res.body, /Carol Pack/)
    }
    const { cookie } = await signIn(root)
    const res = await page('/users/carol/', { cookie })
    assert.equal(res.statusCode, 200)
    assert.match(res.body, /This account is disabled/)
    assert.match(res.body, /Carol Pack/)
    assert.match(res.body, /<form id="moderate-account"[^>]* action="\/api\/users\/carol\/enable\/"/)
    assert.match(res.body, /Enable account<\/button>/)
  })

  test('unknown users and pages past the last are 404 pages; a bad page number is 400', async () => {
    const missing = await page('/users/nobody/', site.gate)
    assert.equal(missing.statusCode, 404)
    assert.match(missing.body, /There is no user &quot;nobody&quot;|There is no user "nobody"/)
    assert.equal((await page('/users/alice/?page=2', site.gate)).statusCode, 404)
    assert.equal((await page('/users/alice/?page=zero', site.gate)).statusCode, 400)
    assert.equal((await page('/users/alice/?page=1&page=2', site.gate)).statusCode, 400)
    // Behind the gate, like every page: a browser is sent to the gate page.
    const gated = await page('/users/alice/', {})
    assert.equal(gated.statusCode, 303)
    assert.doesNotMatch(gated.body, /Castle Walls/)
  })

  test('paginates like the browse page', async () => {
    const { site: many, dora } = await siteWith({ users: ['dora'] })
    try {
      for (let i = 1; i <= 21; i++) await publishPack(many, dora, { title: `Dora Pack ${i}` })
      const first = await many.app.inject({ url: '/users/dora/', headers: { ...HTML, ...many.gate } })
      assert.match(first.body, /<span class="profile-count">21 packs<\/span>/)
      assert.match(first.body, /Page 1 of 2/)
      assert.match(first.body, /<a class="button secondary" rel="next" href="\/users\/dora\/\?page=2">Next<\/a>/)
      const second = await many.app.inject({ url: '/users/dora/?page=2', headers: { ...HTML, ...many.gate } })
      assert.equal(second.statusCode, 200)
      assert.match(second.body, />Dora Pack 1</)
      assert.doesNotMatch(second.body, />Dora Pack 2</)
    } finally {
      await many.close()
    }
  })
})

describe('links to profiles', () => {
  test('the pack page and browse cards link the owner to their profile', async () => {
    const packPage = await page(`/packs/alice/${castle.pack_id}/`, site.gate)
    assert.match(packPage.body, /by <a class="owner" href="\/users\/alice\/">alice<\/a>/)
    const home = await page('/', site.gate)
    const card = home.body.slice(home.body.indexOf(`>${tower.title}<`))
    assert.match(card.slice(0, card.indexOf('</article>')), /by <a class="owner" href="\/users\/alice\/">alice<\/a>/)
  })
})

/** Signs in with the JSON form: the session cookie. */
async function signIn(user: TestUser): Promise<{ cookie: string }> {
  const res = await site.app.inject({ method: 'POST', url: '/login/', headers: site.gate, payload: { username: user.username, password: user.password } })
  assert.equal(res.statusCode, 200, res.body)
  const session = res.cookies.find((c) => c.name === 'packs_session')?.value
  assert.ok(session, 'a session cookie')
  return { cookie: `packs_session=${session}` }
}
