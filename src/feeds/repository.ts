// The SQL of the Atom feeds (./service.ts). Every query reads at most a feed's worth of rows through an index:
// a pack's versions through versions_pack_created; a user's through their packs (packs_owner_id) and then each
// pack's versions the same way, so its cost grows with that user's own versions, never with the site's; new
// packs through the listing's index of listed packs by creation (packs_listed_created) and the small one of
// unlisted packs (packs_unlisted_created, migration 0013). Namespaces, pack ids and usernames are matched in
// lower case, as they are stored (username_lower).
import { sql } from 'kysely'
import type { Db } from '../db/index.js'

/** Repeated as written there, so the planner uses the partial indexes they define (migrations 0007 and 0013); in parentheses, as other conditions join them. */
const LISTED = sql<boolean>`(packs.hidden_at is null and packs.owner_disabled = 0)`
const UNLISTED = sql<boolean>`(packs.hidden_at is not null or packs.owner_disabled = 1)`

export interface FeedPack {
  id: string
  namespace: string
  packId: string
  title: string
  summary: string
  ownerId: string
  owner: string
  hidden: boolean
  ownerDisabled: boolean
  createdAt: string
}

export interface FeedVersion {
  id: string
  name: string
  changelog: string
  createdAt: string
}

export interface FeedUser {
  id: string
  username: string
  createdAt: string
  disabled: boolean
}

function selectFeedPack(db: Db) {
  return db
    .selectFrom('packs')
    .innerJoin('users', 'users.id', 'packs.owner_id')
    .select([
      'packs.id', 'packs.namespace', 'packs.pack_id', 'packs.title', 'packs.summary', 'packs.owner_id', 'users.username as owner',
      'packs.hidden_at', 'packs.owner_disabled', 'packs.created_at',
    ])
}

type FeedPackRow = Awaited<ReturnType<ReturnType<typeof selectFeedPack>['executeTakeFirstOrThrow']>>

function toFeedPack(row: FeedPackRow): FeedPack {
  return {
    id: row.id, namespace: row.namespace, packId: row.pack_id, title: row.title, summary: row.summary, ownerId: row.owner_id,
    owner: row.owner, hidden: row.hidden_at !== null, ownerDisabled: Number(row.owner_disabled) !== 0, createdAt: row.created_at,
  }
}

/** The pack of these names (lower case), hidden or not: the service decides who may see it. */
export async function findFeedPack(db: Db, namespace: string, packId: string): Promise<FeedPack | undefined> {
  const row = await selectFeedPack(db).where('packs.namespace', '=', namespace).where('packs.pack_id', '=', packId).executeTakeFirst()
  return row && toFeedPack(row)
}

/** The pack's versions that are not yanked, newest first (a pack's publication times are strictly increasing). */
export async function listPackVersions(db: Db, packRowId: string, limit: number): Promise<FeedVersion[]> {
  const rows = await db
    .selectFrom('versions')
    .select(['id', 'name', 'changelog', 'created_at'])
    .where('pack_id', '=', packRowId)
    .where('yanked_at', 'is', null)
    .orderBy('created_at', 'desc')
    .limit(limit)
    .execute()
  return rows.map((row) => ({ id: row.id, name: row.name, changelog: row.changelog, createdAt: row.created_at }))
}

/** The account of this name (lower case), disabled or not. */
export async function findFeedUser(db: Db, usernameLower: string): Promise<FeedUser | undefined> {
  const row = await db
    .selectFrom('users')
    .select(['id', 'username', 'created_at', 'disabled_at'])
    .where('username_lower', '=', usernameLower)
    .executeTakeFirst()
  return row && { id: row.id, username: row.username, createdAt: row.created_at, disabled: row.disabled_at !== null }
}

/**
 * The versions (not yanked) of the packs `ownerId` owns, newest first, each with its pack; the owner's hidden
 * packs only when `includeUnlisted`.
 */
export async function listOwnerVersions(
  db: Db, ownerId: string, includeUnlisted: boolean, limit: number,
): Promise<Array<{ pack: FeedPack; version: FeedVersion }>> {
  let query = selectFeedPack(db)
    .innerJoin('versions', 'versions.pack_id', 'packs.id')
    .select(['versions.id as version_id', 'versions.name as version_name', 'versions.changelog', 'versions.created_at as version_created_at'])
    .where('packs.owner_id', '=', ownerId)
    .where('versions.yanked_at', 'is', null)
  if (!includeUnlisted) query = query.where(LISTED)
  const rows = await query.orderBy('versions.created_at', 'desc').orderBy('versions.id').limit(limit).execute()
  return rows.map((row) => ({
    pack: toFeedPack(row),
    version: { id: row.version_id, name: row.version_name, changelog: row.changelog, createdAt: row.version_created_at },
  }))
}

/** The newest listed packs (not hidden, owner not disabled), newest first. */
export async function listNewListedPacks(db: Db, limit: number): Promise<FeedPack[]> {
  const rows = await selectFeedPack(db).where(LISTED).orderBy('packs.created_at', 'desc').orderBy('packs.id').limit(limit).execute()
  return rows.map(toFeedPack)
}

/** The newest unlisted packs (hidden, or of a disabled account), newest first: all of them, or only `ownerId`'s. */
export async function listNewUnlistedPacks(db: Db, ownerId: string | null, limit: number): Promise<FeedPack[]> {
  let query = selectFeedPack(db).where(UNLISTED)
  if (ownerId !== null) query = query.where('packs.owner_id', '=', ownerId)
  const rows = await query.orderBy('packs.created_at', 'desc').orderBy('packs.id').limit(limit).execute()
  return rows.map(toFeedPack)
}
