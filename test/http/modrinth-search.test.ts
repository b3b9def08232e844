// Modrinth's search and tag lists on a Packs site, read by a real Modrinth
// client library from npm (@xmcl/modrinth's searchProjects, getCategoryTags,
// getGameVersionTags) pointed at a listening server, as a launcher's browse
// screen reads them: words and facets (an AND of OR-groups) find the packs
// the site lists, never a hidden one; the orders, offset and limit page them;
// a facet the site cannot answer is a 400 the library reports.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { ModrinthV2Client, ModerinthApiError, type SearchResult } from '@xmcl/modrinth'
import { knownReleases } from '../../src/packs/search-service.js'
import { siteWith, type TestSite, type TestUser } from '../helpers/app.js'
import { datapack, multipart, zip } from '../helpers/fixtures.js'
import { publishPack, seedTags, type PackJson } from '../helpers/packs.js'

let site: TestSite
let alice: TestUser
let bob: TestUser
let warden: TestUser
let origin: string
let client: ModrinthV2Client
const packs: Record<'lamps' | 'caves' | 'maps' | 'both' | 'hidden', PackJson> = {} as never

const resourcePack = (pack: Record<string, unknown>, salt: string) =>
  zip({ 'pack.mcmeta': JSON.stringify({ pack: { description: salt, ...pack } }), [`assets/x/${salt}.txt`]: salt })
const slug = (p: PackJson) => `${p.namespace}:${p.pack_id}`
/** The hits' slugs, in the answer's order. */
const slugs = (result: SearchResult) => result.hits.map((hit) => hit.slug)
const search = (facets: unknown[][] | undefined, options: { query?: string; index?: string; offset?: number; limit?: number } = {}) =>
  client.searchProjects({ ...options, ...(facets ? { facets: JSON.stringify(facets) } : {}) })

/** The failure of a client call: its status and the body's detail. */
async function refusal(call: Promise<unknown>): Promise<{ status: number; detail: string }> {
  try {
    await call
  } catch (error) {
    assert.ok(error instanceof ModerinthApiError, String(error))
    return { status: error.status, detail: (JSON.parse(error.body) as { detail: string }).detail }
  }
  assert.fail('the call succeeded')
}

async function setCounts(pack: PackJson, downloads: number, created: string, updated: string): Promise<void> {
  await site.app.db.updateTable('packs').set({ downloads, created_at: created, updated_at: updated })
    .where('namespace', '=', pack.namespace).where('pack_id', '=', pack.pack_id).execute()
}

before(async () => {
  ;({ site, alice, bob, warden } = await siteWith({ users: ['alice', 'bob'], staff: ['warden'] }))
  // Categories theme and kind; tags Medieval and Space (theme), Adventure (kind).
  await seedTags(site)
  // A resource pack for 1.21 – 1.21.4 in category theme, tagged Medieval, with a thumbnail.
  packs.lamps = await publishPack(site, alice, { title: 'Dragon Lamps', summary: 'Warm light', category: 'theme', tags: ['Medieval'] },
    { archive: await resourcePack({ pack_format: 34, supported_formats: [34, 46] }, 'lamps'), thumbnail: true })
  // A data pack for 1.21 – 1.21.1 in category kind, tagged Space and Adventure.
  packs.caves = await publishPack(site, alice, { title: 'Star Caves', summary: 'Deep down', category: 'kind', tags: ['Space', 'Adventure'] },
    { archive: await datapack(48, { 'data/caves/x.json': '{}' }) })
  // A resource pack for 1.20 – 1.20.1, tagged Adventure.
  packs.maps = await publishPack(site, bob, { title: 'Dragon Maps', summary: 'Old maps', tags: ['Adventure'] },
    { archive: await resourcePack({ pack_format: 15 }, 'maps') })
  // A resource pack, then a data pack version: both kinds.
  packs.both = await publishPack(site, bob, { title: 'Both Worlds', summary: 'Two in one' }, { archive: await resourcePack({ pack_format: 34 }, 'both') })
  const body = multipart([{ name: 'version_name', value: '2.0' }, { name: 'file', value: await datapack(48, { 'data/both/x.json': '{}' }), filename: 'both.zip', contentType: 'application/zip' }])
  const added = await site.app.inject({ method: 'POST', url: `/api/packs/${packs.both.namespace}/${packs.both.pack_id}/versions/`, headers: { ...bob.headers, ...body.headers }, payload: body.payload })
  assert.equal(added.statusCode, 201, added.body)
  // Hidden by staff: it matches every facet below, and must never be a hit.
  packs.hidden = await publishPack(site, bob, { title: 'Hidden Dragons', summary: 'Secret', category: 'theme', tags: ['Medieval', 'Adventure'] },
    { archive: await resourcePack({ pack_format: 46 }, 'hidden') })
  const hide = await site.app.inject({ method: 'POST', url: `/api/packs/${packs.hidden.namespace}/${packs.hidden.pack_id}/hide/`, headers: warden.headers, payload: {} })
  assert.equal(hide.statusCode, 200, hide.body)
  // Downloads, publication and update times that give each order a different answer.
  await setCounts(packs.lamps, 50, '2026-01-01T00:00:00.000Z', '2026-05-01T00:00:00.000Z')
  await setCounts(packs.caves, 500, '2026-02-01T00:00:00.000Z', '2026-03-01T00:00:00.000Z')
  await setCounts(packs.maps, 5, '2026-03-01T00:00:00.000Z', '2026-04-01T00:00:00.000Z')
  await setCounts(packs.both, 20, '2026-04-01T00:00:00.000Z', '2026-02-01T00:00:00.000Z')
  await setCounts(packs.hidden, 9999, '2026-05-01T00:00:00.000Z', '2026-06-01T00:00:00.000Z')
  await site.app.listen({ port: 0, host: '127.0.0.1' })
  const address = site.app.server.address()
  assert.ok(address && typeof address === 'object')
  origin = `http://127.0.0.1:${address.port}`
  // Staff, Modrinth's way (the token alone): staff may see hidden packs elsewhere, but search lists what everyone sees.
  client = new ModrinthV2Client({ baseUrl: `${origin}/api/modrinth`, headers: { Authorization: warden.token } })
})
after(() => site.close())

describe('searchProjects through the Modrinth-compatible API', () => {
  test('words find the listed packs, in Modrinth\'s SearchResult shape, agreeing with the project', async () => {
    const found = await search(undefined, { query: 'dragon' })
    assert.deepEqual(new Set(slugs(found)), new Set([slug(packs.lamps), slug(packs.maps)]), 'the hidden Dragons pack is not a hit')
    assert.equal(found.total_hits, 2)
    assert.equal(found.offset, 0)
    assert.equal(found.limit, 10)
    const hit = found.hits.find((h) => h.slug === slug(packs.lamps))!
    const project = await client.getProject(slug(packs.lamps))
    const [newest] = await client.getProjectVersions(slug(packs.lamps))
    assert.equal(hit.project_id, project.id)
    assert.equal(hit.project_type, 'resourcepack')
    assert.equal(hit.author, 'alice')
    assert.equal(hit.title, 'Dragon Lamps')
    assert.equal(hit.description, 'Warm light')
    assert.deepEqual(hit.categories, ['theme', 'Medieval', 'minecraft'], 'the category key, the tags, then the loader')
    // Fields of Modrinth's SearchResult the library's type leaves out.
    const more = hit as unknown as { display_categories: string[]; color: unknown }
    assert.deepEqual(more.display_categories, hit.categories)
    assert.equal(more.color, null)
    assert.deepEqual(hit.versions, project.game_versions)
    assert.ok(hit.versions.includes('1.21.4'))
    assert.equal(hit.downloads, 50)
    assert.equal(hit.follows, 0)
    assert.ok(hit.icon_url?.startsWith(`${origin}/api/modrinth/files/`), 'an absolute, signed icon link')
    assert.equal((await fetch(hit.icon_url!)).status, 200, 'that opens with no credentials')
    assert.equal(hit.date_created, '2026-01-01T00:00:00.000Z')
    assert.equal(hit.date_modified, '2026-05-01T00:00:00.000Z')
    assert.equal(hit.latest_version, newest!.id)
    assert.equal(hit.license, 'LicenseRef-Unknown')
    assert.equal(hit.client_side, 'required')
    assert.deepEqual(hit.gallery, [])
    assert.equal(hit.featured_gallery, null)
    const maps = found.hits.find((h) => h.slug === slug(packs.maps))!
    assert.equal(maps.icon_url, '', 'no thumbnail: "" as Modrinth\'s v2 search gives it')
    assert.deepEqual((await search(undefined, { query: 'lamps' })).hits.map((h) => h.title), ['Dragon Lamps'])
    assert.equal((await search(undefined, { query: 'secret' })).total_hits, 0, 'a hidden pack is not found by its own words either')
  })

  test('facets: AND of OR-groups over tags, categories, loaders, versions, project types and authors', async () => {
    const set = async (facets: unknown[][], query?: string) => new Set(slugs(await search(facets, query === undefined ? {} : { query })))
    const all = (...names: Array<keyof typeof packs>) => new Set(names.map((name) => slug(packs[name])))
    // An OR of two tags (what the packs search cannot say in one filter), in any case.
    assert.deepEqual(await set([['categories:medieval', 'categories:SPACE']]), all('lamps', 'caves'))
    // A category key; a tag ANDed with a release.
    assert.deepEqual(await set([['categories:theme']]), all('lamps'))
    assert.deepEqual(await set([['categories:adventure'], ['versions:1.21']]), all('caves'))
    assert.deepEqual(await set([['categories:adventure']]), all('caves', 'maps'))
    assert.deepEqual(await set([['versions:1.20.1', 'versions:1.21.4']]), all('lamps', 'maps'))
    assert.deepEqual(await set([['versions:1.21.4'], ['versions:1.20.1']]), all(), 'no pack runs on both')
    // Kinds, as project types and as Modrinth's loaders among the categories.
    assert.deepEqual(await set([['project_type:datapack']]), all('caves', 'both'))
    assert.deepEqual(await set([['categories:datapack']]), all('caves', 'both'))
    assert.deepEqual(await set([['project_type:resourcepack']]), all('lamps', 'maps', 'both'))
    assert.deepEqual(await set([['project_type:resourcepack'], ['project_type:datapack']]), all('both'), 'a pack with versions of both kinds')
    assert.deepEqual(await set([['project_type:mod']]), all(), 'a type this site has none of')
    // Authors: the owner's username; two in one group.
    assert.deepEqual(await set([['author:bob']]), all('maps', 'both'))
    assert.deepEqual(await set([['author:bob', 'author:ALICE'], ['categories:adventure']]), all('caves', 'maps'))
    assert.deepEqual(await set([['author:nobody']]), all())
    // Words and facets together; a value that names nothing here matches nothing.
    assert.deepEqual(await set([['project_type:resourcepack']], 'dragon'), all('lamps', 'maps'))
    assert.deepEqual(await set([['categories:no-such-thing']]), all())
    const result = await search([['categories:medieval', 'categories:space']])
    assert.equal(result.total_hits, 2, 'counted after the OR-group is checked')
  })

  test('index orders the hits; offset and limit page them, total_hits stays the whole count', async () => {
    const order = async (index: string) => (await search(undefined, { index })).hits.map((hit) => hit.title)
    assert.deepEqual(await order('downloads'), ['Star Caves', 'Dragon Lamps', 'Both Worlds', 'Dragon Maps'])
    assert.deepEqual(await order('follows'), await order('downloads'), 'no followers here: as downloads')
    assert.deepEqual(await order('newest'), ['Both Worlds', 'Dragon Maps', 'Star Caves', 'Dragon Lamps'])
    assert.deepEqual(await order('updated'), ['Dragon Lamps', 'Dragon Maps', 'Star Caves', 'Both Worlds'])
    assert.deepEqual(await order('relevance'), await order('downloads'), 'relevance with no words: most downloaded first')
    const page = await search(undefined, { index: 'downloads', offset: 1, limit: 2 })
    assert.deepEqual(page.hits.map((hit) => hit.title), ['Dragon Lamps', 'Both Worlds'])
    assert.deepEqual([page.offset, page.limit, page.total_hits], [1, 2, 4])
    // The same through the path for an OR-group of tags, which pages after checking it.
    const tagged = await search([['categories:medieval', 'categories:adventure']], { index: 'downloads', offset: 1, limit: 1 })
    assert.deepEqual(tagged.hits.map((hit) => hit.title), ['Dragon Lamps'])
    assert.equal(tagged.total_hits, 3)
    const empty = await search(undefined, { offset: 100 })
    assert.deepEqual([empty.hits.length, empty.total_hits], [0, 4])
  })

  test('hostile or unsupported input is a 400 with a detail, reported by the library', async () => {
    const cases: Array<[facets: string, detail: RegExp]> = [
      ['not json', /facets must be JSON/],
      ['[["license:mit"]]', /facet type "license" is not one this site has/],
      ['[["downloads>=100"]]', /uses ">=": this site takes "type:value" only/],
      ['[["versions!=1.21"]]', /uses "!="/],
      ['["versions:1.21"]', /group 1 must be an array/],
      [JSON.stringify(Array.from({ length: 11 }, () => ['versions:1.21'])), /11 groups; at most 10/],
      [JSON.stringify([Array.from({ length: 21 }, (_, i) => `categories:c${i}`)]), /21 values; at most 20/],
      ['['.repeat(1000) + ']'.repeat(1000), /nested array/],
      [JSON.stringify([['versions:1.21', 'categories:space']]), /mixes versions with other facet types/],
    ]
    for (const [facets, detail] of cases) {
      const refused = await refusal(client.searchProjects({ facets }))
      assert.equal(refused.status, 400, facets.slice(0, 40))
      assert.match(refused.detail, detail)
    }
    const long = await refusal(client.searchProjects({ facets: JSON.stringify([[`categories:${'a'.repeat(11_000)}`]]) }))
    assert.equal(long.status, 400, 'too long to parse')
    assert.match(long.detail, /facets/)
    assert.equal((await refusal(client.searchProjects({ limit: 101 }))).status, 400, 'at most 100 per page, as on Modrinth')
    assert.equal((await refusal(client.searchProjects({ index: 'random' }))).status, 400)
    assert.match((await refusal(client.searchProjects({ filter: 'categories="magic"' }))).detail, /not supported here: use facets/)
  })
})

describe('tags through the Modrinth-compatible API', () => {
  test('getCategoryTags: each category and tag, once per project type, with its group as header', async () => {
    const tags = await client.getCategoryTags()
    const lines = tags.map((tag) => `${tag.project_type} ${tag.header} ${tag.name}`)
    assert.deepEqual(lines, ['resourcepack', 'datapack'].flatMap((type) => [
      `${type} categories kind`, `${type} categories theme`, `${type} kind Adventure`, `${type} theme Medieval`, `${type} theme Space`,
    ]))
    assert.match(tags[0]!.icon, /^<svg [^>]*><circle [^>]*fill="#0055aa"\/><\/svg>$/, 'a dot in the category\'s colour')
  })

  test('getGameVersionTags: the releases the site knows, newest first; type and major filter them', async () => {
    const versions = await client.getGameVersionTags()
    assert.deepEqual(versions.map((v) => v.version), [...knownReleases()])
    assert.ok(versions.length > 50)
    assert.ok(versions.every((v) => v.version_type === 'release' && v.date === null))
    const byName = new Map(versions.map((v) => [v.version, v]))
    assert.equal(byName.get('1.21')?.major, true)
    assert.equal(byName.get('1.21.4')?.major, false)
    const index = (name: string) => versions.findIndex((v) => v.version === name)
    assert.ok(index('1.21.4') < index('1.21') && index('1.21') < index('1.20.1'), 'newest first')
    const majors = await (await fetch(`${origin}/api/modrinth/v2/tag/game_version?major=true`, { headers: site.gate })).json() as Array<{ version: string }>
    assert.deepEqual(majors.map((v) => v.version), versions.filter((v) => v.major).map((v) => v.version))
    const snapshots = await fetch(`${origin}/api/modrinth/v2/tag/game_version?type=snapshot`, { headers: site.gate })
    assert.deepEqual(await snapshots.json(), [])
  })

  test('GET /v2/tag/project_type: resourcepack and datapack, the facet values project_type takes', async () => {
    const res = await fetch(`${origin}/api/modrinth/v2/tag/project_type`, { headers: site.gate })
    assert.equal(res.status, 200)
    assert.deepEqual(await res.json(), ['resourcepack', 'datapack'])
  })
})
