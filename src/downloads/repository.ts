// The SQL of download counting: the once-a-day marks in
// download_seen, and the counters on versions and packs they feed.
import { sql } from 'kysely'
import type { Db } from '../db/index.js'

/** One download as counting sees it: a UTC day, a version, a hashed client address. */
export interface SeenRow {
  day: string
  version_id: string
  client: string
}

/**
 * Marks the rows as seen and returns the version ids (and days) of those that
 * were new (once per new row). ON CONFLICT DO NOTHING with RETURNING gives only the
 * rows this statement inserted, on SQLite (3.35+) and PostgreSQL alike: a
 * (day, version, client) another instance, or this one before a restart,
 * already wrote is not counted again.
 */
export async function insertSeen(db: Db, rows: readonly SeenRow[]): Promise<Array<{ version_id: string; day: string }>> {
  if (rows.length === 0) return []
  return db
    .insertInto('download_seen')
    .values([...rows])
    .onConflict((oc) => oc.columns(['day', 'version_id', 'client']).doNothing())
    .returning(['version_id', 'day'])
    .execute()
}

/** Adds `count` downloads to a version; a version deleted meanwhile is simply not there. */
export async function addVersionDownloads(db: Db, versionId: string, count: number): Promise<void> {
  await db.updateTable('versions').set({ downloads: sql`downloads + ${count}` }).where('id', '=', versionId).execute()
}

/** Adds `count` downloads to a pack (by its row id). */
export async function addPackDownloads(db: Db, packRowId: string, count: number): Promise<void> {
  await db.updateTable('packs').set({ downloads: sql`downloads + ${count}` }).where('id', '=', packRowId).execute()
}

/**
 * Adds `count` downloads to a pack's UTC day (pack_daily_downloads, migration
 * 0010) and to its trending figure, the last 7 days' sum that the search's
 * trending sort reads; the sweep lets old days go (src/packs/search-service.ts).
 */
export async function addPackDayDownloads(db: Db, packRowId: string, day: string, count: number): Promise<void> {
  await db.insertInto('pack_daily_downloads').values({ pack_row_id: packRowId, day, downloads: count })
    .onConflict((oc) => oc.columns(['pack_row_id', 'day']).doUpdateSet({ downloads: sql`pack_daily_downloads.downloads + ${count}` }))
    .execute()
  await db.updateTable('pack_search').set({ trending: sql`trending + ${count}` }).where('pack_row_id', '=', packRowId).execute()
}

/**
 * Forgets the marks of days before `day` (YYYY-MM-DD): only the current day's
 * marks decide anything, and the sweep keeps the day before as well (a batch
 * written just after midnight may still carry it).
 */
export async function deleteSeenBefore(db: Db, day: string): Promise<number> {
  const result = await db.deleteFrom('download_seen').where('day', '<', day).executeTakeFirst()
  return Number(result.numDeletedRows)
}
