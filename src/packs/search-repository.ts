// The SQL of search (migration 0010; src/packs/search-service.ts decides what
// to ask): writing a pack's entry in the index, the vocabulary that typo
// tolerance reads, and the queries for hits, counts and facet counts. The
// text match is the engine's own: an FTS5 MATCH with bm25() on SQLite, a
// tsvector @@ tsquery with ts_rank() on PostgreSQL; every other condition is
// the same SQL on both.
import { sql, type RawBuilder } from 'kysely'
import { engineOf, type Db, type Engine } from '../db/index.js'

/** A pack's searchable text, already reduced to words (search-text.ts), one string per field. */
export interface PackDocument {
  title: string
  names: string
  tags: string
  category: string
  summary: string
  description: string
}

/** What the filters read from a pack's public versions. */
export interface PackFacts {
  publicVersions: number
  /** Bit 1 resource, bit 2 data. */
  kinds: number
  releases: readonly string[]
}


// ---------------------------------------------------------------- reading what a pack's entry is made of

export interface PackSource {
  searchSeq: number | null
  title: string
  summary: string
  description: string
  categoryKey: string | null
  categoryName: string | null
  owner: string
  members: string[]
  tags: string[]
  versions: Array<{ kind: string | null; min_format: number | null; min_format_minor: number | null; max_format: number | null; max_format_minor: number | null; pack_format: number | null }>
  terms: string | null
}

/**
 * Takes the pack's row lock (PostgreSQL; SQLite runs one transaction at a
 * time) before its entry is read and written: two changes of one pack at once
 * (two members accepting, an edit) then index it one after the other, the
 * second from what the first committed, instead of each from the words before
 * both, losing one's change and counting a word twice in the vocabulary. NO
 * KEY: rows that merely refer to the pack (a download's daily count) are not
 * held up. Taken before the entry's row, as every writer of a pack does.
 */
export async function lockPackForIndex(db: Db, packRowId: string): Promise<void> {
  if (engineOf(db) === 'postgres') await sql`select id from packs where id = ${packRowId} for no key update`.execute(db)
}

/** Everything a pack's index entry is made of; undefined when the pack is gone. */
export async function readPackSource(db: Db, packRowId: string): Promise<PackSource | undefined> {
  const pack = await db.selectFrom('packs')
    .innerJoin('users', 'users.id', 'packs.owner_id')
    .leftJoin('categories', 'categories.id', 'packs.category_id')
    .leftJoin('pack_search', 'pack_search.pack_row_id', 'packs.id')
    .select(['packs.search_seq', 'packs.title', 'packs.summary', 'packs.description', 'categories.key as category_key',
      'categories.name as category_name', 'users.username as owner', 'pack_search.terms'])
    .where('packs.id', '=', packRowId)
    .executeTakeFirst()
  if (!pack) return undefined
  const [members, tags, versions] = await Promise.all([
    db.selectFrom('pack_members').innerJoin('users', 'users.id', 'pack_members.user_id').select('users.username')
      .where('pack_members.pack_row_id', '=', packRowId).where('pack_members.accepted_at', 'is not', null).execute(),
    db.selectFrom('pack_tags').innerJoin('tags', 'tags.id', 'pack_tags.tag_id').select('tags.name')
      .where('pack_tags.pack_id', '=', packRowId).execute(),
    db.selectFrom('versions').innerJoin('files', 'files.id', 'versions.file_id')
      .select(['files.pack_kind as kind', 'files.min_format', 'files.min_format_minor', 'files.max_format', 'files.max_format_minor', 'versions.pack_format'])
      .where('versions.pack_id', '=', packRowId).where('versions.yanked_at', 'is', null).execute(),
  ])
  return {
    searchSeq: pack.search_seq === null ? null : Number(pack.search_seq),
    title: pack.title,
    summary: pack.summary,
    description: pack.description,
    categoryKey: pack.category_key,
    categoryName: pack.category_name,
    owner: pack.owner,
    members: members.map((m) => m.username),
    tags: tags.map((t) => t.name),
    versions,
    terms: pack.terms ?? null,
  }
}

// ---------------------------------------------------------------- writing a pack's entry

/**
 * Writes a pack's entry: its document, its facts and its releases, and moves
 * the vocabulary's counts from the old words to the new. Run in the
 * transaction of the change that made it necessary.
 */
export async function writePackEntry(db: Db, packRowId: string, searchSeq: number | null, document: PackDocument, facts: PackFacts,
  oldTerms: readonly string[], newTerms: readonly string[]): Promise<void> {
  const engine = engineOf(db)
  const padded = (text: string) => (text === '' ? '' : ` ${text} `)
  const fields = {
    public_versions: facts.publicVersions, kinds: facts.kinds, terms: newTerms.join(' '),
    title_words: padded(document.title), names_words: padded(document.names), tags_words: padded(document.tags),
    category_words: padded(document.category), summary_words: padded(document.summary), description_words: padded(document.description),
  }
  // A new entry starts from the downloads already counted per day (a site moved in by import carries them):
  // trending is otherwise kept up to date as downloads are counted, and not rewritten here.
  const trending = sql<number>`(select coalesce(sum(downloads), 0) from pack_daily_downloads where pack_row_id = ${packRowId})`
  await db.insertInto('pack_search').values({ pack_row_id: packRowId, ...fields, trending })
    .onConflict((oc) => oc.column('pack_row_id').doUpdateSet(fields))
    .execute()
  if (engine === 'postgres') {
    const weighted = (text: string, weight: string) => sql`setweight(to_tsvector('simple', ${text}), ${sql.lit(weight)})`
    await sql`update pack_search set document =
      ${weighted(document.title, 'A')} || ${weighted(`${document.names} ${document.tags}`, 'B')}
      || ${weighted(`${document.category} ${document.summary}`, 'C')} || ${weighted(document.description, 'D')}
      where pack_row_id = ${packRowId}`.execute(db)
  } else if (searchSeq !== null) {
    await sql`delete from pack_text where rowid = ${searchSeq}`.execute(db)
    await sql`insert into pack_text (rowid, title, names, tags, category, summary, description)
      values (${searchSeq}, ${document.title}, ${document.names}, ${document.tags}, ${document.category}, ${document.summary}, ${document.description})`.execute(db)
  }
  await db.deleteFrom('pack_releases').where('pack_row_id', '=', packRowId).execute()
  if (facts.releases.length > 0) {
    await db.insertInto('pack_releases').values(facts.releases.map((release) => ({ pack_row_id: packRowId, release }))).execute()
  }
  await moveTermCounts(db, oldTerms, newTerms)
}

/**
 * The vocabulary's counts, from a document's old words to its new ones: one
 * pass over the words added (+1) and gone (-1) together, in sorted order, as
 * upserts. Two transactions that change the same words then take their row
 * locks in the same order (PostgreSQL) and cannot deadlock; added words first
 * and gone words after would not do: one edit that adds what another takes
 * away locks the two sets in opposite orders. The rows that reach 0 are
 * removed last (this transaction holds their locks already).
 */
async function moveTermCounts(db: Db, oldTerms: readonly string[], newTerms: readonly string[]): Promise<void> {
  const before = new Set(oldTerms)
  const after = new Set(newTerms)
  const changes = [
    ...[...after].filter((t) => !before.has(t)).map((term) => ({ term, docs: 1 })),
    ...[...before].filter((t) => !after.has(t)).map((term) => ({ term, docs: -1 })),
  ].sort((a, b) => (a.term < b.term ? -1 : a.term > b.term ? 1 : 0))
  for (const chunk of chunks(changes, 200)) {
    await db.insertInto('search_terms').values(chunk)
      .onConflict((oc) => oc.column('term').doUpdateSet({ docs: sql`search_terms.docs + excluded.docs` }))
      .execute()
  }
  const gone = changes.filter((c) => c.docs < 0).map((c) => c.term)
  for (const chunk of chunks(gone, 200)) {
    await db.deleteFrom('search_terms').where('term', 'in', chunk).where('docs', '<=', 0).execute()
  }
}

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = []
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size))
  return out
}

/**
 * Takes a pack's entry out of the index before the pack is deleted, its words
 * out of the vocabulary's counts (the foreign keys would remove the rows, but
 * not the counts). The delete takes the entry's row lock and reads the words
 * as they are then, so an index write of the same pack committed meanwhile is
 * the one taken back.
 */
export async function deletePackEntry(db: Db, packRowId: string): Promise<void> {
  const entry = await db.deleteFrom('pack_search').where('pack_row_id', '=', packRowId).returning('terms').executeTakeFirst()
  if (entry) await moveTermCounts(db, entry.terms.split(' ').filter(Boolean), [])
}

/** Packs not in the index yet (a site moved in by import or restore), after `after` in row id order. */
export async function packsWithoutEntry(db: Db, after: string, limit: number): Promise<string[]> {
  const rows = await db.selectFrom('packs').leftJoin('pack_search', 'pack_search.pack_row_id', 'packs.id')
    .select('packs.id').where('pack_search.pack_row_id', 'is', null).where('packs.id', '>', after)
    .orderBy('packs.id').limit(limit).execute()
  return rows.map((r) => r.id)
}

// ---------------------------------------------------------------- the vocabulary

/** Whether any word of the vocabulary starts with `prefix`. */
export async function anyTermStartsWith(db: Db, prefix: string): Promise<boolean> {
  const row = await db.selectFrom('search_terms').select('term')
    .where('term', '>=', prefix).where('term', '<', `${prefix}\u{10FFFF}`).limit(1).executeTakeFirst()
  return row !== undefined
}

/** Letters a word may start with, for the words near one whose first letter is wrong (other scripts: only as typed). */
export const FIRST_LETTERS = 'abcdefghijklmnopqrstuvwxyz0123456789'

/**
 * Words of the vocabulary that may lie within `budget` edits of `word`: those
 * starting with its first letter, or its second (a first letter dropped, or
 * the first two swapped), or with any letter then its second (the first
 * letter wrong), of a length `budget` away at most; with how many packs use
 * each. Each is a range of the vocabulary's key. The caller measures the edit
 * distance.
 */
export async function termsNear(db: Db, word: string, budget: number, limit: number): Promise<Array<{ term: string; docs: number }>> {
  const letters = [...word]
  // The first letter wrong as well ("kontraptions"): every word whose second letter is the query's.
  const second = letters[1]
  const starts = [...new Set([...letters.slice(0, 2), ...(second === undefined ? [] : [...FIRST_LETTERS].map((first) => `${first}${second}`))])]
  const min = letters.length - budget
  const max = letters.length + budget
  const rows = await db.selectFrom('search_terms').select(['term', 'docs'])
    .where((eb) => eb.or(starts.map((start) => eb.and([eb('term', '>=', start), eb('term', '<', `${start}\u{10FFFF}`)]))))
    .where(sql<boolean>`length(term) between ${min} and ${max}`)
    .orderBy('docs', 'desc').orderBy('term').limit(limit).execute()
  return rows.map((r) => ({ term: r.term, docs: Number(r.docs) }))
}

/** How many packs are listed, and how many use each of `terms`: what a word's rarity is measured against. */
export async function termDocs(db: Db, terms: readonly string[]): Promise<{ packs: number; docs: Map<string, number> }> {
  // The listed packs from pack_counts (one row, kept by triggers): counting the index walked all of it, every search.
  const [count, rows] = await Promise.all([
    db.selectFrom('pack_counts').select('listed').where('scope', '=', '*').executeTakeFirst(),
    terms.length === 0 ? [] : db.selectFrom('search_terms').select(['term', 'docs']).where('term', 'in', [...terms]).execute(),
  ])
  return { packs: Number(count?.listed ?? 0), docs: new Map(rows.map((r) => [r.term, Number(r.docs)])) }
}

// ---------------------------------------------------------------- the query

/** One query word's alternatives: the word as a prefix (or exactly, for one letter), and words near it. */
export interface WordMatch {
  prefix: string | null
  exact: string[]
  /** How much a match of this word counts toward a pack's rank (rarer words more): a whole number, so both engines add alike. */
  weight: number
}

/** What a search asks, as plain values (the service resolves names to ids first). */
export interface SearchQuery {
  words: WordMatch[]
  /** Hidden packs, disabled owners' packs and packs with no public version too (an owner's own profile, staff). */
  includeHidden: boolean
  ownerId?: string | undefined
  memberId?: string | undefined
  /** Kind bits (1 resource, 2 data), any of. */
  kinds?: number[] | undefined
  /** Release names: each list any of, the lists all of. */
  releases?: string[][] | undefined
  /** Category ids, any of. */
  categoryIds?: string[] | undefined
  /** Tag ids, all of. */
  tagIds?: string[] | undefined
  updatedSince?: string | undefined
  /**
   * Accounts the search's text names (src/packs/repository.ts userIdsNamedBy): the packs they own or are in
   * the team of (accepted) match too, besides those the words match.
   */
  namedUserIds?: string[] | undefined
}

/** A search's conditions, each a piece of SQL over `packs` and `pack_search`, by the facet it belongs to. */
interface SearchConditions {
  words: WordMatch[]
  /** Accounts whose packs match besides the words' (only when there are words). */
  named: readonly string[]
  /** Conditions that are not a facet (visibility, owner, member). */
  always: RawBuilder<boolean>[]
  kind?: RawBuilder<boolean> | undefined
  mc?: RawBuilder<boolean> | undefined
  categories?: RawBuilder<boolean> | undefined
  tags?: RawBuilder<boolean> | undefined
  updated?: RawBuilder<boolean> | undefined
}

const NOTHING = sql<boolean>`1 = 0`

function conditionsOf(query: SearchQuery): SearchConditions {
  const always: RawBuilder<boolean>[] = []
  if (!query.includeHidden) always.push(LISTED_WITH_VERSIONS)
  if (query.ownerId !== undefined) always.push(sql<boolean>`packs.owner_id = ${query.ownerId}`)
  if (query.memberId !== undefined) {
    // Owned, or in the team (accepted): by the packs_owner and pack_members_user indexes.
    always.push(sql<boolean>`(packs.owner_id = ${query.memberId} or packs.id in (select pack_row_id from pack_members
      where user_id = ${query.memberId} and accepted_at is not null))`)
  }
  const conditions: SearchConditions = { words: query.words, named: query.words.length > 0 ? query.namedUserIds ?? [] : [], always }
  if (query.kinds !== undefined) {
    conditions.kind = query.kinds.length === 0 ? NOTHING
      : sql<boolean>`(${sql.join(query.kinds.map((bit) => sql`(pack_search.kinds & ${sql.lit(bit)}) = ${sql.lit(bit)}`), sql` or `)})`
  }
  if (query.releases !== undefined) {
    conditions.mc = query.releases.some((group) => group.length === 0) ? NOTHING
      : sql<boolean>`${sql.join(query.releases.map((group) => sql`packs.id in (select pack_row_id from pack_releases where release in (${sql.join(group)}))`), sql` and `)}`
  }
  if (query.categoryIds !== undefined) {
    conditions.categories = query.categoryIds.length === 0 ? NOTHING : sql<boolean>`packs.category_id in (${sql.join(query.categoryIds)})`
  }
  if (query.tagIds !== undefined && query.tagIds.length > 0) {
    conditions.tags = sql<boolean>`${sql.join(query.tagIds.map((id) => sql`packs.id in (select pack_id from pack_tags where tag_id = ${id})`), sql` and `)}`
  }
  if (query.updatedSince !== undefined) conditions.updated = sql<boolean>`packs.updated_at >= ${query.updatedSince}`
  return conditions
}

export type FacetName = 'kind' | 'mc' | 'categories' | 'tags' | 'updated'
export type SearchSort = 'relevance' | 'downloads' | 'trending' | 'created' | 'updated' | 'title'

/** Listed: not hidden, owner not disabled, at least one public version. Literal, as the partial indexes of migration 0007 are. */
const LISTED_WITH_VERSIONS = sql<boolean>`packs.hidden_at is null and packs.owner_disabled = 0 and pack_search.public_versions > 0`

function ftsExpression(words: readonly WordMatch[]): string {
  return words.map((w) => {
    const alternatives = [...(w.prefix !== null ? [`"${w.prefix}"*`] : []), ...w.exact.map((t) => `"${t}"`)]
    return `(${alternatives.join(' OR ')})`
  }).join(' AND ')
}

function tsquery(words: readonly WordMatch[]): string {
  return words.map((w) => `(${[...(w.prefix !== null ? [`'${w.prefix}':*`] : []), ...w.exact.map((t) => `'${t}'`)].join(' | ')})`).join(' & ')
}

/**
 * The FROM of a search: packs with their index entry, and the text table when there are words (SQLite), unless
 * the text also names people: then the words' matches are one part of the set textCondition looks packs up by.
 */
function source(engine: Engine, words: readonly WordMatch[], sort?: SearchSort, named: readonly string[] = []): RawBuilder<unknown> {
  if (words.length > 0 && engine === 'sqlite') {
    return named.length > 0
      ? sql`packs join pack_search on pack_search.pack_row_id = packs.id`
      : sql`pack_text join packs on packs.search_seq = pack_text.rowid join pack_search on pack_search.pack_row_id = packs.id`
  }
  // Trending without words: walked down pack_search's trending index, each pack looked up, rather than every
  // listed pack read and sorted. SQLite's CROSS JOIN keeps that order of the tables; PostgreSQL plans it alone.
  if (sort === 'trending' && engine === 'sqlite') return sql`pack_search cross join packs on packs.id = pack_search.pack_row_id`
  return sql`packs join pack_search on pack_search.pack_row_id = packs.id`
}

/**
 * The words' condition; with people named, the packs the words match or those people make, each part read
 * by its own index (the text index; packs_owner; pack_members_user) and never the listing scanned:
 * - SQLite: one set of search_seq (the text table's own key) that the packs are looked up by. FTS5 takes no
 *   MATCH under an OR. UNION ALL: IN keeps each pack once without sorting every part first.
 * - PostgreSQL: an OR of the text index and the primary key of pack_search, which it combines (BitmapOr) and
 *   joins to packs as it does the words alone; the packs the people make are read once, before (an InitPlan).
 *   A set of ids joined to packs instead read all of pack_search (madeBy says why) or looked up every match.
 */
function textCondition(engine: Engine, words: readonly WordMatch[], named: readonly string[] = []): RawBuilder<boolean> | undefined {
  if (words.length === 0) return undefined
  if (named.length === 0) {
    return engine === 'sqlite'
      ? sql<boolean>`pack_text match ${ftsExpression(words)}`
      : sql<boolean>`pack_search.document @@ to_tsquery('simple', ${tsquery(words)})`
  }
  return engine === 'sqlite'
    ? sql<boolean>`packs.search_seq in (select rowid from pack_text where pack_text match ${ftsExpression(words)} union all ${madeBy(engine, named)})`
    : sql<boolean>`(pack_search.document @@ to_tsquery('simple', ${tsquery(words)}) or pack_search.pack_row_id = any(array(${madeBy(engine, named)})))`
}

/**
 * The packs that `named` own or are accepted members of (a pack may come twice), by packs_owner and
 * pack_members_user: their search_seq on SQLite; on PostgreSQL their id (every key in code point order,
 * collate "C", as an index serves only a comparison in its own collation).
 */
function madeBy(engine: Engine, named: readonly string[]): RawBuilder<unknown> {
  const ids = sql.join([...named])
  return engine === 'sqlite'
    ? sql`select owned.search_seq from packs as owned where owned.owner_id in (${ids})
      union all select in_team.search_seq from pack_members as team join packs as in_team on in_team.id = team.pack_row_id
      where team.user_id in (${ids}) and team.accepted_at is not null`
    : sql`select owned.id from packs as owned where owned.owner_id in (${ids})
      union all select team.pack_row_id from pack_members as team where team.user_id in (${ids}) and team.accepted_at is not null`
}

/**
 * SQLite's count of a search whose text names people, each pack once: the words' matches (read as a search
 * without names reads them), then the named people's packs that the words do not match. The count stops at
 * its cap, so a common word's count stops within its first part, as it does without names; the set of
 * search_seq (textCondition) would gather every match of the word first. (PostgreSQL's OR is counted as is.)
 */
function hitsNamingPeople(conditions: SearchConditions): RawBuilder<unknown> {
  const { words, named } = conditions
  const byWords = sql`select 1 from ${source('sqlite', words)} where ${whereOf('sqlite', { ...conditions, named: [] })}`
  const byNames = whereOf('sqlite', conditions, undefined, sql<boolean>`packs.search_seq in (${madeBy('sqlite', named)})
    and packs.search_seq not in (select rowid from pack_text where pack_text match ${ftsExpression(words)})`)
  return sql`${byWords} union all select 1 from ${source('sqlite', words, undefined, named)} where ${byNames}`
}

/** `text`: in place of the words' condition (hitsNamingPeople). */
function whereOf(engine: Engine, conditions: SearchConditions, leaveOut?: FacetName,
  text = textCondition(engine, conditions.words, conditions.named)): RawBuilder<boolean> {
  const parts: RawBuilder<boolean>[] = [...conditions.always]
  if (text) parts.push(text)
  for (const name of ['kind', 'mc', 'categories', 'tags', 'updated'] as const) {
    const condition = conditions[name]
    if (condition && name !== leaveOut) parts.push(condition)
  }
  return parts.length === 0 ? sql<boolean>`1 = 1` : sql<boolean>`${sql.join(parts, sql` and `)}`
}

/** Each field's column of words and its weight in a hit's rank: the title most, then who made it, tags, category, summary, description. */
const RANKED_FIELDS = [
  ['title_words', 10], ['names_words', 6], ['tags_words', 4], ['category_words', 3], ['summary_words', 2], ['description_words', 1],
] as const

/**
 * The rank of a hit (larger is better), the same integer on both engines:
 * for each query word, its weight (rarer words more) times, for each field,
 * the field's weight times 3 when the field has the word itself, 2 when a
 * word there starts with it, 1 when it has a word within the typo budget.
 * Read from pack_search's padded word columns with LIKE (the words hold
 * letters and digits only, so no pattern character can occur in them).
 */
function rankOf(words: readonly WordMatch[]): RawBuilder<number> {
  const perWord = words.map((w) => {
    const whole = w.prefix ?? w.exact[0]!
    const typos = w.prefix === null ? w.exact.slice(1) : w.exact
    const perField = RANKED_FIELDS.map(([column, weight]) => {
      const col = sql.ref(`pack_search.${column}`)
      const typo = typos.length === 0 ? sql`1 = 0` : sql.join(typos.map((t) => sql`${col} like ${`% ${t} %`}`), sql` or `)
      return sql`${sql.lit(weight)} * (case when ${col} like ${`% ${whole} %`} then 3 when ${col} like ${`% ${whole}%`} then 2 when ${typo} then 1 else 0 end)`
    })
    return sql`${sql.lit(w.weight)} * (${sql.join(perField, sql` + `)})`
  })
  return sql<number>`(${sql.join(perWord, sql` + `)})`
}

function byCodePoint(engine: Engine): RawBuilder<unknown> {
  return engine === 'postgres' ? sql` collate "C"` : sql``
}

function orderOf(engine: Engine, sort: SearchSort, words: readonly WordMatch[]): RawBuilder<unknown> {
  switch (sort) {
    case 'relevance':
      // Equal ranks by downloads, then by name, by code point on both engines: the same order on any site that
      // holds the same packs (row ids are random).
      return words.length > 0
        ? sql`${rankOf(words)} desc, packs.downloads desc, packs.namespace${byCodePoint(engine)}, packs.pack_id${byCodePoint(engine)}`
        : sql`packs.updated_at desc, packs.id`
    case 'downloads': return sql`packs.downloads desc, packs.updated_at desc, packs.id`
    case 'trending': return sql`pack_search.trending desc, pack_search.pack_row_id`
    case 'created': return sql`packs.created_at desc, packs.id`
    case 'updated': return sql`packs.updated_at desc, packs.id`
    // By code point on both engines, as the packs_listed_title index is (migration 0010).
    case 'title': return engine === 'postgres' ? sql`lower(packs.title) collate "C", packs.id` : sql`lower(packs.title), packs.id`
  }
}

/** One page of hits' pack row ids, in order. */
export async function searchPage(db: Db, query: SearchQuery, sort: SearchSort, page: { limit: number; offset: number }): Promise<string[]> {
  const engine = engineOf(db)
  const conditions = conditionsOf(query)
  const result = await sql<{ id: string }>`select packs.id from ${source(engine, conditions.words, sort, conditions.named)}
    where ${whereOf(engine, conditions)} order by ${orderOf(engine, sort, conditions.words)}
    limit ${page.limit} offset ${page.offset}`.execute(db)
  return result.rows.map((r) => r.id)
}

/** How many packs match, counted up to `cap` + 1 (more than `cap` means "more than cap"). */
export async function countHits(db: Db, query: SearchQuery, cap: number): Promise<number> {
  const engine = engineOf(db)
  const conditions = conditionsOf(query)
  const hits = conditions.named.length > 0 && engine === 'sqlite'
    ? hitsNamingPeople(conditions)
    : sql`select 1 from ${source(engine, conditions.words)} where ${whereOf(engine, conditions)}`
  const result = await sql<{ n: number | string }>`select count(*) as n from (${hits} limit ${cap + 1}) as hits`.execute(db)
  return Number(result.rows[0]?.n ?? 0)
}

/** A facet's options with how many packs each would leave: the search's conditions but the facet's own. */
export async function facetCounts(db: Db, query: SearchQuery, facet: FacetName, windows?: Record<string, string>): Promise<Array<{ value: string; count: number }>> {
  const engine = engineOf(db)
  const conditions = conditionsOf(query)
  const from = source(engine, conditions.words, undefined, conditions.named)
  // Tags are all-of: each tag's count keeps the tags already chosen (what ticking it too would leave). The
  // other facets are any-of (or one value), so their own choice is left out when counting their options.
  const where = whereOf(engine, conditions, facet === 'tags' ? undefined : facet)
  let rows: Array<{ value: string | null; n: number | string }>
  switch (facet) {
    case 'kind':
      rows = (await sql<{ value: string; n: number | string }>`select 'resource' as value, count(*) as n from ${from} where ${where} and (pack_search.kinds & 1) = 1
        union all select 'data' as value, count(*) as n from ${from} where ${where} and (pack_search.kinds & 2) = 2`.execute(db)).rows
      break
    case 'mc':
      rows = (await sql<{ value: string; n: number | string }>`select pack_releases.release as value, count(*) as n from ${from}
        join pack_releases on pack_releases.pack_row_id = packs.id where ${where} group by pack_releases.release`.execute(db)).rows
      break
    case 'categories':
      rows = (await sql<{ value: string; n: number | string }>`select categories.key as value, count(*) as n from ${from}
        join categories on categories.id = packs.category_id where ${where} group by categories.key`.execute(db)).rows
      break
    case 'tags':
      rows = (await sql<{ value: string; n: number | string }>`select min(tags.name) as value, count(*) as n from ${from}
        join pack_tags on pack_tags.pack_id = packs.id join tags on tags.id = pack_tags.tag_id where ${where}
        group by tags.id order by count(*) desc, min(tags.name_lower) limit 30`.execute(db)).rows
      break
    case 'updated': {
      const since = windows ?? {}
      const parts = Object.entries(since).map(([value, iso]) => sql`select ${value} as value, count(*) as n from ${from} where ${where} and packs.updated_at >= ${iso}`)
      rows = parts.length === 0 ? [] : (await sql<{ value: string; n: number | string }>`${sql.join(parts, sql` union all `)}`.execute(db)).rows
      break
    }
  }
  return rows.filter((r) => r.value !== null).map((r) => ({ value: r.value!, count: Number(r.n) }))
}

// ---------------------------------------------------------------- conditions that name ids

export async function categoryIdsByKeys(db: Db, keys: readonly string[]): Promise<string[]> {
  if (keys.length === 0) return []
  return (await db.selectFrom('categories').select('id').where('key', 'in', [...keys]).execute()).map((r) => r.id)
}

export async function tagIdsByNames(db: Db, names: readonly string[]): Promise<Map<string, string>> {
  if (names.length === 0) return new Map()
  const rows = await db.selectFrom('tags').select(['id', 'name_lower']).where('name_lower', 'in', names.map((n) => n.toLowerCase())).execute()
  return new Map(rows.map((r) => [r.name_lower, r.id]))
}

// ---------------------------------------------------------------- trending

/**
 * Moves the trending window to end on `today` (YYYY-MM-DD): the packs that had
 * downloads on days that just left it are counted again from the days that
 * remain, and the days before the window are forgotten.
 */
export async function foldTrendingWindow(db: Db, firstDay: string): Promise<number> {
  await sql`update pack_search set trending = (
      select coalesce(sum(downloads), 0) from pack_daily_downloads d where d.pack_row_id = pack_search.pack_row_id and d.day >= ${firstDay})
    where pack_row_id in (select pack_row_id from pack_daily_downloads where day < ${firstDay})`.execute(db)
  const result = await db.deleteFrom('pack_daily_downloads').where('day', '<', firstDay).executeTakeFirst()
  return Number(result.numDeletedRows)
}

// ---------------------------------------------------------------- the in-memory copy (search-memory.ts)

/** Everything search reads of one indexed pack: its row, its index entry, its releases, tags and accepted members. */
export interface IndexEntry {
  id: string
  namespace: string
  packId: string
  ownerId: string
  title: string
  createdAt: string
  updatedAt: string
  hidden: boolean
  ownerDisabled: boolean
  downloads: number
  categoryId: string | null
  categoryKey: string | null
  publicVersions: number
  kinds: number
  trending: number
  /** The word columns, in RANKED_FIELDS' order, as stored (padded with a space at either end, or empty). */
  fields: string[]
  releases: string[]
  tags: Array<{ id: string; name: string; nameLower: string }>
  /** Accepted members' user ids. */
  members: string[]
}

/** The order of IndexEntry.fields, and each field's weight in a hit's rank (rankOf). */
export const RANKED_FIELD_WEIGHTS: readonly number[] = RANKED_FIELDS.map(([, weight]) => weight)

/**
 * Indexed packs' entries: those of `ids` (any order; a pack gone or not indexed is left out), or else a page
 * of `limit` in row id order after `after`. Four reads, each by an index.
 */
export async function readIndexEntries(db: Db, which: { ids: readonly string[] } | { after: string; limit: number }): Promise<IndexEntry[]> {
  let query = db.selectFrom('packs')
    .innerJoin('pack_search', 'pack_search.pack_row_id', 'packs.id')
    .leftJoin('categories', 'categories.id', 'packs.category_id')
    .select(['packs.id', 'packs.namespace', 'packs.pack_id', 'packs.owner_id', 'packs.title', 'packs.created_at', 'packs.updated_at',
      'packs.hidden_at', 'packs.owner_disabled', 'packs.downloads', 'packs.category_id', 'categories.key as category_key',
      'pack_search.public_versions', 'pack_search.kinds', 'pack_search.trending', ...RANKED_FIELDS.map(([column]) => `pack_search.${column}` as const)])
  if ('ids' in which) {
    if (which.ids.length === 0) return []
    query = query.where('packs.id', 'in', [...which.ids])
  } else {
    query = query.where('packs.id', '>', which.after).orderBy('packs.id').limit(which.limit)
  }
  const rows = await query.execute()
  if (rows.length === 0) return []
  const ids = rows.map((r) => r.id)
  const [releases, tags, members] = await Promise.all([
    db.selectFrom('pack_releases').select(['pack_row_id', 'release']).where('pack_row_id', 'in', ids).execute(),
    db.selectFrom('pack_tags').innerJoin('tags', 'tags.id', 'pack_tags.tag_id')
      .select(['pack_tags.pack_id', 'tags.id', 'tags.name', 'tags.name_lower']).where('pack_tags.pack_id', 'in', ids).execute(),
    db.selectFrom('pack_members').select(['pack_row_id', 'user_id'])
      .where('pack_row_id', 'in', ids).where('accepted_at', 'is not', null).execute(),
  ])
  const entries = new Map<string, IndexEntry>(rows.map((r) => [r.id, {
    id: r.id, namespace: r.namespace, packId: r.pack_id, ownerId: r.owner_id, title: r.title,
    createdAt: r.created_at, updatedAt: r.updated_at, hidden: r.hidden_at !== null, ownerDisabled: Number(r.owner_disabled) !== 0,
    downloads: Number(r.downloads), categoryId: r.category_id, categoryKey: r.category_key,
    publicVersions: Number(r.public_versions), kinds: Number(r.kinds), trending: Number(r.trending),
    fields: RANKED_FIELDS.map(([column]) => r[column]), releases: [], tags: [], members: [],
  }]))
  for (const r of releases) entries.get(r.pack_row_id)?.releases.push(r.release)
  for (const t of tags) entries.get(t.pack_id)?.tags.push({ id: t.id, name: t.name, nameLower: t.name_lower })
  for (const m of members) entries.get(m.pack_row_id)?.members.push(m.user_id)
  return [...entries.values()]
}

/**
 * Whether the database's lower() folds letters beyond A to Z in a title (the title sort's key): SQLite's
 * never does; PostgreSQL's follows the collation of packs.title, "C" since the first migration (A to Z
 * only), asked rather than assumed.
 */
export async function lowerFoldsEveryLetter(db: Db): Promise<boolean> {
  if (engineOf(db) === 'sqlite') return false
  const row = (await sql<{ folded: string }>`select lower(${'\u00d6'}::text collate "C") as folded`.execute(db)).rows[0]
  return row?.folded === '\u00f6'
}
