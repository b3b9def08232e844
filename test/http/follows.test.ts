// Following packs: follow and unfollow through the API are idempotent and keep the pack's count right, even when
// 20 people follow one pack at the same moment; a pack the caller may not see is 404 (and drops out of their
// list until it is shown again); the count shows in the pack's JSON, the Modrinth-compatible project and search
// hit; GET /api/me/follows/ pages newest first; bad input is a clear 400. Then the pages: the pack page's
// Follow / Unfollow form works without JavaScript, and a profile lists what its user follows to them alone.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { LightMyRequestResponse } from 'fastify'
import { createApiToken } from '../../src/accounts/tokens-service.js'
import { expectError, siteWith, type TestSite, type TestUser, signIn, type Session } from '../helpers/app.js'
import { publishPack, type PackJson } from '../helpers/packs.js'

const HTML = { accept: 'text/html,application/xhtml+xml' }

let site: TestSite
let alice: TestUser, bob: TestUser, cara: TestUser, root: TestUser
let now = Date.parse('2026-12-01T12:00:00Z')

before(async () => {
  ;({ site, alice, bob, cara, root } = await siteWith({ users: ['alice', 'bob', 'cara'], staff: ['root'], clock: () => now }))
})
after(() => site.close())

interface FollowJson { following: boolean; followers: number }
interface FollowListJson { items: Array<{ namespace: string; pack_id: string; title: string; followed_at: string }>; total: number }

const followUrl = (p: Pick<PackJson, 'namespace' | 'pack_id'>) => `/api/packs/${p.namespace}/${p.pack_id}/follow/`
const call = (method: string, url: string, user: TestUser | null, payload?: object) =>
  site.app.inject({ method: method as 'GET', url, headers: user ? user.headers : site.gate, ...(payload ? { payload } : {}) })

async function ok(res: Promise<LightMyRequestResponse>, status = 200): Promise<LightMyRequestResponse> {
  const r = await res
  assert.equal(r.statusCode, status, r.body)
  return r
}
const follow = async (p: PackJson, user: TestUser) => (await ok(call('POST', followUrl(p), user))).json() as FollowJson
const unfollow = async (p: PackJson, user: TestUser) => (await ok(call('DELETE', followUrl(p), user))).json() as FollowJson
const followers = async (p: PackJson, user: TestUser | null = null) =>
  ((await ok(call('GET', `/api/packs/${p.namespace}/${p.pack_id}/`, user))).json() as PackJson).followers
const myFollows = async (user: TestUser, query = '') => (await ok(call('GET', `/api/me/follows/${query}`, user))).json() as FollowListJson
/** The rows themselves: what the count must agree with. */
async function rowsOf(p: PackJson): Promise<number> {
  const row = await site.app.db.selectFrom('pack_follows').innerJoin('packs', 'packs.id', 'pack_follows.pack_row_id')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('packs.namespace', '=', p.namespace).where('packs.pack_id', '=', p.pack_id).executeTakeFirstOrThrow()
  return Number(row.n)
}

describe('following through the API', () => {
  test('follow and unfollow are idempotent, and the pack\'s JSON counts its followers', async () => {
    const pack = await publishPack(site, alice, { title: 'Lanterns' })
    assert.equal(pack.followers, 0, 'a new pack has no followers')
    assert.deepEqual(await follow(pack, bob), { following: true, followers: 1 })
    assert.deepEqual(await follow(pack, bob), { following: true, followers: 1 }, 'following again changes nothing')
    assert.deepEqual(await follow(pack, cara), { following: true, followers: 2 })
    // Any case names the pack, as everywhere.
    assert.deepEqual((await ok(call('POST', '/api/packs/ALICE/Lanterns/follow/', bob))).json(), { following: true, followers: 2 })
    assert.equal(await followers(pack), 2)
    assert.equal(await followers(pack, bob), 2)
    assert.deepEqual(await unfollow(pack, bob), { following: false, followers: 1 })
    assert.deepEqual(await unfollow(pack, bob), { following: false, followers: 1 }, 'unfollowing again changes nothing')
    assert.deepEqual(await unfollow(pack, alice), { following: false, followers: 1 }, 'someone who never followed takes nothing away')
    assert.equal(await followers(pack), 1)
    assert.equal(await rowsOf(pack), 1)
  })

  test('20 people following one pack at once count 20, and 20 unfollowing at once leave 0', async () => {
    const pack = await publishPack(site, alice, { title: 'Crowded' })
    const crowd: TestUser[] = []
    for (let i = 0; i < 20; i++) crowd.push(await site.user(`crowd${i}`))
    // Each follows twice, all at once: 40 requests racing, 20 rows.
    const answers = await Promise.all([...crowd, ...crowd].map((user) => follow(pack, user)))
    assert.ok(answers.every((a) => a.following && a.followers >= 1 && a.followers <= 20), JSON.stringify(answers))
    assert.equal(Math.max(...answers.map((a) => a.followers)), 20)
    assert.equal(await followers(pack), 20)
    assert.equal(await rowsOf(pack), 20)
    await Promise.all([...crowd, ...crowd].map((user) => unfollow(pack, user)))
    assert.equal(await followers(pack), 0)
    assert.equal(await rowsOf(pack), 0)
  })

  test('a pack the caller may not see is 404, to follow and to unfollow; its team and staff may follow it', async () => {
    const pack = await publishPack(site, alice, { title: 'Secret Cave' })
    await follow(pack, bob)
    await ok(call('POST', `/api/packs/${pack.namespace}/${pack.pack_id}/hide/`, root, { reason: 'tests' }))
    expectError(await call('POST', followUrl(pack), cara), 404, /^pack not found$/)
    expectError(await call('DELETE', followUrl(pack), bob), 404, /^pack not found$/)
    assert.deepEqual(await follow(pack, alice), { following: true, followers: 2 }, 'its owner sees it, and bob\'s follow still counts')
    assert.deepEqual(await follow(pack, root), { following: true, followers: 3 })
    // Hidden, it is left out of bob's list; shown again, it is back.
    assert.ok(!(await myFollows(bob)).items.some((f) => f.pack_id === 'secret-cave'))
    assert.ok((await myFollows(alice)).items.some((f) => f.pack_id === 'secret-cave'), 'its owner still lists it')
    await ok(call('POST', `/api/packs/${pack.namespace}/${pack.pack_id}/unhide/`, root, { reason: 'tests' }))
    assert.ok((await myFollows(bob)).items.some((f) => f.pack_id === 'secret-cave'))
    assert.equal((await follow(pack, cara)).followers, 4)
    expectError(await call('POST', '/api/packs/alice/no-such-pack/follow/', bob), 404)
    expectError(await call('DELETE', '/api/packs/nobody/nothing/follow/', bob), 404)
  })

  test('without a user it is 401, with WWW-Authenticate', async () => {
    const pack = await publishPack(site, alice, { title: 'Anonymous' })
    expectError(await call('POST', followUrl(pack), null), 401)
    expectError(await call('DELETE', followUrl(pack), null), 401)
    expectError(await call('GET', '/api/me/follows/', null), 401)
    expectError(await site.app.inject({ method: 'POST', url: followUrl(pack) }), 401)
    assert.equal(await followers(pack), 0)
  })

  test('a read-only token may list the follows but not follow or unfollow', async () => {
    const pack = await publishPack(site, alice, { title: 'Read Only' })
    const { token } = await createApiToken(site.app.db, 'cara', 'reader', null, { scope: 'read' })
    const reader = { ...cara, headers: { authorization: `Bearer cara ${token}` } }
    expectError(await call('POST', followUrl(pack), reader), 403, /read-only/)
    expectError(await call('DELETE', followUrl(pack), reader), 403, /read-only/)
    assert.equal((await myFollows(reader)).total, (await myFollows(cara)).total)
    assert.equal(await followers(pack), 0)
  })

  test('the Modrinth-compatible project and search hit carry the count', async () => {
    const pack = await publishPack(site, alice, { title: 'Modrinth Stars' })
    await follow(pack, bob)
    await follow(pack, cara)
    const project = (await ok(call('GET', '/api/modrinth/v2/project/alice:modrinth-stars', null))).json() as { id: string; followers: number }
    assert.equal(project.followers, 2)
    const byId = (await ok(call('GET', `/api/modrinth/v2/projects?ids=${encodeURIComponent(JSON.stringify([project.id]))}`, null))).json() as Array<{ followers: number }>
    assert.deepEqual(byId.map((p) => p.followers), [2])
    const search = (await ok(call('GET', `/api/modrinth/v2/search?query=${encodeURIComponent('Modrinth Stars')}`, null))).json() as {
      hits: Array<{ slug: string; follows: number }>
    }
    assert.equal(search.hits.find((h) => h.slug === 'alice:modrinth-stars')?.follows, 2, JSON.stringify(search.hits))
    await unfollow(pack, bob)
    assert.equal(((await ok(call('GET', `/api/modrinth/v2/project/${project.id}`, null))).json() as { followers: number }).followers, 1)
  })

  test('GET /api/me/follows/ lists the caller\'s follows newest first, paged, and refuses bad queries clearly', async () => {
    const dave = await site.user('dave')
    const packs: PackJson[] = []
    for (const title of ['First Followed', 'Second Followed', 'Third Followed']) {
      const pack = await publishPack(site, bob, { title })
      now += 60_000
      await follow(pack, dave)
      packs.push(pack)
    }
    const all = await myFollows(dave)
    assert.equal(all.total, 3)
    assert.deepEqual(all.items.map((f) => f.pack_id), ['third-followed', 'second-followed', 'first-followed'])
    assert.deepEqual(all.items[0], { namespace: 'bob', pack_id: 'third-followed', title: 'Third Followed', followed_at: new Date(now).toISOString() })
    const second = await myFollows(dave, '?limit=1&offset=1')
    assert.deepEqual(second, { items: [all.items[1]], total: 3 })
    assert.deepEqual((await myFollows(dave, '?offset=3')).items, [])
    // Following again does not move a pack up: the follow began when it began.
    now += 60_000
    await follow(packs[0]!, dave)
    assert.equal((await myFollows(dave)).items[0]!.pack_id, 'third-followed')
    // Someone else's list is their own.
    assert.ok(!(await myFollows(cara)).items.some((f) => f.namespace === 'bob'))

    for (const query of ['?limit=0', '?limit=101', '?limit=abc', '?offset=-1', '?offset=1e400', '?limit=1&limit=2', `?offset=${'9'.repeat(400)}`]) {
      expectError(await call('GET', `/api/me/follows/${query}`, dave), 400)
    }
  })

  test('hostile paths are a clear 404, never a 500', async () => {
    for (const [ns, id] of [['a'.repeat(5000), 'b'], ['alice', 'x'.repeat(5000)], ['%E2%80%AE', '%F0%9F%92%A9'], ['alice', '..%2F..']]) {
      expectError(await call('POST', `/api/packs/${ns}/${id}/follow/`, bob), 404)
      expectError(await call('DELETE', `/api/packs/${ns}/${id}/follow/`, bob), 404)
    }
  })
})


const page = (url: string, who: Session | null) => site.app.inject({ url, headers: { ...HTML, ...site.gate, ...(who ? { cookie: who.cookie } : {}) } })

function form(url: string, who: Session, csrf = true) {
  return site.app.inject({
    method: 'POST', url,
    headers: { ...HTML, ...site.gate, cookie: who.cookie, 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams(csrf ? { csrf_token: who.csrf } : {}).toString(),
  })
}

/** The pack page's follow box. */
function followBox(body: string): string {
  const match = /<div class="follow-box" id="follow">([\s\S]*?)<\/div>/.exec(body)
  assert.ok(match, 'the pack page has its follow box')
  return match[1]!
}

describe('following on the pages', () => {
  test('the pack page shows the count and, signed in, a Follow / Unfollow form that works without JavaScript', async () => {
    const pack = await publishPack(site, alice, { title: 'Paper Lamps' })
    const base = `/packs/${pack.namespace}/${pack.pack_id}/`
    const b = await signIn(site, bob)

    const anonymous = followBox((await page(base, null)).body)
    assert.match(anonymous, /<span class="followers" id="followers-count">0 followers<\/span>/)
    assert.match(anonymous, /<a href="\/login\/\?next=%2Fpacks%2Falice%2Fpaper-lamps%2F">Sign in to follow<\/a>/)
    assert.doesNotMatch(anonymous, /<form/)

    const before = followBox((await page(base, b)).body)
    assert.match(before, new RegExp(`<form method="post" action="${base}follow/"`))
    assert.ok(before.includes(`name="csrf_token" value="${b.csrf}"`), 'the form carries the session\'s CSRF token')
    assert.match(before, /<button type="submit" aria-describedby="followers-count">Follow<\/button>/)

    // Without the token the post is refused; with it, bob follows and lands back on the follow box.
    assert.equal((await form(`${base}follow/`, b, false)).statusCode, 403)
    const followed = await form(`${base}follow/`, b)
    assert.equal(followed.statusCode, 303, followed.body)
    assert.equal(followed.headers.location, `${base}#follow`)
    const after = followBox((await page(base, b)).body)
    assert.match(after, /1 follower<\/span>/)
    assert.match(after, new RegExp(`action="${base}unfollow/"`))
    assert.match(after, /<button type="submit" class="secondary" aria-describedby="followers-count">Unfollow<\/button>/)
    assert.match(followBox((await page(base, null)).body), /1 follower<\/span>/)
    // Posting again (a second tab) changes nothing.
    assert.equal((await form(`${base}follow/`, b)).statusCode, 303)
    assert.equal(await followers(pack), 1)

    assert.equal((await form(`${base}unfollow/`, b)).statusCode, 303)
    assert.match(followBox((await page(base, b)).body), /0 followers<\/span>[\s\S]*>Follow<\/button>/)

    // A page post for a pack the user may not see is the 404 page; signed out, the sign-in page's 401.
    assert.equal((await form('/packs/alice/no-such-pack/follow/', b)).statusCode, 404)
    const signedOut = await site.app.inject({ method: 'POST', url: `${base}follow/`, headers: { ...HTML, ...site.gate } })
    assert.equal(signedOut.statusCode, 401)
  })

  test('a profile lists the packs its user follows to that user alone', async () => {
    const erin = await site.user('erin')
    const pack = await publishPack(site, alice, { title: 'Followed Lights' })
    const [e, b, r] = [await signIn(site, erin), await signIn(site, bob), await signIn(site, root)]
    const empty = await page('/users/erin/', e)
    assert.match(empty.body, /<h2 id="follows-heading">Packs you follow <span class="muted count">\(0\)<\/span><\/h2>/)
    assert.match(empty.body, /You follow no packs yet/)

    await follow(pack, erin)
    const own = await page('/users/erin/', e)
    assert.equal(own.statusCode, 200)
    assert.match(own.body, /Packs you follow <span class="muted count">\(1\)<\/span>/)
    assert.match(own.body, /<li class="followed-pack">\s*<a href="\/packs\/alice\/followed-lights\/">Followed Lights<\/a>/)
    for (const viewer of [b, r, null]) {
      const other = await page('/users/erin/', viewer)
      assert.equal(other.statusCode, 200)
      assert.doesNotMatch(other.body, /follows-heading|Followed Lights/, 'not to other viewers, staff included')
    }
  })
})
