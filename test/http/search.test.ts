// The packs search (GET /api/packs/ with q, kind, mc, categories, tags,
// updated, owner, member, the new sorts and facets; src/packs/search-*.ts),
// point by point through HTTP as a visitor asks it: what each field matches,
// prefixes and typos, ranking, every filter and their combinations, the sorts,
// disjunctive facet counts checked against separate searches, what is never
// shown, hostile input, concurrent edits on the shared vocabulary, and the
// index following every change. Each test's packs carry a word of their own,
// so the tests of this file share one site without seeing each other's packs.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { LightMyRequestResponse } from 'fastify'
import { moveTrendingWindow } from '../../src/packs/search-service.js'
import { createCategory, createTag } from '../../src/packs/tags.js'
import { siteWith, type TestSite, type TestUser } from '../helpers/app.js'
import { datapack, multipart, png, zip } from '../helpers/fixtures.js'
import { pathOf, publishPack, type PackJson } from '../helpers/packs.js'

interface Facet { value: string; count: number }
interface Facets { kind: Facet[]; mc: Facet[]; categories: Facet[]; tags: Facet[]; updated: Facet[] }
interface ListJson { items: PackJson[]; total: number; total_capped: boolean; page: number; per_page: number; facets?: Facets }

const DAY = 86_400_000
/** The app's clock: the download counter's day follows it (the trending test counts downloads days ago). */
let now = Date.now()

let site: TestSite
let alice: TestUser, bob: TestUser, cara: TestUser, root: TestUser
before(async () => {
  ;({ site, alice, bob, cara, root } = await siteWith({
    users: ['alice', 'bob', 'cara'], staff: ['root'], clock: () => now,
    // The counter writes only when a test flushes it.
    downloads: { flushIntervalMs: 3_600_000 },
  }))
  await createCategory(site.app.db, 'biomes', 'Biomes', '#228833')
  await createCategory(site.app.db, 'oddities', 'Curiosities', '#883322')
  await createCategory(site.app.db, 'tools', 'Tools', '#333388')
  for (const [tag, category] of [['Fernspire', 'biomes'], ['Glowcap', 'biomes'], ['Moss', 'biomes'], ['Lantern', 'tools']] as const) {
    await createTag(site.app.db, tag, category)
  }
})
after(() => site.close())

type Query = Record<string, string>
const packUrl = (pack: Pick<PackJson, 'namespace' | 'pack_id'>) => `/api/packs/${pack.namespace}/${pack.pack_id}/`
const call = (method: string, url: string, user: TestUser | null, payload?: object) =>
  site.app.inject({ method: method as 'GET', url, headers: user ? user.headers : site.gate, ...(payload ? { payload } : {}) })

async function ok(res: Promise<LightMyRequestResponse> | LightMyRequestResponse, status = 200): Promise<LightMyRequestResponse> {
  const r = await res
  assert.equal(r.statusCode, status, r.body)
  return r
}

/** A search as an anonymous visitor asks it. */
async function search(query: Query, user: TestUser | null = null): Promise<ListJson> {
  const res = await site.app.inject({ url: '/api/packs/', query: { per_page: '100', ...query }, headers: user ? user.headers : site.gate })
  assert.equal(res.statusCode, 200, `${JSON.stringify(query)}: ${res.body}`)
  return res.json() as ListJson
}
const titles = async (query: Query): Promise<string[]> => (await search(query)).items.map((p) => p.title)
const sortedTitles = async (query: Query): Promise<string[]> => (await titles(query)).sort()

/** A resource pack archive (assets/) of `packFormat`; different bytes each call. */
function resourcePack(packFormat: number): Promise<Buffer> {
  return zip({ 'pack.mcmeta': JSON.stringify({ pack: { pack_format: packFormat, description: 'resources' } }), 'assets/minecraft/textures/block/stone.png': png(), 'assets/x/build.txt': String(Math.random()) })
}

async function addVersion(user: TestUser, pack: PackJson, name: string, archive: Buffer): Promise<PackJson> {
  const body = multipart([{ name: 'version_name', value: name }, { name: 'file', value: archive, filename: `${name}.zip`, contentType: 'application/zip' }])
  const res = await site.app.inject({ method: 'POST', url: `${packUrl(pack)}versions/`, headers: { ...user.headers, ...body.headers }, payload: body.payload })
  assert.equal(res.statusCode, 201, res.body)
  return res.json() as PackJson
}

async function edit(user: TestUser, pack: PackJson, changes: Record<string, unknown>): Promise<PackJson> {
  const current = (await ok(call('GET', packUrl(pack), user))).json() as PackJson
  return (await ok(call('PATCH', packUrl(pack), user, { revision: current.revision, ...changes }))).json() as PackJson
}

const yank = (user: TestUser, pack: PackJson, versionId: string, yanked: boolean) =>
  ok(call('PATCH', `${packUrl(pack)}versions/${versionId}/`, user, { yanked }))

/** Every word's count in search_terms equals the number of indexed packs whose words include it. */
async function assertVocabularyRecounted(why: string): Promise<void> {
  const db = site.app.db
  const entries = await db.selectFrom('pack_search').select('terms').execute()
  const recount = new Map<string, number>()
  for (const { terms } of entries) for (const term of terms.split(' ').filter(Boolean)) recount.set(term, (recount.get(term) ?? 0) + 1)
  const stored = new Map((await db.selectFrom('search_terms').select(['term', 'docs']).execute()).map((r) => [r.term, Number(r.docs)]))
  const differ = [...new Set([...recount.keys(), ...stored.keys()])].filter((t) => recount.get(t) !== stored.get(t))
    .map((t) => `${t}: stored ${stored.get(t) ?? 'none'}, recounted ${recount.get(t) ?? 'none'}`)
  assert.deepEqual(differ.slice(0, 20), [], `${why}: search_terms equals a recount`)
}

describe('what q matches', () => {
  test('each field: title, summary, description, a tag, the category key and name, the owner, an accepted member (not one invited); removal counts at once', async () => {
    const owner = await site.user('quenyaowl')
    const member = await site.user('ulmoriel')
    const invited = await site.user('ossianth')
    const pack = await publishPack(site, owner, {
      title: 'Xyloblast Towers', summary: 'A pack with quorvex inside', description: 'Deep *narwhalite* caves.',
      tags: ['Fernspire'], category: 'oddities',
    })
    await ok(call('POST', `${packUrl(pack)}team/`, owner, { username: member.username, role: 'uploader' }), 201)
    await ok(call('POST', `${packUrl(pack)}team/accept/`, member))
    await ok(call('POST', `${packUrl(pack)}team/`, owner, { username: invited.username, role: 'uploader' }), 201)
    for (const q of ['xyloblast', 'Towers Xyloblast', 'quorvex', 'narwhalite', 'fernspire', 'oddities', 'curiosities', 'quenyaowl', 'ulmoriel', 'QUÉNYAOWL']) {
      assert.deepEqual(await titles({ q }), ['Xyloblast Towers'], `q=${q}`)
    }
    assert.deepEqual(await titles({ q: 'ossianth' }), [], 'someone only invited is not the pack\'s')
    assert.deepEqual(await titles({ q: 'xyloblast quorvex narwhalite' }), ['Xyloblast Towers'], 'words in different fields all match')
    assert.deepEqual(await titles({ q: 'xyloblast nowhereword' }), [], 'every word must match')
    await ok(call('DELETE', `${packUrl(pack)}team/${member.username}/`, owner), 204)
    assert.deepEqual(await titles({ q: 'ulmoriel' }), [], 'a removed member is no longer found at once')
    await ok(call('POST', `${packUrl(pack)}team/accept/`, invited))
    assert.deepEqual(await titles({ q: 'ossianth' }), ['Xyloblast Towers'], 'found once the invitation is accepted')
  })

  test('letters of any script, on both engines: Greek, Cyrillic, Japanese, accents and ligatures folded', async () => {
    await publishPack(site, bob, { title: 'Greek Ελληνικά Σπίτια', summary: 'Кириллица и 日本語の家', description: 'ﬁligree Ærø' })
    for (const q of ['ελληνικα', 'ΣΠΙΤΙΑ', 'σπίτ', 'кириллица', 'кирил', '日本語の家', '日本語', 'filigree', 'aero', 'ærø', 'AERØ']) {
      assert.deepEqual(await titles({ q }), ['Greek Ελληνικά Σπίτια'], `q=${q}`)
    }
  })

  test('prefix: "drag" finds Dragon Lairs; typo: "dargon" has it in the top 3', async () => {
    await publishPack(site, alice, { title: 'Dragon Lairs', summary: 'Caves for dragons' })
    await publishPack(site, alice, { title: 'Dragonfruit Farms' })
    await publishPack(site, alice, { title: 'Wagon Wheels' })
    assert.ok((await titles({ q: 'drag' })).includes('Dragon Lairs'))
    assert.ok((await titles({ q: 'Drag lai' })).includes('Dragon Lairs'))
    const typo = await titles({ q: 'dargon' })
    assert.ok(typo.slice(0, 3).includes('Dragon Lairs'), `dargon: ${typo.join(', ')}`)
    const typoTwoWords = await titles({ q: 'dargon lairs' })
    assert.equal(typoTwoWords[0], 'Dragon Lairs')
    assert.deepEqual(await titles({ q: 'drgn' }), [], 'four letters carry no typo')
  })

  test('a title match ranks above a description-only match; a rarer word weighs more than a common one', async () => {
    await publishPack(site, alice, { title: 'Plain Cottage', description: 'with a wyvernhold in the yard' })
    await publishPack(site, alice, { title: 'Wyvernhold Keep' })
    assert.deepEqual(await titles({ q: 'wyvernhold' }), ['Wyvernhold Keep', 'Plain Cottage'])
    // "glimmerfen" is in six packs, "brackwort" in two; each of the two has one word in its title, the other in its description.
    for (let i = 0; i < 4; i++) await publishPack(site, bob, { title: `Filler ${i}`, description: 'glimmerfen' })
    await publishPack(site, alice, { title: 'Glimmerfen Hollow', description: 'brackwort' })
    await publishPack(site, alice, { title: 'Brackwort Marsh', description: 'glimmerfen' })
    assert.deepEqual(await titles({ q: 'glimmerfen brackwort' }), ['Brackwort Marsh', 'Glimmerfen Hollow'])
    assert.deepEqual(await titles({ q: 'brackwort glimmerfen' }), ['Brackwort Marsh', 'Glimmerfen Hollow'], 'the order of the words does not matter')
  })
})

describe('filters', () => {
  let resource: PackJson, data: PackJson, old: PackJson, both: PackJson
  before(async () => {
    // The word "filtrix" scopes each search to these packs.
    resource = await publishPack(site, alice, { title: 'Filtrix Resource', summary: 'filtrix', category: 'biomes', tags: ['Moss', 'Glowcap'] }, { archive: await resourcePack(46) })
    data = await publishPack(site, bob, { title: 'Filtrix Data', summary: 'filtrix', category: 'tools', tags: ['Moss'] }, { archive: await datapack(61) })
    old = await publishPack(site, cara, { title: 'Filtrix Old', summary: 'filtrix', category: 'oddities', tags: ['Glowcap'] }, { archive: await datapack(41) })
    both = await publishPack(site, alice, { title: 'Filtrix Both', summary: 'filtrix', category: 'biomes' }, { archive: await datapack(48) })
    both = await addVersion(alice, both, '2.0', await resourcePack(34))
    await ok(call('POST', `${packUrl(data)}team/`, bob, { username: 'cara', role: 'uploader' }), 201)
    await ok(call('POST', `${packUrl(data)}team/accept/`, cara))
  })

  test('kind: from the archives\' folders; a pack whose only data version is yanked is no longer kind=data', async () => {
    assert.deepEqual(await sortedTitles({ q: 'filtrix', kind: 'resource' }), ['Filtrix Both', 'Filtrix Resource'])
    assert.deepEqual(await sortedTitles({ q: 'filtrix', kind: 'data' }), ['Filtrix Both', 'Filtrix Data', 'Filtrix Old'])
    const dataVersion = both.versions.find((v) => v.name !== '2.0')!
    await yank(alice, both, dataVersion.id, true)
    assert.deepEqual(await sortedTitles({ q: 'filtrix', kind: 'data' }), ['Filtrix Data', 'Filtrix Old'])
    assert.deepEqual(await sortedTitles({ q: 'filtrix', kind: 'resource' }), ['Filtrix Both', 'Filtrix Resource'])
    await yank(alice, both, dataVersion.id, false)
    assert.deepEqual(await sortedTitles({ q: 'filtrix', kind: 'data' }), ['Filtrix Both', 'Filtrix Data', 'Filtrix Old'])
  })

  test('mc: a release, >=, <, <=, >, and a range', async () => {
    assert.deepEqual(await sortedTitles({ q: 'filtrix', mc: '1.21.4' }), ['Filtrix Data', 'Filtrix Resource'])
    assert.deepEqual(await sortedTitles({ q: 'filtrix', mc: '1.21' }), ['Filtrix Both'])
    assert.deepEqual(await sortedTitles({ q: 'filtrix', mc: '>=1.21' }), ['Filtrix Both', 'Filtrix Data', 'Filtrix Resource'])
    assert.deepEqual(await sortedTitles({ q: 'filtrix', mc: '>1.21.1' }), ['Filtrix Data', 'Filtrix Resource'])
    assert.deepEqual(await sortedTitles({ q: 'filtrix', mc: '<1.21' }), ['Filtrix Old'])
    assert.deepEqual(await sortedTitles({ q: 'filtrix', mc: '<=1.21' }), ['Filtrix Both', 'Filtrix Old'])
    assert.deepEqual(await sortedTitles({ q: 'filtrix', mc: '1.20.1..1.21' }), ['Filtrix Both', 'Filtrix Old'])
    assert.deepEqual(await sortedTitles({ q: 'filtrix', mc: '1.21.5..26.3' }), [])
    assert.deepEqual(await sortedTitles({ q: 'filtrix', mc: '1.21.4', kind: 'resource' }), ['Filtrix Resource'])
  })

  test('categories (any of), tags (all of), and the old category and tag ANDed with them', async () => {
    assert.deepEqual(await sortedTitles({ q: 'filtrix', categories: 'biomes' }), ['Filtrix Both', 'Filtrix Resource'])
    assert.deepEqual(await sortedTitles({ q: 'filtrix', categories: 'biomes,tools' }), ['Filtrix Both', 'Filtrix Data', 'Filtrix Resource'])
    assert.deepEqual(await sortedTitles({ q: 'filtrix', categories: 'BIOMES, nosuchcategory' }), ['Filtrix Both', 'Filtrix Resource'])
    assert.deepEqual(await sortedTitles({ q: 'filtrix', categories: 'biomes,tools', category: 'tools' }), ['Filtrix Data'])
    assert.deepEqual(await sortedTitles({ q: 'filtrix', tags: 'moss' }), ['Filtrix Data', 'Filtrix Resource'])
    assert.deepEqual(await sortedTitles({ q: 'filtrix', tags: 'Moss,GLOWCAP' }), ['Filtrix Resource'])
    assert.deepEqual(await sortedTitles({ q: 'filtrix', tags: 'Glowcap', tag: 'Moss' }), ['Filtrix Resource'])
    assert.deepEqual(await sortedTitles({ q: 'filtrix', tags: 'Moss,Lantern' }), [], 'no pack has both')
    assert.deepEqual(await sortedTitles({ q: 'filtrix', tags: 'Moss,nosuchtag' }), [], 'a tag nobody carries: no pack has all')
    assert.deepEqual(await sortedTitles({ q: 'filtrix', tags: 'Moss', categories: 'tools,oddities', kind: 'data' }), ['Filtrix Data'])
  })

  test('updated: week, month, year (rows backdated: updated_at is written with the real time)', async () => {
    await site.app.db.updateTable('packs').set({ updated_at: new Date(Date.now() - 20 * DAY).toISOString() }).where('id', '=', await rowIdOf(old)).execute()
    await site.app.db.updateTable('packs').set({ updated_at: new Date(Date.now() - 100 * DAY).toISOString() }).where('id', '=', await rowIdOf(both)).execute()
    assert.deepEqual(await sortedTitles({ q: 'filtrix', updated: 'week' }), ['Filtrix Data', 'Filtrix Resource'])
    assert.deepEqual(await sortedTitles({ q: 'filtrix', updated: 'month' }), ['Filtrix Data', 'Filtrix Old', 'Filtrix Resource'])
    assert.deepEqual(await sortedTitles({ q: 'filtrix', updated: 'year' }), ['Filtrix Both', 'Filtrix Data', 'Filtrix Old', 'Filtrix Resource'])
    assert.deepEqual(await sortedTitles({ q: 'filtrix', updated: 'month', categories: 'oddities,biomes' }), ['Filtrix Old', 'Filtrix Resource'])
  })

  test('owner: only what the user owns; member: owned or in the team (accepted); an unknown name matches nothing', async () => {
    assert.deepEqual(await sortedTitles({ q: 'filtrix', owner: 'alice' }), ['Filtrix Both', 'Filtrix Resource'])
    assert.deepEqual(await sortedTitles({ q: 'filtrix', owner: 'cara' }), ['Filtrix Old'])
    assert.deepEqual(await sortedTitles({ q: 'filtrix', member: 'cara' }), ['Filtrix Data', 'Filtrix Old'])
    assert.deepEqual(await sortedTitles({ q: 'filtrix', member: 'cara', owner: 'bob' }), ['Filtrix Data'])
    assert.deepEqual(await sortedTitles({ q: 'filtrix', owner: 'nobody-at-all' }), [])
    // Without words too: the search's own filters, the sort by update.
    const owned = await search({ owner: 'cara', kind: 'data' })
    assert.deepEqual(owned.items.map((p) => p.title), ['Filtrix Old'])
    assert.equal(owned.total, 1)
  })

  test('facets: each count is what choosing that option would leave, an any-of facet\'s own selection ignored, the others applied', async () => {
    const selections: Query = { q: 'filtrix', kind: 'data', categories: 'biomes,tools', tags: 'Moss', updated: 'year' }
    const answer = await search({ ...selections, facets: 'true' })
    assert.ok(answer.facets, 'facets=true adds facets')
    const facets = answer.facets
    const totalWith = async (name: string, value: string) => (await search({ ...selections, [name]: value })).total
    const without = (name: string): Query => Object.fromEntries(Object.entries(selections).filter(([key]) => key !== name))
    // kind: each option with the others as they are.
    for (const option of facets.kind) assert.equal(option.count, (await search({ ...without('kind'), kind: option.value })).total, `kind=${option.value}`)
    assert.deepEqual(facets.kind.map((o) => o.value).sort(), ['data', 'resource'])
    for (const option of facets.categories) assert.equal(option.count, (await search({ ...without('categories'), categories: option.value })).total, `categories=${option.value}`)
    // Every category a pack of these would count for is offered.
    const categoryCounts = new Map<string, number>()
    for (const pack of (await search(without('categories'))).items) if (pack.category) categoryCounts.set(pack.category.key, (categoryCounts.get(pack.category.key) ?? 0) + 1)
    assert.deepEqual(new Map(facets.categories.map((o) => [o.value, o.count])), categoryCounts)
    // Tags are all of the chosen ones: a tag's count is what ticking it as well would leave.
    for (const option of facets.tags) assert.equal(option.count, (await search({ ...selections, tags: `Moss,${option.value}` })).total, `tags=Moss,${option.value}`)
    assert.ok(facets.tags.some((o) => o.value === 'Moss'))
    // Glowcap is on Filtrix Resource (with Moss) and Filtrix Old (without): with Moss chosen, ticking Glowcap leaves one.
    const withMoss = (await search({ q: 'filtrix', tags: 'Moss', facets: 'true' })).facets!
    assert.equal(withMoss.tags.find((o) => o.value === 'Glowcap')?.count, 1)
    for (const option of facets.mc) assert.equal(option.count, await totalWith('mc', option.value), `mc=${option.value}`)
    assert.ok(facets.mc.some((o) => o.value === '1.21.4'))
    for (const option of facets.updated) assert.equal(option.count, (await search({ ...without('updated'), updated: option.value })).total, `updated=${option.value}`)
    assert.deepEqual(facets.updated.map((o) => o.value).sort(), ['month', 'week', 'year'])
    // The numbers themselves, worked out by hand from the packs above.
    assert.equal(answer.total, 1, 'Filtrix Data alone')
    assert.deepEqual(Object.fromEntries(facets.kind.map((o) => [o.value, o.count])), { data: 1, resource: 1 })
    assert.deepEqual(Object.fromEntries(facets.categories.map((o) => [o.value, o.count])), { tools: 1 })
    // Facets asked with a page past the end, and a second time (kept counts), say the same.
    assert.deepEqual((await search({ ...selections, facets: 'true', page: '5' })).facets, facets)
  })
})

/** A pack's row id, as the database has it (tests that backdate rows). */
async function rowIdOf(pack: PackJson): Promise<string> {
  const row = await site.app.db.selectFrom('packs').select('id').where('namespace', '=', pack.namespace).where('pack_id', '=', pack.pack_id).executeTakeFirstOrThrow()
  return row.id
}

describe('sorts', () => {
  test('relevance by default with words, updated without; downloads, trending (the last 7 days), created, title', async () => {
    const a = await publishPack(site, alice, { title: 'Sortix banana', description: 'sortix' })
    const b = await publishPack(site, alice, { title: 'Apple Sortix' })
    const c = await publishPack(site, bob, { title: 'cherry', summary: 'sortix' })
    const download = async (pack: PackJson, clients: number) => {
      for (let i = 0; i < clients; i++) {
        await ok(site.app.inject({ url: pathOf(pack.versions[0]!.download_url), remoteAddress: `192.0.2.${i + 1}`, headers: site.gate }))
      }
      await site.app.downloads.flush()
    }
    // Ten days ago: c is downloaded by five clients; today a by two, b by one.
    const today = now
    now = today - 10 * DAY
    await download(c, 5)
    now = today
    await download(a, 2)
    await download(b, 1)
    await moveTrendingWindow(site.app.db, new Date(now).toISOString().slice(0, 10))
    // Relevance: "Sortix banana" has the word in its title and description, "Apple Sortix" in its title, "cherry" in its summary.
    assert.deepEqual(await titles({ q: 'sortix' }), ['Sortix banana', 'Apple Sortix', 'cherry'])
    assert.deepEqual(await titles({ q: 'sortix', sort: 'relevance' }), ['Sortix banana', 'Apple Sortix', 'cherry'])
    assert.deepEqual(await titles({ q: 'sortix', sort: 'downloads' }), ['cherry', 'Sortix banana', 'Apple Sortix'])
    assert.deepEqual(await titles({ q: 'sortix', sort: 'trending' }), ['Sortix banana', 'Apple Sortix', 'cherry'], 'five downloads ten days ago count for nothing')
    assert.deepEqual(await titles({ q: 'sortix', sort: 'created' }), ['cherry', 'Apple Sortix', 'Sortix banana'])
    assert.deepEqual(await titles({ q: 'sortix', sort: 'title' }), ['Apple Sortix', 'cherry', 'Sortix banana'], 'A to Z whatever the case')
    // Updated: a new version moves a pack to the front.
    await addVersion(alice, a, '2.0', await datapack(48))
    assert.deepEqual(await titles({ q: 'sortix', sort: 'updated' }), ['Sortix banana', 'cherry', 'Apple Sortix'])
    // Without words, a search's default order is by update too.
    assert.deepEqual((await search({ owner: 'bob', sort: 'updated' })).items[0]?.title, (await search({ owner: 'bob' })).items[0]?.title)
    assert.deepEqual((await search({ owner: 'bob' })).items.map((p) => p.title), (await search({ member: 'bob' })).items.filter((p) => p.owner === 'bob').map((p) => p.title))
  })
})

describe('never shown', () => {
  test('hidden packs, a disabled owner\'s packs and packs with every version yanked: no hits, no totals, no facet counts', async () => {
    const eve = await site.user('eve')
    await publishPack(site, alice, { title: 'Ghostix Visible', category: 'biomes', tags: ['Moss'] })
    const hidden = await publishPack(site, alice, { title: 'Ghostix Hidden', category: 'tools', tags: ['Lantern'] }, { archive: await resourcePack(46) })
    await publishPack(site, eve, { title: 'Ghostix Disabled', category: 'tools', tags: ['Lantern'] }, { archive: await resourcePack(46) })
    const yanked = await publishPack(site, alice, { title: 'Ghostix Yanked', category: 'oddities', tags: ['Glowcap'] }, { archive: await resourcePack(46) })
    await ok(call('POST', `${packUrl(hidden)}hide/`, root, { reason: 'tests' }))
    await ok(call('POST', '/api/users/eve/disable/', root, { reason: 'tests' }))
    await yank(alice, yanked, yanked.versions[0]!.id, true)
    for (const user of [null, bob]) {
      const answer = await search({ q: 'ghostix', facets: 'true' }, user)
      assert.deepEqual(answer.items.map((p) => p.title), ['Ghostix Visible'])
      assert.equal(answer.total, 1)
      const f = answer.facets!
      assert.deepEqual(f.kind.filter((o) => o.count > 0), [{ value: 'data', count: 1 }])
      assert.deepEqual(f.categories, [{ value: 'biomes', count: 1 }])
      assert.deepEqual(f.tags, [{ value: 'Moss', count: 1 }])
      assert.deepEqual(f.mc.map((o) => [o.value, o.count]), [['1.21.1', 1], ['1.21', 1]])
      assert.deepEqual(f.updated.map((o) => o.count), [1, 1, 1])
    }
    assert.equal((await search({ q: 'ghostix', kind: 'resource' })).total, 0)
    assert.equal((await search({ owner: 'eve' })).total, 0)
    assert.equal((await search({ q: 'ghostix', sort: 'title' })).total, 1)
    // Unhidden, enabled, un-yanked: all four are back.
    await ok(call('POST', `${packUrl(hidden)}unhide/`, root, { reason: 'tests' }))
    await ok(call('POST', '/api/users/eve/enable/', root, { reason: 'tests' }))
    await yank(alice, yanked, yanked.versions[0]!.id, false)
    const back = await search({ q: 'ghostix', facets: 'true' })
    assert.equal(back.total, 4)
    assert.deepEqual(back.facets!.kind.map((o) => [o.value, o.count]).sort(), [['data', 1], ['resource', 3]])
  })
})

describe('never shown, not even through typos', () => {
  test('a word that only unlisted packs start with does not stop a typo from finding a listed pack', async () => {
    await publishPack(site, alice, { title: 'Basilisk Burrows' })
    const hidden = await publishPack(site, bob, { title: 'Basilsikia Secret' })
    const yanked = await publishPack(site, bob, { title: 'Gorgnoia Vault' })
    await publishPack(site, alice, { title: 'Gorgonia Gardens' })
    assert.deepEqual(await titles({ q: 'basilsik' }), ['Basilsikia Secret'], 'while listed, the word as typed finds it: no typo is looked for')
    await ok(call('POST', `${packUrl(hidden)}hide/`, root, { reason: 'tests' }))
    await yank(bob, yanked, yanked.versions[0]!.id, true)
    assert.deepEqual(await titles({ q: 'basilsik' }), ['Basilisk Burrows'], 'a hidden pack\'s word does not hide the typo')
    assert.deepEqual(await titles({ q: 'gorgnoi' }), ['Gorgonia Gardens'], 'nor a pack with every version yanked')
  })
})

describe('hostile input', () => {
  test('queries of punctuation, quotes and FTS5 / tsquery syntax: a clean answer, never a 500', async () => {
    await publishPack(site, alice, { title: 'Hostix Near Stars', summary: 'and or not near' })
    const syntax = ['"', '*', ':', '&', '|', '!', '(', ')', 'NEAR', '-', '^', "'", '\\', '{', '}', '<->', ':*', '%', '_', '\u0000', ';']
    const qs = [
      ...syntax,
      syntax.join('').repeat(10).slice(0, 200),
      '"'.repeat(200), '*'.repeat(200), "'".repeat(200), '('.repeat(200), '!'.repeat(200),
      'hostix" OR "near', 'hostix*', 'hostix:*', "hostix' | 'stars", 'NEAR(hostix stars)', 'hostix -stars', '^hostix', 'title:hostix',
      'hostix AND', 'OR hostix', 'NOT hostix', 'hostix & !stars', 'hostix <-> stars', '"hostix near"', 'near and or not',
      'a b c d e f g h i j k l m n o p q r s t u v w x y z', 'é'.repeat(200), '\u{1F600}'.repeat(50), 'x'.repeat(200),
    ]
    for (const q of qs) {
      const res = await site.app.inject({ url: '/api/packs/', query: { q }, headers: site.gate })
      assert.ok(res.statusCode === 200 || res.statusCode === 400, `q=${JSON.stringify(q)}: ${res.statusCode} ${res.body}`)
      if (res.statusCode === 400) assert.equal(typeof (res.json() as { detail?: unknown }).detail, 'string')
      else assert.ok(Array.isArray((res.json() as ListJson).items))
    }
    for (const q of ['hostix" OR "near', 'hostix*', 'hostix:*', "hostix' | 'stars", 'NEAR(hostix stars)', '^hostix', 'hostix & !stars', 'hostix <-> stars', '"hostix near"']) {
      assert.deepEqual(await titles({ q }), ['Hostix Near Stars'], `q=${q}: the words, the syntax ignored`)
    }
    assert.deepEqual(await titles({ q: 'near and or not hostix' }), ['Hostix Near Stars'], 'NEAR, AND, OR and NOT are words like any other')
    // Longer than 200 characters: refused by the schema.
    const long = await site.app.inject({ url: '/api/packs/', query: { q: 'x'.repeat(201) }, headers: site.gate })
    assert.equal(long.statusCode, 400, long.body)
    assert.equal(typeof long.json().detail, 'string')
  })

  test('mc garbage, 21 categories, unknown tags, bad kind, updated and sort: 400 with a detail, or an empty answer', async () => {
    const refused = async (query: Query, pattern?: RegExp) => {
      const res = await site.app.inject({ url: '/api/packs/', query, headers: site.gate })
      assert.equal(res.statusCode, 400, `${JSON.stringify(query)}: ${res.body}`)
      const detail = (res.json() as { detail?: unknown }).detail
      assert.equal(typeof detail, 'string')
      if (pattern) assert.match(detail as string, pattern)
    }
    for (const mc of ['>=abc', 'abc', '1.21..x', '>=', '..', '1.2.3.4.5', '1.21.99', '>=1.21 or 1=1']) await refused({ mc }, /Minecraft/)
    await refused({ mc: 'x'.repeat(41) })
    await refused({ categories: Array.from({ length: 21 }, (_, i) => `c${i}`).join(',') }, /at most 20/)
    await refused({ tags: Array.from({ length: 21 }, (_, i) => `t${i}`).join(',') }, /at most 20/)
    await refused({ kind: 'both' })
    await refused({ updated: 'decade' })
    await refused({ sort: 'random' })
    await refused({ facets: 'maybe' })
    assert.deepEqual((await search({ categories: Array.from({ length: 20 }, (_, i) => `c${i}`).join(',') })).items, [], '20 unknown categories: nothing')
    const unknownTags = await search({ tags: 'nosuch,neither', facets: 'true' })
    assert.deepEqual([unknownTags.items, unknownTags.total], [[], 0])
    assert.deepEqual((await search({ tags: ',,,', sort: 'title' })).items, (await search({ sort: 'title' })).items, 'an empty list is no filter')
    assert.equal((await search({ q: 'zzzznothing' })).total, 0)
  })
})

describe('at the same moment', () => {
  test('ten edits of different packs sharing words: no error, and the vocabulary equals a recount', async () => {
    const ROUNDS = 5
    const packs: PackJson[] = []
    for (let i = 0; i < 10; i++) packs.push(await publishPack(site, i % 2 ? alice : bob, { title: `Concurrix ${i}`, summary: i % 2 ? 'ambervale brindlemoor' : 'cobaltreach dunmarrow' }))
    await assertVocabularyRecounted('after publishing')
    // Half go from one pair of words to the other, half the other way: each edit adds what another takes away.
    for (let round = 0; round < ROUNDS; round++) {
      const results = await Promise.all(packs.map(async (pack, i) => {
        const owner = i % 2 ? alice : bob
        const current = (await ok(call('GET', packUrl(pack), owner))).json() as PackJson
        const swap = (i + round) % 2 ? 'cobaltreach dunmarrow ambervale' : 'ambervale brindlemoor cobaltreach'
        return call('PATCH', packUrl(pack), owner, { revision: current.revision, summary: `${swap} round${round}`, tags: round % 2 ? ['Moss'] : ['Glowcap'] })
      }))
      assert.deepEqual(results.map((r) => r.statusCode), Array.from({ length: 10 }, () => 200), results.map((r) => r.body).join('\n'))
      await assertVocabularyRecounted(`after round ${round}`)
    }
    assert.equal((await search({ q: `concurrix round${ROUNDS - 1}` })).total, 10)
    const rounds = await site.app.db.selectFrom('search_terms').select(['term', 'docs']).where('term', 'like', 'round%').execute()
    assert.deepEqual(rounds.map((r) => [r.term, Number(r.docs)]), [[`round${ROUNDS - 1}`, 10]], 'the earlier rounds\' words left the vocabulary')
  })
})

describe('at the same moment, new words', () => {
  test('ten packs published at once with the same words nobody used before: each counted once per pack', async () => {
    const authors: TestUser[] = []
    for (let i = 0; i < 10; i++) authors.push(await site.user(`newwordauthor${i}`))
    await Promise.all(authors.map((author, i) => publishPack(site, author, { title: `Freshword Pack ${i}`, summary: 'zanthoric quellmire' })))
    assert.equal((await search({ q: 'zanthoric quellmire' })).total, 10)
    const rows = await site.app.db.selectFrom('search_terms').select(['term', 'docs']).where('term', 'in', ['zanthoric', 'quellmire', 'freshword']).orderBy('term').execute()
    assert.deepEqual(rows.map((r) => [r.term, Number(r.docs)]), [['freshword', 10], ['quellmire', 10], ['zanthoric', 10]])
    await assertVocabularyRecounted('after the publishes')
  })
})

describe('at the same moment, crossing', () => {
  test('edits that each add the words another takes away (locks taken in opposite orders): no error, the vocabulary recounted', async () => {
    // Two sets of many words: half the packs go from the first to the second while the other half go back.
    const first = Array.from({ length: 150 }, (_, i) => `crossa${i}`).join(' ')
    const second = Array.from({ length: 150 }, (_, i) => `crossb${i}`).join(' ')
    const packs: PackJson[] = []
    for (let i = 0; i < 10; i++) packs.push(await publishPack(site, alice, { title: `Crossix ${i}`, description: i % 2 ? first : second }))
    for (let round = 0; round < 4; round++) {
      const current = await Promise.all(packs.map(async (pack) => ((await ok(call('GET', packUrl(pack), alice))).json() as PackJson).revision))
      const results = await Promise.all(packs.map((pack, i) =>
        call('PATCH', packUrl(pack), alice, { revision: current[i], description: (i + round) % 2 ? second : first })))
      assert.deepEqual(results.map((r) => r.statusCode), Array.from({ length: 10 }, () => 200), results.map((r) => r.body).filter((b) => !b.startsWith('{"namespace')).join('\n'))
      await assertVocabularyRecounted(`after round ${round}`)
    }
  })
})

describe('at the same moment, one pack', () => {
  test('members accepting at once while the owner edits: every name is found, the vocabulary recounted', async () => {
    const names = Array.from({ length: 6 }, (_, i) => `samepackmember${'abcdef'[i]}`)
    // One at a time: the site hashes a few passwords at once, no more.
    const members: TestUser[] = []
    for (const name of names) members.push(await site.user(name))
    let pack = await publishPack(site, alice, { title: 'Samepack Gathering' })
    for (const member of members) await ok(call('POST', `${packUrl(pack)}team/`, alice, { username: member.username, role: 'uploader' }), 201)
    const results = await Promise.all([
      ...members.map((member) => call('POST', `${packUrl(pack)}team/accept/`, member)),
      call('PATCH', packUrl(pack), alice, { revision: pack.revision, summary: 'samepacksummary words' }),
    ])
    assert.deepEqual(results.map((r) => r.statusCode), [...members.map(() => 200), 200], results.map((r) => r.body).join('\n'))
    for (const name of [...names, 'samepacksummary']) assert.deepEqual(await titles({ q: name }), ['Samepack Gathering'], `q=${name}`)
    await assertVocabularyRecounted('after the accepts')
    // And all leaving at once.
    pack = (await ok(call('GET', packUrl(pack), alice))).json() as PackJson
    const leaving = await Promise.all(members.map((member) => call('DELETE', `${packUrl(pack)}team/${member.username}/`, member)))
    assert.deepEqual(leaving.map((r) => r.statusCode), members.map(() => 204), leaving.map((r) => r.body).join('\n'))
    for (const name of names) assert.deepEqual(await titles({ q: name }), [], `q=${name} after leaving`)
    await assertVocabularyRecounted('after leaving')
  })
})

describe('facet counts kept between searches', () => {
  test('are not kept from before a change that was committing while they were counted', async () => {
    let pack = await publishPack(site, alice, { title: 'Racefacet Pack', category: 'biomes' })
    for (let round = 0; round < 6; round++) {
      const category = round % 2 ? 'biomes' : 'tools'
      // Searches with facets while the edit commits: some count before it, some after.
      const [edited] = await Promise.all([
        call('PATCH', packUrl(pack), alice, { revision: pack.revision, category }),
        ...Array.from({ length: 12 }, () => search({ q: 'racefacet', facets: 'true' })),
      ])
      assert.equal(edited.statusCode, 200, edited.body)
      pack = edited.json() as PackJson
      assert.deepEqual((await search({ q: 'racefacet', facets: 'true' })).facets!.categories, [{ value: category, count: 1 }], `round ${round}`)
    }
  })
})

describe('the index follows every change', () => {
  test('title, tags and category edits; yank, unyank and delete of versions; team accept, remove and transfer; pack delete', async () => {
    const owner = await site.user('indexowner')
    const helper = await site.user('indexhelper')
    let pack = await publishPack(site, owner, { title: 'Indexa Original', category: 'biomes', tags: ['Moss'] })
    assert.deepEqual(await titles({ q: 'indexa' }), ['Indexa Original'])

    pack = await edit(owner, pack, { title: 'Indexa Renamed Quasarwood', tags: ['Lantern'], category: 'tools' })
    assert.deepEqual(await titles({ q: 'quasarwood' }), ['Indexa Renamed Quasarwood'])
    assert.deepEqual(await titles({ q: 'indexa original' }), [], 'the old title is gone from the index')
    assert.deepEqual(await titles({ q: 'indexa', tags: 'Lantern', categories: 'tools' }), ['Indexa Renamed Quasarwood'])
    assert.deepEqual(await titles({ q: 'indexa', tags: 'Moss' }), [])
    assert.deepEqual(await titles({ q: 'indexa moss' }), [], 'the old tag is no longer a word of it')
    assert.deepEqual(await titles({ q: 'indexa biomes' }), [], 'nor the old category')
    assert.deepEqual(await titles({ q: 'indexa lantern tools' }), ['Indexa Renamed Quasarwood'])

    // Versions: a resource version added, the data one yanked, un-yanked, then the resource one deleted.
    pack = await addVersion(owner, pack, '2.0', await resourcePack(46))
    assert.deepEqual(await titles({ q: 'indexa', kind: 'resource', mc: '1.21.4' }), ['Indexa Renamed Quasarwood'])
    const first = pack.versions.find((v) => v.name !== '2.0')!
    const second = pack.versions.find((v) => v.name === '2.0')!
    await yank(owner, pack, first.id, true)
    assert.deepEqual(await titles({ q: 'indexa', kind: 'data' }), [])
    assert.deepEqual(await titles({ q: 'indexa', mc: '1.21' }), [])
    await yank(owner, pack, first.id, false)
    assert.deepEqual(await titles({ q: 'indexa', kind: 'data', mc: '1.21' }), ['Indexa Renamed Quasarwood'])
    await ok(call('DELETE', `${packUrl(pack)}versions/${second.id}/`, owner), 204)
    assert.deepEqual(await titles({ q: 'indexa', kind: 'resource' }), [])
    assert.deepEqual(await titles({ q: 'indexa', mc: '1.21.4' }), [])

    // The team: accepted, found by the member's name and with member=; removed; then the pack handed over.
    await ok(call('POST', `${packUrl(pack)}team/`, owner, { username: helper.username, role: 'maintainer' }), 201)
    assert.deepEqual(await titles({ q: 'indexhelper' }), [])
    await ok(call('POST', `${packUrl(pack)}team/accept/`, helper))
    assert.deepEqual(await titles({ q: 'indexhelper' }), ['Indexa Renamed Quasarwood'])
    assert.deepEqual(await titles({ q: 'indexa', member: 'indexhelper' }), ['Indexa Renamed Quasarwood'])
    await ok(call('DELETE', `${packUrl(pack)}team/${helper.username}/`, owner), 204)
    assert.deepEqual(await titles({ q: 'indexhelper' }), [])
    assert.deepEqual(await titles({ q: 'indexa', member: 'indexhelper' }), [])
    await ok(call('POST', `${packUrl(pack)}team/`, owner, { username: helper.username, role: 'maintainer' }), 201)
    await ok(call('POST', `${packUrl(pack)}team/accept/`, helper))
    await ok(call('POST', `${packUrl(pack)}transfer/`, owner, { username: helper.username }), 204)
    assert.deepEqual(await titles({ q: 'indexa', owner: 'indexhelper' }), [], 'an offer changes nothing yet')
    await ok(call('POST', `${packUrl(pack)}transfer/accept/`, helper))
    assert.deepEqual(await titles({ q: 'indexa', owner: 'indexhelper' }), ['Indexa Renamed Quasarwood'])
    assert.deepEqual(await titles({ q: 'indexa', owner: 'indexowner' }), [])
    assert.deepEqual(await titles({ q: 'indexowner' }), ['Indexa Renamed Quasarwood'], 'the old owner stays, as a maintainer')
    await assertVocabularyRecounted('before the delete')

    // Deleted: gone from hits, and its words from the vocabulary (a typo finds nothing of it either).
    await ok(call('DELETE', packUrl(pack), helper), 204)
    assert.deepEqual(await titles({ q: 'quasarwood' }), [])
    assert.deepEqual(await titles({ q: 'quasarwod' }), [])
    await assertVocabularyRecounted('after the delete')
    const left = await site.app.db.selectFrom('search_terms').select('term').where('term', '=', 'quasarwood').execute()
    assert.deepEqual(left, [], 'a word only the deleted pack had is no longer in the vocabulary')
  })
})
