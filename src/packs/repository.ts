// Packs, their versions, tags and media. Namespaces and pack ids are stored in
// lower case, so every lookup here takes lower-cased keys and the unique index
// (namespace, pack_id) serves it directly.
import { SqliteAdapter, expressionBuilder, sql, type ExpressionBuilder, type Insertable, type Selectable, type SelectQueryBuilder } from 'kysely'
import { USERNAME_PATTERN } from '../api/constants.js'
import { prefixUpperBound } from '../accounts/users-repository.js'
import type { Db } from '../db/index.js'
import type { Database, FilesTable, PacksTable, VersionsTable } from '../db/schema.js'
import type { PackDeclaration } from '../minecraft/declaration.js'
import { declarationOf } from '../files/repository.js'
import type { MemberRole } from './policy.js'
import { escapeLike, lowerNameChunks } from './tags-repository.js'
import { newShortId } from '../db/short-ids.js'
import { nowIso } from '../db/time.js'

export type PackRow = Insertable<PacksTable>
export type VersionRow = Insertable<VersionsTable>

export interface CategoryRef {
  key: string
  name: string
  color: string
}

export interface TagRef {
  name: string
  categoryKey: string
  categoryName: string
  color: string
}

export interface MediaRef {
  fileId: string
  filename: string
  contentType: string
}

export interface VersionRecord {
  id: string
  /** The Modrinth-shaped id (src/db/short-ids.ts); null only for a row inserted around the repository. */
  shortId: string | null
  name: string
  changelog: string
  packFormat: number | null
  fileId: string
  createdAt: string
  yanked: boolean
  downloads: number
  /** What the archive declares (its file's row). */
  declaration: PackDeclaration
  /** The archive's size, hashes and name (its file's row). */
  archive: ArchiveRecord
}

export interface ArchiveRecord {
  size: number
  sha256: string
  sha1: string | null
  filename: string
}

/** A pack with everything its page shows. */
export interface PackRecord {
  id: string
  /** The Modrinth-shaped id (src/db/short-ids.ts); null only for a row inserted around the repository. */
  shortId: string | null
  namespace: string
  packId: string
  owner: string
  ownerId: string
  /** Hidden by staff. */
  hidden: boolean
  /** The owner's account is disabled (its packs are hidden too). */
  ownerDisabled: boolean
  downloads: number
  revision: number
  title: string
  summary: string
  category: CategoryRef | null
  thumbnailFileId: string | null
  tags: TagRef[]
  createdAt: string
  updatedAt: string
}

/** Someone in a pack's team besides its owner; not accepted yet: an invitation. */
export interface TeamMemberRecord {
  userId: string
  username: string
  /** 'maintainer' | 'uploader' (src/packs/policy.ts) */
  role: MemberRole
  accepted: boolean
  invitedAt: string
  acceptedAt: string | null
  /** When an invitation lapses; null once accepted. */
  expiresAt: string | null
  /** Their account is disabled: listed, but they may do nothing. */
  disabled: boolean
}

export interface PackDetail extends PackRecord {
  /** The long text of its page (Markdown): not read for a listing, which shows the summary. */
  description: string
  /** The team besides the owner: members (accepted) first, by when they joined, then live invitations. */
  team: TeamMemberRecord[]
  media: MediaRef[]
  /** Newest first. */
  versions: VersionRecord[]
  /** How many users follow it (packs.followers, kept with pack_follows by src/packs/follows-service.ts). */
  followers: number
}

export interface PackSummaryRecord extends PackRecord {
  /** The newest version that is not yanked; null when there is none. */
  latest: VersionRecord | null
}

export interface PackFilter {
  /** Part of the title, matched case-insensitively. */
  q?: string | undefined
  /** A tag name, matched case-insensitively. */
  tag?: string | undefined
  /** A category key (keys are lower case). */
  category?: string | undefined
  /** Only this user's packs (a profile). */
  ownerId?: string | undefined
  /** Only packs this user owns or is in the team of (accepted). */
  memberId?: string | undefined
  /** Hidden packs and packs of disabled accounts too: for their owner's profile and for staff. Public listings leave them out. */
  includeHidden?: boolean | undefined
}

export type PackSort = 'updated' | 'downloads' | 'created'

/** Who is looking: hidden packs show only to their owner and to staff. */
export interface Viewer {
  /** null: the admin CLI (which is staff). */
  id: string | null
  isStaff: boolean
}

// ---------------------------------------------------------------- lookups

export async function packExists(db: Db, namespace: string, packId: string): Promise<boolean> {
  const row = await db.selectFrom('packs').select('id').where('namespace', '=', namespace).where('pack_id', '=', packId).executeTakeFirst()
  return row !== undefined
}

/** The pack's row id and owner, hidden or not. */
export async function findPackRowId(db: Db, namespace: string, packId: string): Promise<{ id: string; ownerId: string } | undefined> {
  const row = await db.selectFrom('packs').select(['id', 'owner_id']).where('namespace', '=', namespace).where('pack_id', '=', packId).executeTakeFirst()
  return row && { id: row.id, ownerId: row.owner_id }
}

function selectPackBase(db: Db) {
  return db
    .selectFrom('packs')
    .innerJoin('users', 'users.id', 'packs.owner_id')
    .leftJoin('categories', 'categories.id', 'packs.category_id')
    .select([
      'packs.id', 'packs.short_id', 'packs.namespace', 'packs.pack_id', 'packs.title', 'packs.summary',
      'packs.thumbnail_file_id', 'packs.created_at', 'packs.updated_at', 'users.username as owner',
      'packs.owner_id', 'packs.hidden_at', 'packs.downloads', 'packs.revision', 'users.disabled_at as owner_disabled_at',
      'categories.key as category_key', 'categories.name as category_name', 'categories.color as category_color',
    ])
}

type PackBaseRow = Awaited<ReturnType<ReturnType<typeof selectPackBase>['executeTakeFirstOrThrow']>>

/**
 * A pack's row as its page reads it: with the description, which a listing leaves out (it is most of a row's
 * bytes), and the follower count, which only a pack's own page and API answer show.
 */
function selectPackDetailBase(db: Db) {
  return selectPackBase(db).select(['packs.description', 'packs.followers'])
}

type PackDetailRow = PackBaseRow & { description: string; followers: number }

function toPackRecord(row: PackBaseRow, tags: TagRef[]): PackRecord {
  return {
    id: row.id,
    shortId: row.short_id,
    namespace: row.namespace,
    packId: row.pack_id,
    owner: row.owner,
    ownerId: row.owner_id,
    hidden: row.hidden_at !== null,
    ownerDisabled: row.owner_disabled_at !== null,
    downloads: Number(row.downloads),
    revision: row.revision,
    title: row.title,
    summary: row.summary,
    category: row.category_key !== null && row.category_name !== null && row.category_color !== null
      ? { key: row.category_key, name: row.category_name, color: row.category_color }
      : null,
    thumbnailFileId: row.thumbnail_file_id,
    tags,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  }
}

export async function loadPackDetail(db: Db, namespace: string, packId: string): Promise<PackDetail | undefined> {
  const row = await selectPackDetailBase(db).where('packs.namespace', '=', namespace).where('packs.pack_id', '=', packId).executeTakeFirst()
  return row && (await withDetails(db, [row]))[0]
}

/** Whole packs by row id, hidden ones included (the caller decides who sees them), in no particular order: four queries however many. */
export async function loadPackDetailsByRowIds(db: Db, packRowIds: readonly string[]): Promise<PackDetail[]> {
  if (packRowIds.length === 0) return []
  const rows = await selectPackDetailBase(db).where('packs.id', 'in', [...new Set(packRowIds)]).execute()
  return withDetails(db, rows)
}

/** Each pack row with its tags, media and versions (newest first): three queries for all of them. */
async function withDetails(db: Db, rows: readonly PackDetailRow[]): Promise<PackDetail[]> {
  if (rows.length === 0) return []
  const ids = rows.map((row) => row.id)
  const [tags, media, versions, team] = await Promise.all([
    tagsOfPacks(db, ids),
    db
      .selectFrom('pack_media')
      .innerJoin('files', 'files.id', 'pack_media.file_id')
      .select(['pack_media.pack_id', 'files.id', 'files.filename', 'files.content_type'])
      .where('pack_media.pack_id', 'in', ids)
      .orderBy('pack_media.position')
      .execute(),
    db
      .selectFrom('versions')
      .innerJoin('files', 'files.id', 'versions.file_id')
      .select(['versions.pack_id', ...VERSION_COLUMNS])
      .where('versions.pack_id', 'in', ids)
      // The id breaks a tie in time, as the update-check's order does.
      .orderBy('versions.created_at', 'desc')
      .orderBy('versions.id', 'desc')
      .execute(),
    teamsOf(db, ids),
  ])
  const mediaOf = groupBy(media, (m) => m.pack_id)
  const versionsOf = groupBy(versions, (v) => v.pack_id)
  return rows.map((row) => ({
    ...toPackRecord(row, tags.get(row.id) ?? []),
    description: row.description,
    team: team.get(row.id) ?? [],
    media: (mediaOf.get(row.id) ?? []).map((m) => ({ fileId: m.id, filename: m.filename, contentType: m.content_type })),
    versions: (versionsOf.get(row.id) ?? []).map(toVersionRecord),
    followers: Number(row.followers),
  }))
}

/**
 * The teams of several packs in one query: accepted members by when they joined, then invitations that have
 * not lapsed (a lapsed one is as good as gone; the sweep removes it).
 */
export async function teamsOf(db: Db, packRowIds: readonly string[], now = nowIso()): Promise<Map<string, TeamMemberRecord[]>> {
  const rows = await db
    .selectFrom('pack_members')
    .innerJoin('users', 'users.id', 'pack_members.user_id')
    .select(['pack_members.pack_row_id', 'pack_members.user_id', 'users.username', 'users.disabled_at', 'pack_members.role',
      'pack_members.invited_at', 'pack_members.accepted_at', 'pack_members.expires_at'])
    .where('pack_members.pack_row_id', 'in', packRowIds)
    .where((eb) => eb.or([eb('pack_members.accepted_at', 'is not', null), eb('pack_members.expires_at', '>', now)]))
    .orderBy('pack_members.pack_row_id')
    .orderBy(sql`case when pack_members.accepted_at is null then 1 else 0 end`)
    .orderBy(sql`coalesce(pack_members.accepted_at, pack_members.invited_at)`)
    .orderBy('users.username')
    .execute()
  const grouped = groupBy(rows, (r) => r.pack_row_id)
  return new Map([...grouped].map(([id, members]) => [id, members.map((m) => ({
    userId: m.user_id,
    username: m.username,
    role: m.role === 'maintainer' ? 'maintainer' as const : 'uploader' as const,
    accepted: m.accepted_at !== null,
    invitedAt: m.invited_at,
    acceptedAt: m.accepted_at,
    expiresAt: m.expires_at,
    disabled: m.disabled_at !== null,
  }))]))
}

/** Rows by key, each group in the rows' order. */
function groupBy<T>(rows: readonly T[], key: (row: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>()
  for (const row of rows) {
    const group = groups.get(key(row))
    if (group) group.push(row)
    else groups.set(key(row), [row])
  }
  return groups
}

/** A version's columns with its archive's declaration, for toVersionRecord (versions joined to files). */
const VERSION_COLUMNS = [
  'versions.id', 'versions.short_id', 'versions.name', 'versions.changelog', 'versions.pack_format', 'versions.file_id', 'versions.created_at',
  'versions.yanked_at', 'versions.downloads', 'files.pack_kind', 'files.min_format', 'files.min_format_minor',
  'files.max_format', 'files.max_format_minor', 'files.size', 'files.sha256', 'files.sha1', 'files.filename',
] as const

type VersionColumns = Pick<Selectable<VersionsTable>, 'id' | 'short_id' | 'name' | 'changelog' | 'pack_format' | 'file_id' | 'created_at' | 'yanked_at' | 'downloads'>
  & Pick<Selectable<FilesTable>, 'pack_kind' | 'min_format' | 'min_format_minor' | 'max_format' | 'max_format_minor' | 'size' | 'sha256' | 'sha1' | 'filename'>

export function toVersionRecord(v: VersionColumns): VersionRecord {
  return {
    id: v.id,
    shortId: v.short_id,
    name: v.name,
    changelog: v.changelog,
    packFormat: v.pack_format,
    fileId: v.file_id,
    createdAt: v.created_at,
    yanked: v.yanked_at !== null,
    downloads: Number(v.downloads),
    declaration: declarationOf(v),
    archive: { size: Number(v.size), sha256: v.sha256, sha1: v.sha1, filename: v.filename },
  }
}

/** Tags of several packs in one query, each pack's sorted by name. */
async function tagsOfPacks(db: Db, packIds: readonly string[]): Promise<Map<string, TagRef[]>> {
  const byPack = new Map<string, TagRef[]>()
  if (packIds.length === 0) return byPack
  const rows = await db
    .selectFrom('pack_tags')
    .innerJoin('tags', 'tags.id', 'pack_tags.tag_id')
    .innerJoin('categories', 'categories.id', 'tags.category_id')
    .select(['pack_tags.pack_id', 'tags.name', 'categories.key', 'categories.name as category_name', 'categories.color'])
    .where('pack_tags.pack_id', 'in', packIds)
    .orderBy('tags.name_lower')
    .execute()
  for (const row of rows) {
    const list = byPack.get(row.pack_id) ?? []
    list.push({ name: row.name, categoryKey: row.key, categoryName: row.category_name, color: row.color })
    byPack.set(row.pack_id, list)
  }
  return byPack
}

/**
 * A title search counts, and pages through, its first SEARCH_LIMIT matches
 * only, as GitHub's search and Meilisearch (Modrinth's) do: a search matching
 * most of 100,000 packs would otherwise be counted in full on every page view.
 */
export const SEARCH_LIMIT = 1000

/**
 * How many accounts a search's text may name (see userIdsNamedBy): their
 * packs join the words' matches. A short prefix can name thousands of people
 * on a large site; the first 50 by username (the exact name, when there is
 * one, is always the first) keep the lookup and the packs it adds to a few
 * index reads, as a search box's suggestions are cut. 50 is more than any
 * prefix of two or more letters names on a site of a few thousand players.
 */
export const NAMED_USERS_LIMIT = 50

/**
 * The username a search's text may be, in lower case (usernames are unique in
 * lower case, users.username_lower): the text trimmed, with one "@" before it
 * dropped, as people write names. Undefined when no username could start with
 * it (a space, a pattern character and the like).
 */
export function usernameOfSearch(q: string): string | undefined {
  const name = q.trim().replace(/^@/, '')
  return USERNAME_PATTERN.test(name) ? name.toLowerCase() : undefined
}

/**
 * Ids of the accounts a search's text names: the username equal to it, or,
 * from two characters on, every username starting with it (one letter names
 * only itself, as one-letter words of a search match only themselves), at most
 * NAMED_USERS_LIMIT, by username. A range on the unique index of username_lower
 * (its "C" collation on PostgreSQL orders it by code point, as SQLite does), so
 * `%` and `_` are plain characters and no more than the first matches are read.
 * Disabled accounts name nobody: they may do nothing in a team, and their own
 * packs are unlisted anyway.
 */
export async function userIdsNamedBy(db: Db, q: string): Promise<string[]> {
  const name = usernameOfSearch(q)
  if (name === undefined) return []
  let query = db.selectFrom('users').select('users.id').where('users.disabled_at', 'is', null)
  query = [...name].length === 1
    ? query.where('users.username_lower', '=', name)
    : query.where('users.username_lower', '>=', name).where('users.username_lower', '<', prefixUpperBound(name))
  const rows = await query.orderBy('users.username_lower').limit(NAMED_USERS_LIMIT).execute()
  return rows.map((r) => r.id)
}

// "Listed": what the public sees. Spelled as literals, as the partial indexes of migration 0007 are, so
// that both engines use those indexes (a bound parameter in their place would not match them).
const LISTED = sql<boolean>`packs.hidden_at is null and packs.owner_disabled = 0`

/** LIKE's pattern for titles containing `q`, in lower case; `%` and `_` in it are plain characters. */
function containsPattern(q: string): string {
  return `%${escapeLike(q.toLowerCase())}%`
}

/**
 * Titles containing `q`, in any case. lower() on both sides: LIKE is
 * case-insensitive on SQLite but not on PostgreSQL (where the pg_trgm index on
 * lower(title), migration 0007, serves this very expression). `%` and `_` in
 * the search are plain characters: a search for "50%" means the text "50%".
 */
function titleContains(q: string) {
  return sql<boolean>`lower(${sql.ref('packs.title')}) like ${containsPattern(q)} escape '\\'`
}

/** The listing's conditions. `narrowByTitleIndex`: SQLite's trigram index may name the candidates (see titleIndexTerm). */
function applyFilter(eb: ExpressionBuilder<Database, 'packs'>, filter: PackFilter, narrowByTitleIndex?: string) {
  const conditions = []
  if (filter.q) {
    conditions.push(titleContains(filter.q))
    // A superset of the matches (the index folds case as LIKE does, for ASCII), narrowed by the condition above.
    if (narrowByTitleIndex !== undefined) {
      conditions.push(sql<boolean>`${eb.ref('packs.search_seq')} in (select rowid from packs_title_search where title like ${containsPattern(narrowByTitleIndex)})`)
    }
  }
  if (filter.tag) {
    // The tag's packs by the pack_tags_tag_id index, then sorted: a tag is on few packs of a large site.
    conditions.push(eb('packs.id', 'in', eb.selectFrom('pack_tags').select('pack_tags.pack_id')
      .where('pack_tags.tag_id', '=', eb.selectFrom('tags').select('tags.id').where('tags.name_lower', '=', filter.tag.toLowerCase()))))
  }
  if (filter.ownerId) conditions.push(eb('packs.owner_id', '=', filter.ownerId))
  if (filter.memberId) {
    // Owned (packs_owner's index), or in the team (pack_members_user's index): few packs per person either way.
    conditions.push(eb.or([
      eb('packs.owner_id', '=', filter.memberId),
      eb('packs.id', 'in', eb.selectFrom('pack_members').select('pack_members.pack_row_id')
        .where('pack_members.user_id', '=', filter.memberId).where('pack_members.accepted_at', 'is not', null)),
    ]))
  }
  if (!filter.includeHidden) conditions.push(LISTED)
  if (filter.category) {
    conditions.push(eb('packs.category_id', '=', eb.selectFrom('categories').select('categories.id').where('categories.key', '=', filter.category.toLowerCase())))
  }
  return eb.and(conditions)
}

/**
 * What SQLite's trigram index (packs_title_search, migration 0007) can look up
 * for a search: its longest run of three characters or more (the index's
 * trigrams) without LIKE's special characters, whose matches are a superset of
 * the search's (the exact condition is applied as well); undefined when it has
 * none, or on PostgreSQL, whose planner uses its pg_trgm index for the query's
 * own LIKE.
 */
function titleIndexTerm(db: Db, q: string | undefined): string | undefined {
  if (q === undefined || !isSqlite(db)) return undefined
  const longest = q.split(/[%_\\]/).reduce((a, b) => ([...b].length > [...a].length ? b : a), '')
  return [...longest].length >= 3 ? longest : undefined
}

function isSqlite(db: Db): boolean {
  return db.getExecutor().adapter instanceof SqliteAdapter
}

/**
 * How many packs match, from pack_counts when no filter but the category
 * applies (one row), else counted; a search stops counting past SEARCH_LIMIT.
 * On SQLite a search's matches are counted from the trigram index's
 * candidates, joined to their packs (about a millisecond at 100,000 packs,
 * where walking the listing for a rare term took over 100).
 */
async function countPacks(db: Db, filter: PackFilter, titleTerm: string | undefined): Promise<{ total: number; capped: boolean }> {
  if (!filter.q && !filter.tag && !filter.ownerId && !filter.memberId && !filter.includeHidden) {
    let scope = db.selectFrom('pack_counts').select('pack_counts.listed')
    scope = filter.category
      ? scope.where('pack_counts.scope', '=', (eb) => eb.selectFrom('categories').select('categories.id').where('categories.key', '=', filter.category!.toLowerCase()))
      : scope.where('pack_counts.scope', '=', '*')
    const row = await scope.executeTakeFirst()
    return { total: Number(row?.listed ?? 0), capped: false }
  }
  const conditions = applyFilter(expressionBuilder<Database, 'packs'>(), filter)
  if (filter.q) {
    const matches = titleTerm !== undefined
      ? sql`select 1 from packs_title_search join packs on packs.search_seq = packs_title_search.rowid
          where packs_title_search.title like ${containsPattern(titleTerm)} and ${conditions} limit ${SEARCH_LIMIT + 1}`
      : sql`select 1 from packs where ${conditions} limit ${SEARCH_LIMIT + 1}`
    const result = await sql<{ n: number | string }>`select count(*) as n from (${matches}) as matches`.execute(db)
    const n = Number(result.rows[0]?.n ?? 0)
    return { total: Math.min(n, SEARCH_LIMIT), capped: n > SEARCH_LIMIT }
  }
  const row = await db.selectFrom('packs').select((eb) => eb.fn.countAll<number | string>().as('n')).where(conditions).executeTakeFirstOrThrow()
  return { total: Number(row.n), capped: false }
}

/**
 * One page of packs matching `filter` in the `sort` order, and how many match
 * in all (`capped`: a search's count stopped at SEARCH_LIMIT). The page's ids
 * come first, from an index alone (a deep page skips index entries, not joined
 * rows); then those packs are read whole.
 */
export async function listPacks(
  db: Db,
  filter: PackFilter,
  page: { limit: number; offset: number },
  sort: PackSort = 'updated',
): Promise<{ items: PackSummaryRecord[]; total: number; capped: boolean }> {
  const titleTerm = titleIndexTerm(db, filter.q)
  const limit = filter.q ? Math.min(page.limit, SEARCH_LIMIT - page.offset) : page.limit
  let ids: string[]
  let count: { total: number; capped: boolean }
  if (filter.q && titleTerm === undefined && isSqlite(db)) {
    // No trigram to look up: the listing is walked in windows (see searchInWindows).
    const matches = await searchInWindows(db, filter, sort)
    count = { total: Math.min(matches.length, SEARCH_LIMIT), capped: matches.length > SEARCH_LIMIT }
    ids = limit <= 0 ? [] : matches.slice(page.offset, page.offset + limit)
  } else {
    count = await countPacks(db, filter, titleTerm)
    // A rare term (every match counted): its matches are named by the index, then sorted. A common one is found
    // faster by walking the listing in order, where the first page's matches come early.
    const narrow = count.capped ? undefined : titleTerm
    if (limit <= 0 || page.offset >= count.total) return { items: [], ...count }
    const query = ordered(db.selectFrom('packs').select('packs.id').where((eb) => applyFilter(eb, filter, narrow)), sort)
    ids = (await query.limit(limit).offset(page.offset).execute()).map((r) => r.id)
  }
  if (ids.length === 0) return { items: [], ...count }
  const [rows, tags, latest] = await Promise.all([
    selectPackBase(db).where('packs.id', 'in', ids).execute(),
    tagsOfPacks(db, ids),
    latestVersionsOf(db, ids),
  ])
  const byId = new Map(rows.map((row) => [row.id, row]))
  const items = ids.flatMap((id) => {
    const row = byId.get(id)
    // A pack deleted between the queries (PostgreSQL runs them apart) is left out.
    return row ? [{ ...toPackRecord(row, tags.get(id) ?? []), latest: latest.get(id) ?? null }] : []
  })
  return { items, ...count }
}

/** Listed packs read per query by searchInWindows: about a millisecond of SQLite's time at 100,000 packs. */
const SEARCH_WINDOW = 1000

/** Each sort's order: these columns, newest (largest) first, then the id. */
const SORT_KEYS = {
  updated: ['updated_at'],
  created: ['created_at'],
  downloads: ['downloads', 'updated_at'],
} as const satisfies Record<PackSort, readonly (keyof PacksTable)[]>

/** The listing in the sort's order (the order of the partial indexes of migration 0007). */
function ordered<Q extends SelectQueryBuilder<Database, 'packs', { id: string }>>(query: Q, sort: PackSort): Q {
  let sorted = query
  for (const key of SORT_KEYS[sort]) sorted = sorted.orderBy(`packs.${key}`, 'desc') as Q
  return sorted.orderBy('packs.id') as Q
}

type SortKey = (typeof SORT_KEYS)[PackSort][number]
type WindowRow = { id: string } & Partial<Record<SortKey, string | number>>

/**
 * A search with no run of three plain characters (`q=ui`, `q=3d`, `q=%_`), on
 * SQLite: the trigram index cannot help, and one query over the listing held
 * the event loop for about 75 ms at 100,000 packs (SQLite runs in the
 * server's thread). So the listing is read SEARCH_WINDOW packs at a time in
 * the page's order, each window starting after the last one's final pack
 * (by its sort key and id, which the listing's index seeks to) and saying
 * which of its titles match, until SEARCH_LIMIT + 1 matches are found or the
 * listing ends. Every query is short, and between them other requests take
 * their turn (TurnTakingSqliteDialect in src/db/index.ts). Returns the
 * matching ids in order.
 */
async function searchInWindows(db: Db, filter: PackFilter, sort: PackSort): Promise<string[]> {
  const hit = titleContains(filter.q!)
  const withoutSearch: PackFilter = { ...filter, q: undefined }
  const keys = SORT_KEYS[sort]
  const matches: string[] = []
  let last: WindowRow | undefined
  while (matches.length <= SEARCH_LIMIT) {
    const after = last
    const window: (WindowRow & { hit: number })[] = await ordered(db.selectFrom('packs')
      .select(['packs.id', ...keys.map((key) => `packs.${key}` as const)])
      .select(sql<number>`${hit}`.as('hit'))
      .where((eb) => eb.and([applyFilter(eb, withoutSearch), ...(after ? [following(eb, keys, after)] : [])])), sort)
      .limit(SEARCH_WINDOW).execute()
    for (const row of window) if (Number(row.hit) === 1) matches.push(row.id)
    if (window.length < SEARCH_WINDOW) break
    last = window.at(-1)
  }
  return matches
}

/**
 * The packs after `row` in an order of `keys` (each descending) then the id:
 * `k1 <= v1 and (k1 < v1 or <the same for the next key>)`, ending in `id > v`.
 * The leading `<=` is a range the listing's index seeks to.
 */
function following(eb: ExpressionBuilder<Database, 'packs'>, keys: readonly SortKey[], row: WindowRow): ReturnType<typeof eb.and> {
  const [key, ...rest] = keys
  if (key === undefined) return eb.and([eb('packs.id', '>', row.id)])
  const value = row[key]!
  return eb.and([eb(`packs.${key}`, '<=', value as never), eb.or([eb(`packs.${key}`, '<', value as never), following(eb, rest, row)])])
}

/** Each pack's newest version that is not yanked, in one query; packs whose versions are all yanked are absent. */
async function latestVersionsOf(db: Db, packIds: readonly string[]): Promise<Map<string, VersionRecord>> {
  const byPack = new Map<string, VersionRecord>()
  if (packIds.length === 0) return byPack
  const rows = await db
    .selectFrom('versions')
    .innerJoin('files', 'files.id', 'versions.file_id')
    .select([...VERSION_COLUMNS, 'versions.pack_id'])
    .where('versions.pack_id', 'in', packIds)
    .where('versions.yanked_at', 'is', null)
    .where('versions.created_at', '=', (eb) => eb
      .selectFrom('versions as newest')
      .select((e) => e.fn.max('newest.created_at').as('m'))
      .whereRef('newest.pack_id', '=', 'versions.pack_id')
      .where('newest.yanked_at', 'is', null))
    .execute()
  for (const row of rows) byPack.set(row.pack_id, toVersionRecord(row))
  return byPack
}

export async function findCategoryIdByKey(db: Db, key: string): Promise<string | undefined> {
  return (await db.selectFrom('categories').select('id').where('key', '=', key).executeTakeFirst())?.id
}

/** Ids of the existing tags among `names` (case-insensitive); unknown names are left out. */
export async function findTagIdsByNames(db: Db, names: readonly string[]): Promise<string[]> {
  const ids: string[] = []
  for (const lower of lowerNameChunks(names.map((n) => n.trim()))) {
    for (const row of await db.selectFrom('tags').select('id').where('name_lower', 'in', lower).execute()) ids.push(row.id)
  }
  return ids
}

export async function versionNameTaken(db: Db, packRowId: string, name: string): Promise<boolean> {
  const row = await db.selectFrom('versions').select('id').where('pack_id', '=', packRowId).where('name', '=', name).executeTakeFirst()
  return row !== undefined
}

export async function newestVersionCreatedAt(db: Db, packRowId: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('versions')
    .select('created_at')
    .where('pack_id', '=', packRowId)
    .orderBy('created_at', 'desc')
    .limit(1)
    .executeTakeFirst()
  return row?.created_at
}

// ---------------------------------------------------------------- writes

export async function insertPack(db: Db, row: PackRow): Promise<void> {
  await db.insertInto('packs').values({ short_id: newShortId(), ...row }).execute()
}

export async function insertPackTags(db: Db, packRowId: string, tagIds: readonly string[]): Promise<void> {
  if (tagIds.length === 0) return
  await db.insertInto('pack_tags').values([...new Set(tagIds)].map((tagId) => ({ pack_id: packRowId, tag_id: tagId }))).execute()
}

/** Media in the given order. */
export async function insertPackMedia(db: Db, packRowId: string, fileIds: readonly string[]): Promise<void> {
  if (fileIds.length === 0) return
  await db.insertInto('pack_media').values(fileIds.map((fileId, position) => ({ pack_id: packRowId, file_id: fileId, position }))).execute()
}

export async function insertVersion(db: Db, row: VersionRow): Promise<void> {
  await db.insertInto('versions').values({ short_id: newShortId(), ...row }).execute()
}

/**
 * Sets updated_at of the owner's pack; false when it is not (or no longer)
 * theirs. Run first in a version's transaction: on PostgreSQL the row lock
 * queues concurrent uploads to the same pack, so each sees the other's version.
 */
/** Sets the pack's updated_at (taking its row lock first thing in a transaction); its owner's id, or undefined when it is gone. */
export async function touchPackNow(db: Db, packRowId: string, now: string): Promise<string | undefined> {
  const row = await db.updateTable('packs').set({ updated_at: now }).where('id', '=', packRowId).returning('owner_id').executeTakeFirst()
  return row?.owner_id
}

/** Packs by row id as the listing shows them, in the order given; ids of packs gone meanwhile are left out. */
export async function loadPackSummaries(db: Db, ids: readonly string[]): Promise<PackSummaryRecord[]> {
  if (ids.length === 0) return []
  const [rows, tags, latest] = await Promise.all([
    selectPackBase(db).where('packs.id', 'in', [...ids]).execute(),
    tagsOfPacks(db, ids),
    latestVersionsOf(db, ids),
  ])
  const byId = new Map(rows.map((row) => [row.id, row]))
  return ids.flatMap((id) => {
    const row = byId.get(id)
    return row ? [{ ...toPackRecord(row, tags.get(id) ?? []), latest: latest.get(id) ?? null }] : []
  })
}
