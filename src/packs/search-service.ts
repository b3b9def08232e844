// Search: keeping each pack's index entry current, and answering a search
// with its hits, count and facet counts (docs/site.md#search). What a query
// matches, and how it is ranked, is in search-text.ts and search-repository.ts.
import type { Db } from '../db/index.js'
import { findUserRowByUsername } from '../accounts/users-repository.js'
import { BadRequest } from '../errors.js'
import { declarationOf } from '../files/repository.js'
import { RELEASES } from '../minecraft/formats.js'
import { describeDeclaration } from '../minecraft/releases.js'
import { loadPackSummaries, SEARCH_LIMIT, userIdsNamedBy, type PackSummaryRecord } from './repository.js'
import {
  anyTermStartsWith, categoryIdsByKeys, countHits, deletePackEntry, facetCounts, foldTrendingWindow, lockPackForIndex, packsWithoutEntry,
  readPackSource, searchPage, tagIdsByNames, termDocs, termsNear, writePackEntry,
  type FacetName, type PackDocument, type SearchQuery, type SearchSort, type WordMatch,
} from './search-repository.js'
import { searchSnapshotOf } from './search-memory.js'
import { editDistance, queryWords, typoBudget, words } from './search-text.js'

export type { SearchSort } from './search-repository.js'
export type PackKindName = 'resource' | 'data'

export interface PackSearch {
  q?: string | undefined
  /** Any of. */
  kinds?: PackKindName[] | undefined
  /** Each list any of (release names), the lists all of. */
  releases?: string[][] | undefined
  /** Category keys, any of. */
  categories?: string[] | undefined
  /** Tag names, all of. */
  tags?: string[] | undefined
  updatedSince?: string | undefined
  ownerId?: string | undefined
  memberId?: string | undefined
  includeHidden?: boolean | undefined
  /** relevance when there are words, else updated. */
  sort?: SearchSort | undefined
  facets?: boolean | undefined
}

export interface FacetOption {
  value: string
  count: number
}

export interface SearchFacets {
  kind: FacetOption[]
  mc: FacetOption[]
  categories: FacetOption[]
  tags: FacetOption[]
  updated: FacetOption[]
}

export interface SearchResult {
  items: PackSummaryRecord[]
  total: number
  capped: boolean
  facets?: SearchFacets
}

const KIND_BITS: Record<PackKindName, number> = { resource: 1, data: 2 }

/** Vocabulary words considered per query word for typos; the closest (then the most used) are kept. */
const TYPO_CANDIDATES = 2000
const TYPO_ALTERNATIVES = 8

/** "Updated within" options and their lengths in days. */
export const UPDATED_WITHIN = { week: 7, month: 30, year: 365 } as const
export type UpdatedWithin = keyof typeof UPDATED_WITHIN

// ---------------------------------------------------------------- the index

/**
 * Writes a pack's index entry from what it is now: its text (title, team,
 * tags, category, summary, description) and what its public versions are
 * (kinds, releases). Called in the transaction of every change to any of
 * these; a pack that is gone has nothing to write (its rows went with it).
 */
export async function reindexPack(db: Db, packRowId: string): Promise<void> {
  forgetFacetCounts()
  await lockPackForIndex(db, packRowId)
  const source = await readPackSource(db, packRowId)
  if (!source) return
  const document: PackDocument = {
    title: words(source.title).join(' '),
    names: [source.owner, ...source.members].flatMap(words).join(' '),
    tags: source.tags.flatMap(words).join(' '),
    category: source.categoryKey === null ? '' : [...words(source.categoryKey), ...words(source.categoryName ?? '')].join(' '),
    summary: words(source.summary).join(' '),
    description: words(source.description).join(' '),
  }
  let kinds = 0
  const releases = new Set<string>()
  for (const version of source.versions) {
    const declaration = declarationOf({ pack_kind: version.kind, min_format: version.min_format, min_format_minor: version.min_format_minor, max_format: version.max_format, max_format_minor: version.max_format_minor })
    if (declaration.kind) kinds |= KIND_BITS[declaration.kind]
    for (const release of describeDeclaration(declaration, version.pack_format).releases) releases.add(release)
  }
  const terms = [...new Set(Object.values(document).flatMap((text: string) => (text === '' ? [] : text.split(' '))))].sort()
  const oldTerms = source.terms ? source.terms.split(' ').filter(Boolean) : []
  await writePackEntry(db, packRowId, source.searchSeq, document, { publicVersions: source.versions.length, kinds, releases: [...releases] }, oldTerms, terms)
  // Again once written: the transaction commits soon after this, not after the first (SETTLE_MS).
  forgetFacetCounts()
}

/** Takes a pack out of the index in the transaction that deletes it: its words stop counting in the vocabulary. */
export async function unindexPack(db: Db, packRowId: string): Promise<void> {
  forgetFacetCounts()
  await lockPackForIndex(db, packRowId)
  await deletePackEntry(db, packRowId)
}

/** Indexes the packs that have no entry yet (a site moved in by import or restore), a page at a time; how many. */
export async function indexMissingPacks(db: Db): Promise<number> {
  let after = ''
  let done = 0
  for (;;) {
    const ids = await packsWithoutEntry(db, after, 100)
    for (const id of ids) await db.transaction().execute((trx) => reindexPack(trx, id))
    done += ids.length
    if (ids.length < 100) return done
    after = ids.at(-1)!
  }
}

/** Ends the trending window on `today` (YYYY-MM-DD): the last 7 days count, older ones are let go. */
export async function moveTrendingWindow(db: Db, today: string): Promise<number> {
  const first = new Date(`${today}T00:00:00Z`)
  first.setUTCDate(first.getUTCDate() - 6)
  return foldTrendingWindow(db, first.toISOString().slice(0, 10))
}

// ---------------------------------------------------------------- releases

/** Every release name, oldest first (both kinds' lists merged). */
const ALL_RELEASES: readonly string[] = [...new Set([...RELEASES.resource, ...RELEASES.data].map((r) => r.name))].sort(compareReleases)

/** Release names compared as numbers, part by part: 1.9 < 1.10 < 1.21 < 1.21.4 < 26.1. */
export function compareReleases(a: string, b: string): number {
  const pa = a.split('.').map(Number)
  const pb = b.split('.').map(Number)
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? -1) - (pb[i] ?? -1)
    if (d !== 0) return d
  }
  return 0
}

/** The releases Packs knows, newest first. */
export function knownReleases(): readonly string[] {
  return [...ALL_RELEASES].reverse()
}

/**
 * The releases a filter names: one release (`1.21.4`), or a range: `>=1.21`,
 * `>1.21`, `<=1.20.6`, `<1.21`, or `1.20.1..1.21.4` (both ends included).
 * The ends of a range need not be releases Packs knows (`>=1.21` is fine
 * where 1.21 is); a single release must be one.
 */
export function releasesMatching(spec: string): string[] {
  const text = spec.trim()
  const version = /^\d{1,3}(\.\d{1,3}){0,2}$/
  const check = (v: string) => {
    if (!version.test(v)) throw new BadRequest(`"${spec.slice(0, 40)}" is not a Minecraft release or range: write 1.21.4, >=1.21, <1.20, or 1.20.1..1.21.4`)
    return v
  }
  const range = /^(.*?)\.\.(.*)$/.exec(text)
  if (range) {
    const [low, high] = [check(range[1]!.trim()), check(range[2]!.trim())]
    return ALL_RELEASES.filter((r) => compareReleases(r, low) >= 0 && compareReleases(r, high) <= 0)
  }
  const op = /^(>=|<=|>|<|=)?\s*(.*)$/.exec(text)!
  const v = check(op[2]!)
  switch (op[1]) {
    case '>=': return ALL_RELEASES.filter((r) => compareReleases(r, v) >= 0)
    case '>': return ALL_RELEASES.filter((r) => compareReleases(r, v) > 0)
    case '<=': return ALL_RELEASES.filter((r) => compareReleases(r, v) <= 0)
    case '<': return ALL_RELEASES.filter((r) => compareReleases(r, v) < 0)
    default:
      if (!ALL_RELEASES.includes(v)) throw new BadRequest(`Minecraft ${v} is not a release Packs knows`)
      return [v]
  }
}

// ---------------------------------------------------------------- searching

/**
 * What answers a search's hits, count and facet counts: the in-memory copy of
 * the index when it is current (search-memory.ts), else SQL. Chosen once per
 * search, so that one search reads one state of the site.
 */
interface Answerer {
  page(query: SearchQuery, sort: SearchSort, page: { limit: number; offset: number }): Promise<readonly string[]>
  count(query: SearchQuery, cap: number): Promise<number>
  facets(query: SearchQuery, now: number): Promise<SearchFacets>
  /** Whether a listed pack has a word starting with `word` (listedPackHasWordStarting says why listed). */
  listedWordStarts(word: string): Promise<boolean>
  /** The words of the vocabulary near one (termsNear). */
  termsNear(word: string, budget: number, limit: number): Promise<ReadonlyArray<{ term: string; docs: number }>>
  /** The in-memory copy's version when it answers (each change it applies bumps it); undefined for SQL. */
  version: number | undefined
}

async function answererFor(db: Db): Promise<Answerer> {
  // A transaction's handle is not the site's: the copy belongs to the database handle the app holds.
  if (!db.isTransaction) {
    const snapshot = searchSnapshotOf(db)
    if (await snapshot.current(db)) {
      return {
        page: async (query, sort, page) => snapshot.page(query, sort, page),
        count: async (query, cap) => snapshot.count(query, cap),
        facets: async (query, now) => facetsFrom(snapshot.facets(query, windowsAt(now))),
        listedWordStarts: async (word) => snapshot.listedWordStarts(word),
        termsNear: async (word, budget, limit) => snapshot.termsNear(word, budget, limit),
        version: snapshot.version,
      }
    }
  }
  return sqlAnswerer(db)
}

function sqlAnswerer(db: Db): Answerer {
  return {
    page: (query, sort, page) => searchPage(db, query, sort, page),
    count: (query, cap) => countHits(db, query, cap),
    facets: (query, now) => cachedFacets(db, query, now),
    listedWordStarts: (word) => listedPackHasWordStarting(db, word),
    termsNear: (word, budget, limit) => termsNear(db, word, budget, limit),
    version: undefined,
  }
}

/**
 * Each query word's alternatives: the word as a prefix (a one-letter word
 * exactly: as a prefix it would match most of the site); and, when no word of
 * the vocabulary starts with it, the words within its typo budget
 * (search-text.ts), closest first, as Typesense does: a typo is looked for
 * only when the word as typed finds nothing. Rarer words weigh more.
 */
async function matchesOf(db: Db, answer: Answerer, q: string, typosForEveryWord = false): Promise<WordMatch[]> {
  const found: Array<{ prefix: string | null; exact: string[] }> = []
  for (const word of queryWords(q)) {
    if ([...word].length === 1) {
      found.push({ prefix: null, exact: [word] })
      continue
    }
    const exact: string[] = []
    const budget = typoBudget(word)
    if (budget > 0 && (typosForEveryWord || !(await answer.listedWordStarts(word)))) {
      // A word is also near a longer one whose start it is, give or take its typos ("dargon" and "dragons"), as it
      // would be once the person typed on: the distance to the term's first letters counts as well.
      const length = [...word].length
      const near = (await answer.termsNear(word, budget, TYPO_CANDIDATES))
        .map((candidate) => ({
          ...candidate,
          distance: Math.min(editDistance(word, candidate.term, budget), editDistance(word, [...candidate.term].slice(0, length).join(''), budget)),
        }))
        .filter((candidate) => candidate.distance <= budget)
        .sort((a, b) => a.distance - b.distance || b.docs - a.docs || (a.term < b.term ? -1 : 1))
      exact.push(...near.slice(0, TYPO_ALTERNATIVES).map((candidate) => candidate.term))
    }
    found.push({ prefix: word, exact })
  }
  const { packs, docs } = await termDocs(db, found.flatMap((w) => [...(w.prefix ? [w.prefix] : []), ...w.exact]))
  return found.map((w) => {
    const counts = [...(w.prefix ? [w.prefix] : []), ...w.exact].map((t) => docs.get(t)).filter((n): n is number => n !== undefined)
    const used = counts.length === 0 ? 1 : Math.max(...counts)
    // Inverse document frequency, as BM25 has it (never below a small floor: a word in every pack still counts a little).
    // (The vocabulary counts hidden packs too, the site's count only listed ones: never fewer packs than users of a word.)
    const all = Math.max(packs, used)
    const weight = Math.max(0.05, Math.log(1 + (all - used + 0.5) / (used + 0.5)))
    return { ...w, weight: Math.round(weight * 1000) }
  })
}

/**
 * Whether a listed pack has a word starting with `word`. The vocabulary holds
 * the words of every indexed pack, hidden ones too, so a word found there is
 * checked against listed packs: a word only a hidden pack, a disabled
 * account's or one with every version yanked starts with must not keep a
 * typo from finding a listed pack (those packs never show, not even this way).
 */
async function listedPackHasWordStarting(db: Db, word: string): Promise<boolean> {
  if (!(await anyTermStartsWith(db, word))) return false
  return (await countHits(db, { words: [{ prefix: word, exact: [], weight: 1 }], includeHidden: false }, 0)) > 0
}

/**
 * A search as the index is asked it (words with their alternatives and weights, ids for names), resolved by
 * SQL alone; null when a name in it matches nothing. For comparing the in-memory copy with SQL.
 */
export async function resolveSearch(db: Db, search: PackSearch): Promise<SearchQuery | null> {
  return resolve(db, sqlAnswerer(db), search)
}

/** The search as plain values; null when a name in it matches nothing (no pack can match). */
async function resolve(db: Db, answer: Answerer, search: PackSearch): Promise<SearchQuery | null> {
  const query = await resolveWith(db, answer, search, false)
  // Every word was found as typed, but not all of them in one pack ("villager trades" where the pack says
  // "trade"): the words are looked up again with their typos, as Typesense does when a search finds nothing.
  if (query && query.words.some((w) => w.prefix !== null && w.exact.length === 0 && typoBudget(w.prefix) > 0)
    && (await answer.count(query, 0)) === 0) {
    return resolveWith(db, answer, search, true)
  }
  return query
}

async function resolveWith(db: Db, answer: Answerer, search: PackSearch, typosForEveryWord: boolean): Promise<SearchQuery | null> {
  const words = search.q ? await matchesOf(db, answer, search.q, typosForEveryWord) : []
  const query: SearchQuery = {
    words,
    // The text may also be a username, or its start ("bob", "@bob"): those people's packs match as well.
    namedUserIds: words.length > 0 ? await userIdsNamedBy(db, search.q!) : undefined,
    includeHidden: search.includeHidden === true,
    ownerId: search.ownerId,
    memberId: search.memberId,
    kinds: search.kinds?.map((kind) => KIND_BITS[kind]),
    releases: search.releases,
    updatedSince: search.updatedSince,
  }
  if (search.categories !== undefined) query.categoryIds = await categoryIdsByKeys(db, search.categories.map((c) => c.toLowerCase()))
  if (search.tags !== undefined && search.tags.length > 0) {
    const ids = await tagIdsByNames(db, search.tags)
    // A tag nobody has carried: no pack has all of the tags.
    if (ids.size < new Set(search.tags.map((t) => t.toLowerCase())).size) return null
    query.tagIds = [...ids.values()]
  }
  return query
}

function emptyFacets(): SearchFacets {
  return { kind: [], mc: [], categories: [], tags: [], updated: [] }
}

/**
 * One page of hits for a search, how many there are (counted up to
 * SEARCH_LIMIT, as the listing does), and, when asked, each facet's options
 * with how many packs each would leave.
 */
export async function searchPacks(db: Db, search: PackSearch, page: { limit: number; offset: number }, now: number = Date.now()): Promise<SearchResult> {
  const answer = await answererFor(db)
  const query = await resolve(db, answer, search)
  if (!query) return { items: [], total: 0, capped: false, ...(search.facets ? { facets: emptyFacets() } : {}) }
  const sort: SearchSort = search.sort ?? (query.words.length > 0 ? 'relevance' : 'updated')
  const limit = Math.max(0, Math.min(page.limit, SEARCH_LIMIT - page.offset))
  const [n, ids, facets] = await Promise.all([
    answer.count(query, SEARCH_LIMIT),
    limit > 0 ? answer.page(query, sort, { limit, offset: page.offset }) : Promise.resolve([]),
    search.facets ? answer.facets(query, now) : Promise.resolve(undefined),
  ])
  const items = await summariesOf(db, ids, answer.version)
  return { items, total: Math.min(n, SEARCH_LIMIT), capped: n > SEARCH_LIMIT, ...(facets ? { facets } : {}) }
}

/**
 * Facet counts, kept for FACET_TTL_MS per search (its words and filters,
 * whatever the page or sort): counting every option over a large site's
 * matches takes far longer than a page of hits, and the same counts serve
 * every page and sort of one search. At most FACET_ENTRIES searches are kept,
 * the least recently used going first. A change made by this process
 * (forgetFacetCounts) retires them at once; another instance's change shows
 * within the TTL. Per database: a test's sites never share counts.
 */
const FACET_TTL_MS = 30_000
const FACET_ENTRIES = 500
const facetCache = new WeakMap<Db, Map<string, { at: number; facets: Promise<SearchFacets> }>>()
/** Bumped by every change this process makes to what search sees: counts taken before it are not used. */
let generation = 0
/**
 * How long after a change counts may still read the site from before it: an
 * index entry is written (and the counts forgotten) inside the change's
 * transaction, which commits a moment later, so a count taken in between sees
 * the old rows. Counts begun this soon after a change serve their own search
 * and are not kept.
 */
const SETTLE_MS = 2_000
let changedAt = Number.NEGATIVE_INFINITY

/**
 * The packs a search shows, as its page lists them, kept for SUMMARY_TTL_MS: the same packs come back on
 * page after page of searches, and reading them (three queries) cost more than finding them. Only while the
 * in-memory copy answers, and only from one version of it: any change it reads from the log (any instance's:
 * a pack edited, published to, hidden, its downloads) retires them all, as does any change this process
 * makes (forgetFacetCounts). What neither sees (a category's colour, an owner renamed on another instance)
 * shows within the TTL, as listings elsewhere do (docs/site.md#search-and-browse).
 */
const SUMMARY_TTL_MS = 1_000
const SUMMARY_ENTRIES = 5_000
const summaryCache = new WeakMap<Db, Map<string, { at: number; generation: number; version: number; record: PackSummaryRecord }>>()

async function summariesOf(db: Db, ids: readonly string[], version: number | undefined): Promise<PackSummaryRecord[]> {
  if (version === undefined) return loadPackSummaries(db, ids)
  let cache = summaryCache.get(db)
  if (!cache) summaryCache.set(db, (cache = new Map()))
  const now = Date.now()
  const kept = new Map<string, PackSummaryRecord>()
  const missing: string[] = []
  for (const id of ids) {
    const hit = cache.get(id)
    if (hit && hit.version === version && hit.generation === generation && now - hit.at < SUMMARY_TTL_MS && now >= hit.at) kept.set(id, hit.record)
    else missing.push(id)
  }
  if (missing.length > 0) {
    const seenGeneration = generation
    const read = await loadPackSummaries(db, missing)
    // A change of this process may still be committing: what was read may be the rows before it.
    const keep = seenGeneration === generation && Date.now() - changedAt >= SETTLE_MS
    for (const record of read) {
      kept.set(record.id, record)
      if (!keep) continue
      cache.delete(record.id)
      cache.set(record.id, { at: now, generation: seenGeneration, version, record })
    }
    while (cache.size > SUMMARY_ENTRIES) cache.delete(cache.keys().next().value!)
  }
  return ids.flatMap((id) => kept.get(id) ?? [])
}

/**
 * What the listings are a picture of, as a key for pages kept whole (src/pages/browse.ts): the in-memory copy's
 * version (moved by every change it reads from the log, any instance's: a pack published, edited, hidden, its
 * downloads counted) and this process's changes (forgetFacetCounts), once the copy is current. Undefined when
 * nothing may be kept: while SQL answers (the copy loading), or while a change of this process may still be
 * committing (SETTLE_MS), when what is read may be the rows from before it.
 */
export async function listingVersion(db: Db): Promise<string | undefined> {
  if (db.isTransaction) return undefined
  const now = Date.now()
  if (now - changedAt < SETTLE_MS) return undefined
  // The log is read again at most every LOG_LOOK_MS for this: a kept page costs no query, and another
  // instance's change still shows within a fraction of a second (this process's own at once, by generation).
  const memo = listingMemo.get(db)
  if (memo && memo.generation === generation && now - memo.at < LOG_LOOK_MS && now >= memo.at) return memo.version
  const snapshot = searchSnapshotOf(db)
  if (!(await snapshot.current(db))) return undefined
  const version = `${snapshot.version}.${generation}`
  listingMemo.set(db, { at: now, generation, version })
  return version
}
/** How often listingVersion reads the search log (another instance's changes), at most. */
const LOG_LOOK_MS = 200
const listingMemo = new WeakMap<Db, { at: number; generation: number; version: string }>()

/** Counts kept so far describe a site that changed (an index entry written, a pack hidden, an account disabled). */
export function forgetFacetCounts(): void {
  generation++
  changedAt = Date.now()
}

function cachedFacets(db: Db, query: SearchQuery, now: number): Promise<SearchFacets> {
  let cache = facetCache.get(db)
  if (!cache) facetCache.set(db, (cache = new Map()))
  const key = `${generation} ${JSON.stringify(query)}`
  const hit = cache.get(key)
  cache.delete(key)
  if (hit && now - hit.at < FACET_TTL_MS && now >= hit.at) {
    cache.set(key, hit)
    return hit.facets
  }
  const facets = facetsOf(db, query, now)
  // A change may still be committing: these counts may be of the rows before it.
  if (Date.now() - changedAt < SETTLE_MS) return facets
  const entry = { at: now, facets }
  cache.set(key, entry)
  // A failed count is not kept.
  facets.catch(() => { if (cache.get(key) === entry) cache.delete(key) })
  while (cache.size > FACET_ENTRIES) cache.delete(cache.keys().next().value!)
  return facets
}

async function facetsOf(db: Db, query: SearchQuery, now: number): Promise<SearchFacets> {
  const windows = windowsAt(now)
  const names: FacetName[] = ['kind', 'mc', 'categories', 'tags', 'updated']
  const counted = await Promise.all(names.map((name) => facetCounts(db, query, name, windows)))
  return facetsFrom(Object.fromEntries(names.map((name, i) => [name, counted[i]!])) as Record<FacetName, FacetOption[]>)
}

/** Where each "updated within" window starts, seen at `now`. */
function windowsAt(now: number): Record<string, string> {
  return Object.fromEntries(Object.entries(UPDATED_WITHIN).map(([name, days]) => [name, new Date(now - days * 86_400_000).toISOString()]))
}

/** Every facet's options with a count, in the order the page shows them. */
function facetsFrom(counted: Readonly<Record<FacetName, FacetOption[]>>): SearchFacets {
  const facets: SearchFacets = { ...counted }
  facets.mc = facets.mc.filter((o) => o.count > 0).sort((a, b) => compareReleases(b.value, a.value))
  facets.categories = facets.categories.filter((o) => o.count > 0).sort((a, b) => b.count - a.count || (a.value < b.value ? -1 : 1))
  return facets
}

/** A search as the listing's query names it: people by username, a page number. */
export interface SearchRequest extends Omit<PackSearch, 'ownerId' | 'memberId'> {
  owner?: string | undefined
  member?: string | undefined
}

/** One page (counting from 1) of a search whose people are named by username; an unknown name matches nothing. */
export async function searchPackPage(db: Db, request: SearchRequest, page: number, perPage: number): Promise<SearchResult> {
  const { owner, member, ...search } = request
  const none: SearchResult = { items: [], total: 0, capped: false, ...(search.facets ? { facets: emptyFacets() } : {}) }
  const resolved: PackSearch = { ...search }
  for (const [name, field] of [[owner, 'ownerId'], [member, 'memberId']] as const) {
    if (name === undefined) continue
    const user = await findUserRowByUsername(db, name)
    if (!user) return none
    resolved[field] = user.id
  }
  return searchPacks(db, resolved, { limit: perPage, offset: (page - 1) * perPage })
}
