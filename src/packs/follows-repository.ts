// Who follows which pack (pack_follows) and the count each pack keeps of them (packs.followers). The count is
// changed only here, by the statement after the row it counts, in the caller's transaction: a follow that
// inserted nothing (already following) or an unfollow that deleted nothing adds or takes nothing, so the count
// stays the number of rows however many requests race.
import { sql, type Expression, type SqlBool } from 'kysely'
import type { Db } from '../db/index.js'
import type { Viewer } from './repository.js'

/** Adds the follow; true when it was not there before. */
export async function insertFollow(db: Db, packRowId: string, userId: string, now: string): Promise<boolean> {
  const result = await db.insertInto('pack_follows').values({ pack_row_id: packRowId, user_id: userId, created_at: now })
    .onConflict((oc) => oc.columns(['pack_row_id', 'user_id']).doNothing())
    .executeTakeFirst()
  return Number(result.numInsertedOrUpdatedRows ?? 0) > 0
}

/** Removes the follow; true when there was one. */
export async function deleteFollow(db: Db, packRowId: string, userId: string): Promise<boolean> {
  const result = await db.deleteFrom('pack_follows').where('pack_row_id', '=', packRowId).where('user_id', '=', userId).executeTakeFirst()
  return Number(result.numDeletedRows) > 0
}

/**
 * Moves the pack's count by `by` (+1 or -1) and returns the new count. One UPDATE, so on PostgreSQL it takes
 * the pack's row lock and concurrent follows add up instead of overwriting each other.
 */
export async function addToFollowers(db: Db, packRowId: string, by: 1 | -1): Promise<number> {
  const row = await db.updateTable('packs')
    .set({ followers: by > 0 ? sql`followers + 1` : sql`case when followers > 0 then followers - 1 else 0 end` })
    .where('id', '=', packRowId)
    .returning('followers')
    .executeTakeFirst()
  return Number(row?.followers ?? 0)
}

export async function followerCount(db: Db, packRowId: string): Promise<number> {
  const row = await db.selectFrom('packs').select('followers').where('id', '=', packRowId).executeTakeFirst()
  return Number(row?.followers ?? 0)
}

export async function isFollowing(db: Db, packRowId: string, userId: string): Promise<boolean> {
  const row = await db.selectFrom('pack_follows').select('user_id').where('pack_row_id', '=', packRowId).where('user_id', '=', userId).executeTakeFirst()
  return row !== undefined
}

export interface FollowedPackRow {
  namespace: string
  packId: string
  title: string
  followedAt: string
}

/**
 * The condition of canSee (src/packs/service.ts) in SQL, for the packs `p` of a listing: listed packs to
 * everyone; hidden ones (by staff, or of a disabled account) to staff, their owner and accepted members. In
 * SQL so that a page and its total count only what the viewer sees, however many packs they follow.
 */
function visibleTo(viewer: Viewer & { id: string }): Expression<SqlBool> {
  if (viewer.isStaff) return sql<SqlBool>`1 = 1`
  return sql<SqlBool>`((p.hidden_at is null and p.owner_disabled = 0) or p.owner_id = ${viewer.id} or exists (
    select 1 from pack_members m where m.pack_row_id = p.id and m.user_id = ${viewer.id} and m.accepted_at is not null))`
}

/** One page of the packs `viewer` follows and may see, newest follow first, and how many there are in all. */
export async function listFollowedPacks(
  db: Db, viewer: Viewer & { id: string }, limit: number, offset: number,
): Promise<{ items: FollowedPackRow[]; total: number }> {
  const base = () => db.selectFrom('pack_follows as f')
    .innerJoin('packs as p', 'p.id', 'f.pack_row_id')
    .where('f.user_id', '=', viewer.id)
    .where(visibleTo(viewer))
  const [rows, count] = await Promise.all([
    base().select(['p.namespace', 'p.pack_id', 'p.title', 'f.created_at'])
      // The pack's row id breaks a tie in time, so pages never overlap.
      .orderBy('f.created_at', 'desc').orderBy('f.pack_row_id', 'desc')
      .limit(limit).offset(offset)
      .execute(),
    base().select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow(),
  ])
  return {
    items: rows.map((r) => ({ namespace: r.namespace, packId: r.pack_id, title: r.title, followedAt: r.created_at })),
    total: Number(count.n),
  }
}
