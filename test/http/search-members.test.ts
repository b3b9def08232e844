// The listing's search `q` finds packs by the names of the people who make them: a pack matches when its owner
// or an accepted member of its team has a username equal to q or starting with it (any case, an "@" before it
// allowed), besides the words of its text. An invitation grants nothing, a removal counts at once, hidden packs
// stay where the listing without q puts them, each pack is one hit however many ways it matches, and counts agree
// with the pages. Through GET /api/packs/ and the browse page.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { LightMyRequestResponse } from 'fastify'
import { siteWith, type TestSite, type TestUser } from '../helpers/app.js'
import { publishPack, type PackJson } from '../helpers/packs.js'

interface ListJson { items: PackJson[]; total: number; total_capped: boolean; page: number; per_page: number }

let site: TestSite
let alice: TestUser, bob: TestUser, carol: TestUser, root: TestUser
/** alice's pack with no one else in its team. */
let aliceOwn: PackJson
/** alice's pack where bob is an accepted maintainer. */
let teamPack: PackJson
/** alice's pack where carol is only invited. */
let invitedPack: PackJson
/** bob's own pack, visible; and his pack that staff hid. */
let bobOwn: PackJson
let bobHidden: PackJson
/** ann-marie's pack. */
let annOwn: PackJson

const team = (p: PackJson, rest = '') => `/api/packs/${p.namespace}/${p.pack_id}/team/${rest}`
const call = (method: 'GET' | 'POST' | 'DELETE', url: string, user: TestUser | null, payload?: object) =>
  site.app.inject({ method, url, headers: user ? user.headers : site.gate, ...(payload ? { payload } : {}) })

async function status(res: Promise<LightMyRequestResponse>, expected: number): Promise<LightMyRequestResponse> {
  const r = await res
  assert.equal(r.statusCode, expected, r.body)
  return r
}

async function list(query: Record<string, string>, user: TestUser | null = null): Promise<ListJson> {
  const res = await site.app.inject({ url: '/api/packs/', query, headers: user ? user.headers : site.gate })
  assert.equal(res.statusCode, 200, res.body)
  return res.json() as ListJson
}

const keyOf = (p: Pick<PackJson, 'namespace' | 'pack_id'>) => `${p.namespace}:${p.pack_id}`
const titles = (answer: ListJson) => answer.items.map((p) => p.title).sort()

before(async () => {
  ;({ site, alice, bob, carol, root } = await siteWith({ users: ['alice', 'bob', 'carol', 'ann'], staff: ['root'] }))
  // Titles share no word with the names searched for below, so only a name can make these packs match.
  aliceOwn = await publishPack(site, alice, { title: 'Quiet Meadows' })
  teamPack = await publishPack(site, alice, { title: 'Lantern Festival' })
  invitedPack = await publishPack(site, alice, { title: 'Copper Gears' })
  bobOwn = await publishPack(site, bob, { title: 'Granite Paths' })
  bobHidden = await publishPack(site, bob, { title: 'Hidden Grove' })
  await status(call('POST', `/api/packs/${bobHidden.namespace}/${bobHidden.pack_id}/hide/`, root, { reason: 'test' }), 200)
  await status(call('POST', team(teamPack), alice, { username: 'bob', role: 'maintainer' }), 201)
  await status(call('POST', team(teamPack, 'accept/'), bob), 200)
  await status(call('POST', team(invitedPack), alice, { username: 'carol', role: 'uploader' }), 201)
  // A name with a "-" in it, one letter past it: a search's words would split it there.
  const annMarie = await site.user('Ann-Marie')
  annOwn = await publishPack(site, annMarie, { title: 'Velvet Banners' })
})
after(() => site.close())

describe('q and the names of the people who make a pack', () => {
  test('q=bob finds the packs bob owns and the one he is an accepted maintainer of, not a hidden one', async () => {
    const found = await list({ q: 'bob' })
    assert.deepEqual(titles(found), ['Granite Paths', 'Lantern Festival'])
    assert.equal(found.total, 2)
    assert.ok(!found.items.some((p) => p.title === aliceOwn.title), 'alice\'s pack without bob')
  })

  test('a hidden pack is found by a name for exactly those who see it in the listing without q', async () => {
    for (const viewer of [null, bob, alice, root]) {
      const who = viewer?.username ?? 'anonymous'
      const listed = (await list({ member: 'bob', per_page: '100' }, viewer)).items.some((p) => keyOf(p) === keyOf(bobHidden))
      const searched = (await list({ q: 'bob', per_page: '100' }, viewer)).items.some((p) => keyOf(p) === keyOf(bobHidden))
      assert.equal(searched, listed, `${who}: the hidden pack in the search as in the listing`)
      // Nobody sees a hidden pack in the listing today, staff included.
      assert.equal(searched, false, `${who}: a hidden pack is no hit`)
    }
  })

  test('the case of q does not matter, and an "@" before the name is dropped', async () => {
    for (const q of ['BO', 'Bob', '@bob', '@BO', ' @bob ']) {
      const found = await list({ q })
      assert.deepEqual(titles(found), ['Granite Paths', 'Lantern Festival'], `q=${JSON.stringify(q)}`)
    }
  })

  test('a name is matched as typed, past a "-", "_" or "." in it: the name starts with q', async () => {
    for (const q of ['ann-m', 'Ann-M', '@ann-marie', 'ANN-MARIE']) {
      const found = await list({ q })
      assert.deepEqual(titles(found), ['Velvet Banners'], `q=${JSON.stringify(q)}`)
    }
    // A name that only contains q, not starting with it, is no match by name; one letter names only itself.
    assert.deepEqual(titles(await list({ q: 'nn-m' })), [])
    assert.deepEqual(titles(await list({ q: 'b' })), [])
  })

  test('an invitation makes no match until it is accepted; a removal takes effect at once', async () => {
    assert.deepEqual(titles(await list({ q: 'car' })), [], 'carol is only invited')
    assert.deepEqual(titles(await list({ q: 'carol' })), [])
    await status(call('POST', team(invitedPack, 'accept/'), carol), 200)
    assert.deepEqual(titles(await list({ q: 'car' })), ['Copper Gears'], 'carol accepted')
    assert.deepEqual(titles(await list({ q: '@Carol' })), ['Copper Gears'])

    await status(call('DELETE', team(invitedPack, 'carol/'), alice), 204)
    assert.deepEqual(titles(await list({ q: 'car' })), [], 'carol removed')
    // And bob, removed from the team pack, finds only his own.
    await status(call('POST', team(teamPack), alice, { username: 'bob', role: 'maintainer' }), 409)
    await status(call('DELETE', team(teamPack, 'bob/'), alice), 204)
    assert.deepEqual(titles(await list({ q: 'bob' })), ['Granite Paths'])
    // Back in the team for the tests that follow.
    await status(call('POST', team(teamPack), alice, { username: 'bob', role: 'maintainer' }), 201)
    await status(call('POST', team(teamPack, 'accept/'), bob), 200)
    assert.deepEqual(titles(await list({ q: 'bob' })), ['Granite Paths', 'Lantern Festival'])
  })

  test('a pack matched by its title and by a name is one hit, and the count agrees with the pages', async () => {
    const both = await publishPack(site, bob, { title: 'Bobbing Buoys' })
    const titled = await publishPack(site, alice, { title: 'Bobsled Run' })
    const expected = ['Bobbing Buoys', 'Bobsled Run', 'Granite Paths', 'Lantern Festival']
    for (const sort of [undefined, 'relevance', 'updated', 'downloads', 'created', 'title', 'trending']) {
      const whole = await list({ q: 'bob', per_page: '100', ...(sort ? { sort } : {}) })
      assert.deepEqual(titles(whole), expected, `sort ${sort}`)
      assert.equal(whole.total, expected.length, `sort ${sort}: total`)
      const seen: string[] = []
      for (let page = 1; page <= 5; page++) {
        const one = await list({ q: 'bob', per_page: '1', page: String(page), ...(sort ? { sort } : {}) })
        assert.equal(one.total, expected.length, `sort ${sort}: total on page ${page}`)
        assert.equal(one.total_capped, false)
        seen.push(...one.items.map(keyOf))
      }
      assert.equal(seen.length, expected.length, `sort ${sort}: one pack a page, then none`)
      assert.equal(new Set(seen).size, seen.length, `sort ${sort}: no pack twice over the pages: ${seen.join(' ')}`)
    }
    // With facets asked for, the count of each option comes from the same matches.
    const faceted = await site.app.inject({ url: '/api/packs/', query: { q: 'bob', facets: 'true' }, headers: site.gate })
    assert.equal(faceted.statusCode, 200, faceted.body)
    const facets = (faceted.json() as { facets: { kind: Array<{ value: string; count: number }> } }).facets
    assert.equal(facets.kind.find((o) => o.value === 'data')?.count, expected.length)
    // Other filters still apply to a name's packs.
    assert.deepEqual(titles(await list({ q: 'bob', owner: 'alice' })), ['Bobsled Run', 'Lantern Festival'])
    assert.deepEqual(titles(await list({ q: 'bob', member: 'bob' })), ['Bobbing Buoys', 'Granite Paths', 'Lantern Festival'])
    void both
    void titled
  })

  test('hostile text in q is a clean answer or a 400, never a 500', async () => {
    for (const q of ['%', '_', '\\', '%_\\', '@', '@%', 'b%', 'b_b', '\'; drop table users; --', 'ann-%', '\u{10FFFF}', 'x'.repeat(200), '@'.repeat(200)]) {
      const res = await site.app.inject({ url: '/api/packs/', query: { q }, headers: site.gate })
      assert.ok(res.statusCode === 200 || (res.statusCode >= 400 && res.statusCode < 500), `q=${JSON.stringify(q)}: ${res.statusCode} ${res.body}`)
      if (res.statusCode === 200) {
        const body = res.json() as ListJson
        assert.ok(body.total >= body.items.length, `q=${JSON.stringify(q)}: the count covers the page`)
      }
    }
    // A pattern character is not a wildcard in a name: "b%" and "b_b" name nobody.
    assert.deepEqual(titles(await list({ q: 'b_b' })), [])
    const long = await site.app.inject({ url: '/api/packs/', query: { q: 'x'.repeat(201) }, headers: site.gate })
    assert.equal(long.statusCode, 400, long.body)
  })

  test('the browse page finds the team pack by a member\'s name', async () => {
    const res = await site.app.inject({ url: '/?q=bob', headers: { ...site.gate, accept: 'text/html' } })
    assert.equal(res.statusCode, 200)
    assert.match(res.body, />Lantern Festival<\/a><\/h2>/)
    assert.match(res.body, />Granite Paths<\/a><\/h2>/)
    assert.doesNotMatch(res.body, />Hidden Grove<\/a><\/h2>/)
    assert.doesNotMatch(res.body, />Quiet Meadows<\/a><\/h2>/)
    const name = await site.app.inject({ url: '/?q=ann-m', headers: { ...site.gate, accept: 'text/html' } })
    assert.equal(name.statusCode, 200)
    assert.match(name.body, />Velvet Banners<\/a><\/h2>/)
    void annOwn
  })
})
