// The in-memory copy of the search index (src/packs/search-memory.ts) answers every search exactly as SQL
// (src/packs/search-repository.ts) does: the same page of hits in the same order, the same count, the same
// facet counts. Both are asked directly, not over HTTP (hundreds of searches, each in every sort and three
// pages), over the relevance corpus (test/helpers/search-corpus.ts) with some of its packs hidden, yanked or
// of a disabled owner, and a few packs added for what the corpus lacks: other releases, both kinds in one
// pack, no category, titles in other scripts and outside the Basic Multilingual Plane, tags whose order
// depends on how names are compared, downloads and their ties (most packs have none). Then the site changes
// through the API (an edit, a hide, a disabled owner, a yank, a tag, a delete, downloads) and the copy must
// follow: it is compared again after each change, and a search over HTTP shows the change at once.
import { after, before, describe, test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { findUserRowByUsername } from '../../src/accounts/users-repository.js'
import { pruneChanges } from '../../src/packs/search-changes-repository.js'
import { searchSnapshotOf, type SearchSnapshot } from '../../src/packs/search-memory.js'
import { countHits, facetCounts, searchPage, type FacetName, type SearchQuery, type SearchSort } from '../../src/packs/search-repository.js'
import { moveTrendingWindow, releasesMatching, resolveSearch, type PackSearch } from '../../src/packs/search-service.js'
import { createTag } from '../../src/packs/tags.js'
import { siteWith, type TestSite, type TestUser } from '../helpers/app.js'
import { datapack, multipart, png, zip } from '../helpers/fixtures.js'
import { pathOf, publishPack, type PackJson } from '../helpers/packs.js'
import { PACKS, QUERIES, corpusId, seedCorpus, type SeededCorpus } from '../helpers/search-corpus.js'

const SORTS: readonly SearchSort[] = ['relevance', 'downloads', 'trending', 'created', 'updated', 'title']
const PAGES = [{ limit: 20, offset: 0 }, { limit: 7, offset: 13 }, { limit: 100, offset: 0 }] as const
const CAPS = [1000, 0] as const
const FACETS: readonly FacetName[] = ['kind', 'mc', 'categories', 'tags', 'updated']
/** How long a copy may take to load again after missing changes: far more than a load of the corpus takes. */
const RELOAD_BOUND_MS = 60_000
/** Mismatches printed in full; the rest are counted. */
const PRINTED = 25

type Options = Array<{ value: string; count: number }>

/**
 * Asks SQL and the copy the same searches and keeps every difference, each with what reproduces it: the
 * query object, the sort and page, and both answers (ids as namespace:pack_id).
 */
class Comparison {
  readonly mismatches: string[] = []
  readonly made = { searches: 0, skipped: 0, pages: 0, counts: 0, facets: 0 }
  private names = new Map<string, string>()

  constructor(private readonly site: TestSite, private readonly snapshot: SearchSnapshot, private readonly windows: Record<string, string>) {}

  /** The packs' names by row id, for the messages (again after packs were added). */
  async readNames(): Promise<void> {
    const rows = await this.site.app.db.selectFrom('packs').select(['id', 'namespace', 'pack_id']).execute()
    for (const row of rows) this.names.set(row.id, `${row.namespace}:${row.pack_id}`)
  }

  /** A search as the service resolves it (words with their alternatives, names to ids); none when nothing can match. */
  async search(label: string, search: PackSearch): Promise<void> {
    const query = await resolveSearch(this.site.app.db, search)
    if (!query) {
      this.made.skipped++
      return
    }
    await this.query(`${label} ${JSON.stringify(search)}`, query)
  }

  async query(label: string, query: SearchQuery): Promise<void> {
    const db = this.site.app.db
    this.made.searches++
    for (const sort of SORTS) {
      for (const page of PAGES) {
        const bySql = await searchPage(db, query, sort, page)
        const byMemory = this.snapshot.page(query, sort, page)
        this.made.pages++
        if (bySql.join() !== byMemory.join()) {
          const at = bySql.findIndex((id, i) => byMemory[i] !== id)
          this.differ(label, query, `page sort=${sort} limit=${page.limit} offset=${page.offset} (first difference at ${at === -1 ? bySql.length : at})`,
            this.named(bySql), this.named(byMemory))
        }
      }
    }
    for (const cap of CAPS) {
      const bySql = await countHits(db, query, cap)
      const byMemory = this.snapshot.count(query, cap)
      this.made.counts++
      if (bySql !== byMemory) this.differ(label, query, `count cap=${cap}`, String(bySql), String(byMemory))
    }
    const byMemory = this.snapshot.facets(query, this.windows)
    for (const facet of FACETS) {
      const bySql = await facetCounts(db, query, facet, this.windows)
      this.made.facets++
      const sql = optionsOf(facet, bySql)
      const memory = optionsOf(facet, byMemory[facet])
      if (sql !== memory) this.differ(label, query, `facet ${facet}`, sql, memory)
    }
  }

  private named(ids: readonly string[]): string {
    return ids.map((id) => this.names.get(id) ?? id).join(', ') || '(none)'
  }

  private differ(label: string, query: SearchQuery, what: string, sql: string, memory: string): void {
    this.mismatches.push(`${label}: ${what}\n  query: ${JSON.stringify(query)}\n  sql:    ${sql}\n  memory: ${memory}`)
  }

  report(t: TestContext, title: string): void {
    const { searches, skipped, pages, counts, facets } = this.made
    t.diagnostic(`${title}: ${searches} searches (${skipped} skipped: a tag no pack carries), ${pages} pages, ${counts} counts, `
      + `${facets} facets compared (${pages + counts + facets} comparisons); ${this.mismatches.length} differ`)
    for (const line of this.mismatches.slice(0, PRINTED)) t.diagnostic(line)
  }

  assertSame(title: string): void {
    assert.equal(this.mismatches.length, 0, `${title}: the copy and SQL differ in ${this.mismatches.length} answers; the first:\n`
      + this.mismatches.slice(0, PRINTED).join('\n'))
  }
}

/**
 * A facet's options as comparable text: the tags in their order (most packs first, then by name, the first
 * 30), the other facets as sorted sets (SQL's grouping has no order).
 */
function optionsOf(facet: FacetName, options: Options): string {
  const items = options.map((o) => `${o.value}=${o.count}`)
  return (facet === 'tags' ? items : items.sort()).join(', ')
}

let site: TestSite
let root: TestUser
let vera: TestUser
let otto: TestUser
let wren: TestUser
let corpus: SeededCorpus
let snapshot: SearchSnapshot
let windows: Record<string, string>
/** Every packs.updated_at, sorted: where the "updated" filter and windows are drawn. */
let updatedTimes: string[]

const packUrl = (pack: Pick<PackJson, 'namespace' | 'pack_id'>) => `/api/packs/${pack.namespace}/${pack.pack_id}/`
const post = (url: string, user: TestUser, payload: object = {}) => site.app.inject({ method: 'POST', url, headers: user.headers, payload })

function corpusPack(owner: string, title: string): PackJson {
  const pack = corpus.packs.get(corpusId({ owner, title }))
  assert.ok(pack, `the corpus has ${owner}'s ${title}`)
  return pack
}

async function current(pack: Pick<PackJson, 'namespace' | 'pack_id'>): Promise<PackJson> {
  const res = await site.app.inject({ url: packUrl(pack), headers: root.headers })
  assert.equal(res.statusCode, 200, res.body)
  return res.json() as PackJson
}

async function userId(username: string): Promise<string> {
  const user = await findUserRowByUsername(site.app.db, username)
  assert.ok(user, username)
  return user.id
}

async function ok(res: Promise<{ statusCode: number; body: string }>, status = 200): Promise<void> {
  const answer = await res
  assert.equal(answer.statusCode, status, answer.body)
}

async function hide(pack: PackJson): Promise<void> {
  await ok(post(`${packUrl(pack)}hide/`, root, { reason: 'tests' }))
}

/** Every version of a corpus pack yanked by its owner. */
async function yankAll(pack: PackJson): Promise<void> {
  const owner = corpus.users.get(pack.owner)!
  for (const version of pack.versions) {
    await ok(site.app.inject({ method: 'PATCH', url: `${packUrl(pack)}versions/${version.id}/`, headers: owner.headers, payload: { yanked: true } }))
  }
}

let address = 0
/** Downloads of a pack's newest version, each from an address of its own (one counts once a day), written at once. */
async function download(pack: PackJson, times: number): Promise<void> {
  for (let i = 0; i < times; i++) {
    address++
    const res = await site.app.inject({ url: pathOf(pack.versions[0]!.download_url), remoteAddress: `198.51.${address >> 8}.${address & 255}`, headers: site.gate })
    assert.equal(res.statusCode, 200, res.body.slice(0, 200))
  }
  await site.app.downloads.flush()
}

/** GET /api/packs/ as an anonymous visitor: the ids of the first page. */
async function listed(query: Record<string, string>): Promise<string[]> {
  const res = await site.app.inject({ url: `/api/packs/?${new URLSearchParams({ per_page: '50', ...query })}`, headers: site.gate })
  assert.equal(res.statusCode, 200, res.body)
  return (res.json() as { items: Array<{ id: string }> }).items.map((item) => item.id)
}

const resourcePack = (title: string, format: number) =>
  zip({ 'pack.mcmeta': JSON.stringify({ pack: { pack_format: format, description: title } }), 'pack.png': png(), [`assets/minecraft/textures/item/${format}.png`]: png(2, 2) })

/**
 * Packs the corpus lacks, by vera, otto and wren: releases other than 1.21 (old resource formats, data
 * formats of 1.20), one pack with a resource and a data version, no category, titles whose lower case or
 * order differs between simple and full Unicode rules (accents, Greek, a letter outside the BMP, a
 * full-width letter, CJK), and tags whose names sort differently by code point and by a language's rules.
 */
async function addExtraPacks(): Promise<void> {
  await createTag(site.app.db, 'Éclairage', 'decoration')
  await createTag(site.app.db, 'Zèbre', 'mobs')
  await createTag(site.app.db, 'Ångström', 'technical')
  await createTag(site.app.db, 'aardvark', 'mobs')
  const extras: Array<{ user: TestUser; data: Record<string, unknown>; archive: Buffer }> = [
    { user: vera, data: { title: 'Ölig Äpfel', summary: 'Apples, oily and shiny.', tags: ['Éclairage', 'Zèbre', 'Ångström', 'aardvark'] }, archive: await datapack(15) },
    { user: vera, data: { title: 'Σοφία Λέξεις Greek', summary: 'Greek words on signs.', category: 'ui', tags: ['Zèbre', 'Fonts'] }, archive: await datapack(26) },
    { user: vera, data: { title: '𝒮cript Letters', summary: 'Script letters for book titles.', category: 'ui', tags: ['Fonts', 'Ångström'] }, archive: await resourcePack('Script Letters', 6) },
    { user: vera, data: { title: 'Ｆullwidth Letters', summary: 'Wide letters for signs.', category: 'ui', tags: ['Fonts', 'aardvark'] }, archive: await resourcePack('Fullwidth Letters', 15) },
    { user: vera, data: { title: '漢字 Kanji', summary: '漢字 on every sign, a pack of letters.', tags: ['Fonts'] }, archive: await resourcePack('Kanji Signs', 3) },
    { user: otto, data: { title: 'Otto Both Kinds', summary: 'Textures and a function, in two versions.', category: 'textures', tags: ['Dark', 'Éclairage'] }, archive: await resourcePack('Otto Both Kinds', 22) },
    // Before "Ölig Äpfel" when Ö is lower-cased first, after it when only A to Z are.
    { user: vera, data: { title: 'öde Moor', summary: 'A bleak moor.', category: 'worldgen', tags: ['Terrain'] }, archive: await datapack(48) },
    // Letters of scripts encoded late (Adlam, Latin Extended-D, Cherokee small letters): each engine's tokenizer must know them.
    { user: otto, data: { title: '𞤀𞤣𞤤𞤢𞤥 Adlam ꞔꞔ', summary: 'ᏣᎳᎩ ꭰꭱ letters.', category: 'ui' }, archive: await datapack(48) },
    { user: otto, data: { title: 'otto lower case', summary: 'A title all in lower case, a pack.', category: 'qol' }, archive: await datapack(61) },
    // With the releases of the packs above, more than one 32-bit word of the copy's release bits holds
    // (those of 1.6.1 to 1.8.9, 1.13 to 1.14.4): its bits widen while it loads.
    { user: otto, data: { title: 'Otto Old Releases', summary: 'Textures for releases long gone.', category: 'textures', tags: ['Dark'] }, archive: await resourcePack('Old Releases', 1) },
    { user: otto, data: { title: 'Otto Aquatic Releases', summary: 'Textures for the aquatic update.', category: 'textures' }, archive: await resourcePack('Aquatic Releases', 4) },
    { user: wren, data: { title: 'Wren Nest Boxes', summary: 'Nest boxes for birds: a pack whose owner is disabled.', category: 'decoration', tags: ['Building'] }, archive: await datapack(48) },
  ]
  for (const extra of extras) await publishPack(site, extra.user, extra.data, { archive: extra.archive })
  // A data version after the resource one: the pack is of both kinds, and of the releases of both.
  const both = multipart([
    { name: 'version_name', value: '2.0.0' },
    { name: 'file', value: await datapack(41), filename: 'otto-both-kinds-2.zip', contentType: 'application/zip' },
  ])
  await ok(site.app.inject({ method: 'POST', url: '/api/packs/otto/otto-both-kinds/versions/', headers: { ...otto.headers, ...both.headers }, payload: both.payload }), 201)
}

before(async () => {
  ;({ site, root, vera, otto, wren } = await siteWith({ users: ['vera', 'otto', 'wren'], staff: ['root'] }))
  corpus = await seedCorpus(site)
  assert.equal(corpus.packs.size, PACKS.length)
  await addExtraPacks()
  // What an anonymous visitor must not find, from the start: a hidden pack, one whose only version is
  // yanked, a disabled owner's.
  await hide(corpusPack('pixelsmith', 'Faithful 64x'))
  await yankAll(corpusPack('emberfox', 'Better Beds'))
  await ok(post('/api/users/wren/disable/', root, { reason: 'tests' }))
  // Downloads for a few packs, two of them equal; the rest have none, so ties are broken by what comes after.
  await download(corpusPack('pixelsmith', 'Faithful 32x'), 3)
  await download(corpusPack('tweakery', 'Vanilla Tweaks: Sleep Vote'), 2)
  await download(corpusPack('mossy_mage', 'Busy Bees'), 2)
  await download(corpusPack('nightjar', 'Owl Calls'), 1)

  updatedTimes = (await site.app.db.selectFrom('packs').select('updated_at').execute()).map((r) => r.updated_at).sort()
  // Windows that fall on packs' own times (a pack updated exactly at a window's start is in it) and one before all.
  windows = { week: updatedTimes[Math.floor(updatedTimes.length * 0.75)]!, month: updatedTimes[Math.floor(updatedTimes.length / 2)]!, year: '2000-01-01T00:00:00.000Z' }
  snapshot = searchSnapshotOf(site.app.db)
  await snapshot.loaded(site.app.db)
})
after(() => site?.close())

/** Filters drawn from the corpus, each alone or with others, and the text they are searched with. */
async function filterSets(): Promise<Array<[string, PackSearch]>> {
  const [pixelsmith, nightjar, emberfox, cobbleCat, lanternjack, veraId, wrenId, deepslate] = await Promise.all(
    ['pixelsmith', 'nightjar', 'emberfox', 'cobble_cat', 'lanternjack', 'vera', 'wren', 'deepslate_dan'].map(userId))
  const median = updatedTimes[Math.floor(updatedTimes.length / 2)]!
  return [
    ['no filter', {}],
    ['hidden too', { includeHidden: true }],
    ['kind resource', { kinds: ['resource'] }],
    ['kind data', { kinds: ['data'] }],
    ['both kinds', { kinds: ['resource', 'data'] }],
    ['no kind', { kinds: [] }],
    ['release 1.21', { releases: [['1.21']] }],
    ['releases >=1.21', { releases: [releasesMatching('>=1.21')] }],
    ['releases 1.20..1.20.6', { releases: [releasesMatching('1.20..1.20.6')] }],
    ['releases <1.13', { releases: [releasesMatching('<1.13')], includeHidden: true }],
    ['releases 1.21 and 1.20.2 (all of)', { releases: [['1.21'], releasesMatching('1.20.2..1.20.4')] }],
    ['an empty release list', { releases: [[]] }],
    ['category textures', { categories: ['textures'] }],
    ['categories mobs, structures', { categories: ['mobs', 'structures'] }],
    ['an unknown category', { categories: ['no-such-category'] }],
    ['no category listed', { categories: [] }],
    ['tag Mobs', { tags: ['Mobs'] }],
    ['tags Mobs and Combat', { tags: ['Mobs', 'Combat'] }],
    ['tags fantasy and dark, in lower case', { tags: ['fantasy', 'dark'] }],
    ['tag Fonts', { tags: ['Fonts'], includeHidden: true }],
    ['updated since the median', { updatedSince: median }],
    ['updated since the newest', { updatedSince: updatedTimes.at(-1)! }],
    ['updated in the future', { updatedSince: '2999-01-01T00:00:00.000Z' }],
    ['owner pixelsmith', { ownerId: pixelsmith }],
    ['owner pixelsmith, hidden too', { ownerId: pixelsmith, includeHidden: true }],
    ['owner nightjar', { ownerId: nightjar }],
    ['owner vera', { ownerId: veraId }],
    ['disabled owner wren, hidden too', { ownerId: wrenId, includeHidden: true }],
    ['member cobble_cat', { memberId: cobbleCat }],
    ['member emberfox (an owner)', { memberId: emberfox, includeHidden: true }],
    ['member lanternjack', { memberId: lanternjack }],
    ['resource textures >=1.21 Dark', { kinds: ['resource'], categories: ['textures'], releases: [releasesMatching('>=1.21')], tags: ['Dark'] }],
    ['data structures by deepslate_dan since the median', { kinds: ['data'], categories: ['structures'], ownerId: deepslate, updatedSince: median }],
    ['both kinds, textures or ui, Fonts, hidden too', { kinds: ['resource', 'data'], categories: ['textures', 'ui'], tags: ['Fonts'], includeHidden: true }],
    ['a tag nobody has', { tags: ['Mobs', 'No Such Tag'] }],
  ]
}

/** Text that is not one of the corpus' queries: one letter, typos, usernames, nothing, other scripts. */
const TEXTS = [
  'a', 'x', 'e 1', '1', '21', 'dargon', 'netherrite tols', 'encahntmint', 'pixelsmith', '@cobble_cat', 'cobble', 'cobble_cat bees',
  'nightjar', 'wren', 'qzxwvkj', 'xylophone zither', 'the', 'pack', 'olig', 'ÖLIG äpfel', 'σοφια', 'script', 'fullwidth', '漢字',
  'aardvark', 'eclairage', 'faithful', 'glow ore', 'vera', 'otto', '𞤢𞤣𞤤𞤢𞤥', 'ꞔꞔ', 'ꭰꭱ', 'ᏣᎳᎩ', 'adlam', '   ',
]

describe('the in-memory search copy and SQL', () => {
  test('answer every search alike: every corpus query and filter, every sort, three pages, counts and facets', async (t) => {
    const comparison = new Comparison(site, snapshot, windows)
    await comparison.readNames()
    assert.equal(await snapshot.current(site.app.db), true, 'the copy is current')
    const filters = await filterSets()
    // Every query of the corpus: alone, and with two of the filters in turn.
    const turn = (i: number) => filters[i % filters.length]!
    for (const [i, { query }] of QUERIES.entries()) {
      await comparison.search('corpus query', { q: query })
      for (const [label, filter] of [turn(i), turn(i + 17)]) await comparison.search(`corpus query, ${label}`, { q: query, ...filter })
    }
    // Every filter: with no text, a word in nearly every pack, two corpus queries and one of the texts in turn.
    for (const [i, [label, filter]] of filters.entries()) {
      await comparison.search(label, filter)
      await comparison.search(label, { q: 'pack', ...filter })
      await comparison.search(label, { q: QUERIES[(i * 7) % QUERIES.length]!.query, ...filter })
      await comparison.search(label, { q: QUERIES[(i * 7 + 3) % QUERIES.length]!.query, ...filter })
      await comparison.search(label, { q: TEXTS[i % TEXTS.length]!, ...filter })
    }
    // Every text: alone, with hidden packs too, and with a filter in turn.
    for (const [i, text] of TEXTS.entries()) {
      await comparison.search('text', { q: text })
      await comparison.search('text, hidden too', { q: text, includeHidden: true })
      const [label, filter] = turn(i * 5)
      await comparison.search(`text, ${label}`, { q: text, ...filter })
    }
    comparison.report(t, 'before any change')
    comparison.assertSame('before any change')
    const planned = 3 * QUERIES.length + 5 * filters.length + 3 * TEXTS.length
    assert.equal(comparison.made.searches + comparison.made.skipped, planned)
    assert.ok(comparison.made.skipped < filters.length, 'nearly every search can match something')
  })

  test('the copy follows every change, and a search over HTTP shows it at once', async (t) => {
    const db = site.app.db
    const comparison = new Comparison(site, snapshot, windows)
    await comparison.readNames()
    const pixelsmith = await userId('pixelsmith')
    const emberfox = await userId('emberfox')
    const mossy = await userId('mossy_mage')
    /** The copy's version when it was last compared: each change must move it (the searches over HTTP may have applied it). */
    let compared = snapshot.version
    /** Brings the copy up to the change (it must have applied something) and compares the searches that touch it. */
    const compareAfter = async (change: string, searches: PackSearch[]) => {
      assert.equal(await snapshot.current(db), true, `${change}: the copy is current`)
      assert.ok(snapshot.version > compared, `${change}: the copy applied the change`)
      compared = snapshot.version
      await comparison.readNames()
      for (const search of [...searches, {}, { includeHidden: true }]) await comparison.search(change, search)
    }

    // An edit of a title: its new word finds it, its old title still does (the pack id stays).
    const faithful = corpusPack('pixelsmith', 'Faithful 32x')
    await ok(site.app.inject({ method: 'PATCH', url: packUrl(faithful), headers: root.headers, payload: { revision: (await current(faithful)).revision, title: 'Faithful 32x Wombatastic' } }))
    assert.deepEqual(await listed({ q: 'wombatastic' }), [faithful.id])
    assert.deepEqual((await listed({ q: 'wombatastic faithful', sort: 'title' })), [faithful.id])
    await compareAfter('a title edited', [{ q: 'wombatastic' }, { q: 'faithful' }, { q: 'wombat' }, { ownerId: pixelsmith }])

    // One description rewritten again and again, each time in 500 words of its own: the copy keeps each pack's
    // words in shared pools, which fill and are compacted, and a gone word's number is given to a new one.
    const letters = (n: number) => { let s = ''; do { s = String.fromCharCode(97 + (n % 26)) + s; n = Math.floor(n / 26) } while (n > 0); return s }
    const rewritten = corpusPack('pixelsmith', 'Faithful 32x')
    for (let round = 0; round < 40; round++) {
      const words = Array.from({ length: 500 }, (_, k) => `quux${letters(round * 500 + k)}`)
      await ok(site.app.inject({ method: 'PATCH', url: packUrl(rewritten), headers: root.headers, payload: { revision: (await current(rewritten)).revision, description: words.join(' ') } }))
    }
    assert.deepEqual(await listed({ q: `quux${letters(39 * 500 + 7)}` }), [rewritten.id], 'the last description\'s words find it')
    assert.deepEqual(await listed({ q: `quux${letters(7)}` }), [], 'the first description\'s words are gone')
    await compareAfter('a description rewritten 40 times', [{ q: `quux${letters(39 * 500 + 3)}` }, { q: `quux${letters(3)}` }, { q: 'quux' }, { q: 'wombatastic' }, { ownerId: pixelsmith }])

    // Hidden by staff: gone for a visitor, still there for searches that include hidden packs.
    const glowing = corpusPack('pixelsmith', 'Glowing Ores')
    assert.ok((await listed({ q: 'glowing ores' })).includes(glowing.id))
    await hide(glowing)
    assert.ok(!(await listed({ q: 'glowing ores' })).includes(glowing.id), 'a hidden pack is no hit')
    await compareAfter('a pack hidden', [{ q: 'glowing ores' }, { q: 'glowing', includeHidden: true }, { ownerId: pixelsmith, includeHidden: true }, { tags: ['Emissive'] }])

    // Its owner disabled: the owner's packs are gone, and the owner's name finds nothing.
    const owl = corpusPack('nightjar', 'Owl Calls')
    assert.ok((await listed({ q: 'nightjar' })).includes(owl.id))
    await ok(post('/api/users/nightjar/disable/', root, { reason: 'tests' }))
    assert.deepEqual(await listed({ q: 'nightjar' }), [], 'a disabled owner\'s pack is no hit')
    assert.ok(!(await listed({ q: 'owl', sort: 'downloads' })).includes(owl.id))
    await compareAfter('an owner disabled', [{ q: 'owl' }, { q: 'nightjar' }, { q: 'owl', includeHidden: true }, { q: 'calls' }])

    // The only version yanked: no public version, no hit.
    const lairs = corpusPack('emberfox', 'Dragon Lairs')
    assert.ok((await listed({ q: 'dragon lairs' })).includes(lairs.id))
    await yankAll(lairs)
    assert.ok(!(await listed({ q: 'dragon lairs' })).includes(lairs.id), 'a pack with every version yanked is no hit')
    await compareAfter('the only version yanked', [{ q: 'dragon lairs' }, { q: 'drag' }, { memberId: emberfox, includeHidden: true }, { kinds: ['data'] }])

    // A tag added: found by the tag, counted in its facet.
    const bees = corpusPack('mossy_mage', 'Busy Bees')
    assert.ok(!(await listed({ tags: 'Horror' })).includes(bees.id))
    const beesNow = await current(bees)
    await ok(site.app.inject({ method: 'PATCH', url: packUrl(bees), headers: root.headers, payload: { revision: beesNow.revision, tags: [...beesNow.tags.map((tag) => tag.name), 'Horror'] } }))
    assert.ok((await listed({ tags: 'Horror' })).includes(bees.id), 'the new tag finds the pack')
    assert.ok((await listed({ q: 'horror bees' })).includes(bees.id))
    await compareAfter('a tag added', [{ tags: ['Horror'] }, { q: 'horror' }, { q: 'bees', tags: ['Horror'] }, { ownerId: mossy }])

    // A category changed and a version of other releases added: found by the new category and releases.
    const grass = corpusPack('pixelsmith', 'Better Grass')
    await ok(site.app.inject({ method: 'PATCH', url: packUrl(grass), headers: root.headers, payload: { revision: (await current(grass)).revision, category: 'worldgen' } }))
    const newer = multipart([
      { name: 'version_name', value: '2.0.0' },
      { name: 'file', value: await datapack(61), filename: 'better-grass-2.zip', contentType: 'application/zip' },
    ])
    const pixelsmithUser = corpus.users.get('pixelsmith')!
    await ok(site.app.inject({ method: 'POST', url: `${packUrl(grass)}versions/`, headers: { ...pixelsmithUser.headers, ...newer.headers }, payload: newer.payload }), 201)
    assert.ok((await listed({ q: 'grass', categories: 'worldgen', kind: 'data' })).includes(grass.id), 'the new category and kind find the pack')
    await compareAfter('a category changed and a version added', [{ q: 'grass' }, { categories: ['worldgen'] }, { kinds: ['data'], q: 'better' },
      { releases: [releasesMatching('>=1.21.2')] }, { kinds: ['resource', 'data'], categories: ['textures', 'worldgen'] }])

    // A pack deleted: gone from the copy too.
    const villages = corpusPack('emberfox', 'Cozy Villages')
    assert.ok((await listed({ q: 'cozy villages' })).includes(villages.id))
    await ok(site.app.inject({ method: 'DELETE', url: packUrl(villages), headers: root.headers }), 204)
    assert.ok(!(await listed({ q: 'cozy villages' })).includes(villages.id), 'a deleted pack is no hit')
    await compareAfter('a pack deleted', [{ q: 'cozy villages' }, { q: 'cozy vilages' }, { includeHidden: true, q: 'cozy' }, { tags: ['Villages'] }])

    // Downloads counted: the pack leads the downloads and trending orders.
    const sheep = corpusPack('mossy_mage', 'Rainbow Sheep')
    await download(sheep, 5)
    assert.equal((await listed({ sort: 'downloads', q: 'sheep' }))[0], sheep.id)
    assert.equal((await listed({ sort: 'trending' }))[0], sheep.id, 'the most downloaded pack this week leads trending')
    await compareAfter('downloads counted', [{ q: 'sheep' }, { ownerId: mossy }, { q: 'rainbow', includeHidden: true }])

    // An invitation accepted: the new member's name finds the pack, and it is among the member's packs.
    const lanterns = corpusPack('emberfox', 'Paper Lanterns')
    assert.ok(!(await listed({ q: 'lanternjack' })).includes(lanterns.id), 'an invitation alone does not')
    await ok(post(`${packUrl(lanterns)}team/accept/`, corpus.users.get('lanternjack')!))
    assert.ok((await listed({ q: 'lanternjack' })).includes(lanterns.id), 'a new member\'s name finds the pack')
    await compareAfter('an invitation accepted', [{ q: 'lanternjack' }, { memberId: await userId('lanternjack') }, { q: 'paper lanterns' }])

    // The disabled owner enabled again and the hidden pack shown again: both back for a visitor.
    const faithful64 = corpusPack('pixelsmith', 'Faithful 64x')
    assert.deepEqual(await listed({ q: 'nest boxes' }), [])
    assert.ok(!(await listed({ q: 'faithful' })).includes(faithful64.id))
    await ok(post('/api/users/wren/enable/', root, { reason: 'tests' }))
    await ok(post(`${packUrl(faithful64)}unhide/`, root, { reason: 'tests' }))
    assert.deepEqual(await listed({ q: 'nest boxes' }), ['wren:wren-nest-boxes'])
    assert.ok((await listed({ q: 'faithful' })).includes(faithful64.id))
    await compareAfter('an owner enabled and a pack unhidden', [{ q: 'nest boxes' }, { q: 'wren' }, { q: 'faithful' }, { tags: ['Building'] }])

    // A pack published after the delete: the copy reuses the place the deleted one left.
    const burrows = await publishPack(site, otto, { title: 'Cozy Burrows', summary: 'Burrows for rabbits, a pack.', category: 'structures', tags: ['Villages'] }, { archive: await datapack(48) })
    assert.ok((await listed({ q: 'cozy' })).includes(burrows.id))
    await compareAfter('a pack published', [{ q: 'cozy' }, { q: 'burrows' }, { tags: ['Villages'] }, { ownerId: await userId('otto') }])

    // The daily sweep moves the trending window past every download: trending counts none of them again.
    await moveTrendingWindow(db, new Date(Date.now() + 30 * 86_400_000).toISOString().slice(0, 10))
    // Every trending count is now 0 (row ids break the tie): the visitor's order is SQL's, whoever leads it.
    const everyListed = (await resolveSearch(db, {}))!
    const bySql = await searchPage(db, everyListed, 'trending', { limit: 50, offset: 0 })
    const named = new Map((await db.selectFrom('packs').select(['id', 'namespace', 'pack_id']).execute()).map((r) => [r.id, `${r.namespace}:${r.pack_id}`]))
    assert.deepEqual(await listed({ sort: 'trending' }), bySql.map((id) => named.get(id)))
    await compareAfter('the trending window moved', [{ q: 'sheep' }, { q: 'faithful' }])

    comparison.report(t, 'after the changes')
    comparison.assertSame('after the changes')
  })

  // An instance nobody searched on for over an hour: the sweep prunes changes it never read, and it must
  // notice (the log's first number is past its last) and read the index again, not answer from before them.
  test('a copy that missed changes pruned from the log does not answer from before them', async (t) => {
    const db = site.app.db
    const comparison = new Comparison(site, snapshot, windows)
    assert.equal(await snapshot.current(db), true, 'the copy is current')
    // A change no search reads before the sweep prunes it, then one after the sweep.
    const sheep = corpusPack('mossy_mage', 'Rainbow Sheep')
    await ok(site.app.inject({ method: 'PATCH', url: packUrl(sheep), headers: root.headers, payload: { revision: (await current(sheep)).revision, title: 'Rainbow Sheep Quasarine' } }))
    assert.ok(await pruneChanges(db, new Date(Date.now() + 1000).toISOString()) > 0, 'the sweep pruned the change')
    const gears = corpusPack('pixelsmith', 'Brass & Gears')
    await ok(site.app.inject({ method: 'PATCH', url: packUrl(gears), headers: root.headers, payload: { revision: (await current(gears)).revision, title: 'Brass & Gears Zeppelin' } }))
    // Loading again must end: the copy answers once it has (a bound, so that a copy that never does fails here
    // instead of holding the run up; not a measure of speed).
    const versionBefore = snapshot.version
    const loading = snapshot.loaded(db).then(() => true)
    const bound = new Promise<false>((resolve) => setTimeout(resolve, RELOAD_BOUND_MS, false).unref())
    assert.ok(await Promise.race([loading, bound]),
      `the copy is current again within ${RELOAD_BOUND_MS / 1000} s of the prune (its version went from ${versionBefore} to ${snapshot.version}: each reload moves it)`)
    await comparison.readNames()
    for (const search of [{ q: 'quasarine' }, { q: 'rainbow sheep' }, { q: 'zeppelin' }, { ownerId: await userId('mossy_mage') }, {}]) {
      await comparison.search('after a prune', search)
    }
    comparison.report(t, 'after a prune')
    assert.deepEqual(await listed({ q: 'zeppelin' }), [gears.id])
    assert.deepEqual(await listed({ q: 'quasarine' }), [sheep.id], 'the change pruned before the copy read it is seen')
    comparison.assertSame('after a prune')
  })
})
