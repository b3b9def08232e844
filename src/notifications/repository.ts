// The notifications' SQL. Each user keeps at most NOTIFICATIONS_KEPT: every
// insert drops what falls past that for the users it wrote to, in the same
// transaction, so a list and its unread count are a short range of the
// (user_id, created_at, id) index whatever the site's size.
import { sql } from 'kysely'
import type { Db } from '../db/index.js'
import { engineOf } from '../db/index.js'
import type { NotificationFanoutsTable, NotificationsTable } from '../db/schema.js'
import { NOTIFICATIONS_KEPT } from '../api/notifications.js'

export type NotificationRow = NotificationsTable

export interface NewNotification {
  id: string
  userId: string
  kind: string
  createdAt: string
  packRowId: string | null
  data: Record<string, unknown>
}

export async function insertNotification(db: Db, n: NewNotification): Promise<void> {
  await db.insertInto('notifications').values({
    id: n.id, user_id: n.userId, kind: n.kind, created_at: n.createdAt, read_at: null, pack_row_id: n.packRowId, data: JSON.stringify(n.data),
  }).execute()
  await dropPastKept(db, [n.userId])
}

/** A fan-out as the worker reads it (its claim is the worker's business, not the row's). */
export type FanoutRow = Omit<NotificationFanoutsTable, 'claimed_until' | 'claimed_by'>

/** A notice for all of a pack's followers, to be told in batches (tellNextFollowers); one row, in the change's transaction. */
export async function insertFanout(db: Db, row: Omit<FanoutRow, 'after_user_id'>): Promise<void> {
  await db.insertInto('notification_fanouts').values({ ...row, after_user_id: '', claimed_until: null, claimed_by: null }).execute()
}

/**
 * Claims the oldest fan-out that is not claimed (or whose claim ran out) for `claimer` until `until`. SQLite has
 * one writer at a time; on PostgreSQL the row is picked FOR UPDATE SKIP LOCKED, so two instances take two.
 */
export async function claimFanout(db: Db, claimer: string, now: string, until: string): Promise<FanoutRow | undefined> {
  const due = sql`select id from notification_fanouts where claimed_until is null or claimed_until <= ${now} order by created_at, id limit 1`
  const picked = engineOf(db) === 'postgres' ? sql`${due} for update skip locked` : due
  const result = await sql<FanoutRow>`
    update notification_fanouts set claimed_by = ${claimer}, claimed_until = ${until}
    where id in (${picked})
    returning id, pack_row_id, except_user_id, kind, data, created_at, after_user_id`.execute(db)
  return result.rows[0]
}

/**
 * Tells the next `batch` followers of the fan-out's pack (in users.id order, after its cursor; but its causer
 * and disabled accounts), drops what falls past the bound for them, and
 * moves the cursor, if the claim is still `claimer`'s. Returns how many followers it reached (0: done, or the
 * claim was lost). The caller passes one transaction.
 */
export async function tellNextFollowers(db: Db, fanout: FanoutRow, claimer: string, batch: number, claimUntil: string): Promise<number> {
  const mine = await db.selectFrom('notification_fanouts').select('after_user_id').where('id', '=', fanout.id).where('claimed_by', '=', claimer).executeTakeFirst()
  if (!mine) return 0
  const followers = await db.selectFrom('pack_follows as f').innerJoin('users as u', 'u.id', 'f.user_id')
    .select('f.user_id')
    .where('f.pack_row_id', '=', fanout.pack_row_id)
    .where('f.user_id', '>', mine.after_user_id)
    .where('u.disabled_at', 'is', null)
    .orderBy('f.user_id')
    .limit(batch)
    .execute()
  const told = followers.map((f) => f.user_id).filter((id) => id !== fanout.except_user_id)
  if (told.length > 0) {
    await db.insertInto('notifications')
      .values(told.map((userId) => ({
        id: `${fanout.id}:${userId}`, user_id: userId, kind: fanout.kind, created_at: fanout.created_at, read_at: null, pack_row_id: fanout.pack_row_id, data: fanout.data,
      })))
      // Told already by a batch whose transaction committed before its claim was lost: once is enough.
      .onConflict((oc) => oc.column('id').doNothing())
      .execute()
    await dropPastKept(db, told)
  }
  if (followers.length === 0) return 0
  await db.updateTable('notification_fanouts').set({ after_user_id: followers.at(-1)!.user_id, claimed_until: claimUntil }).where('id', '=', fanout.id).execute()
  return followers.length
}

/** A fan-out that reached its last follower is done (if it is still `claimer`'s). */
export async function deleteFanout(db: Db, id: string, claimer: string): Promise<void> {
  await db.deleteFrom('notification_fanouts').where('id', '=', id).where('claimed_by', '=', claimer).execute()
}

/** Fan-outs not done yet (the statistics, the tests). */
export async function countFanouts(db: Db): Promise<number> {
  const row = await db.selectFrom('notification_fanouts').select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow()
  return Number(row.n)
}

/**
 * Drops, for each of `userIds`, what lies past their newest NOTIFICATIONS_KEPT: the oldest kept one is found
 * by one step down the (user_id, created_at, id) index, and what is older goes (nearly always one row, or none).
 */
async function dropPastKept(db: Db, userIds: readonly string[]): Promise<void> {
  for (const userId of userIds) {
    const oldestKept = await db.selectFrom('notifications').select(['created_at', 'id']).where('user_id', '=', userId)
      .orderBy('created_at', 'desc').orderBy('id', 'desc').offset(NOTIFICATIONS_KEPT - 1).limit(1).executeTakeFirst()
    if (!oldestKept) continue
    await db.deleteFrom('notifications').where('user_id', '=', userId)
      .where((eb) => eb.or([
        eb('created_at', '<', oldestKept.created_at),
        eb.and([eb('created_at', '=', oldestKept.created_at), eb('id', '<', oldestKept.id)]),
      ]))
      .execute()
  }
}

export async function listNotifications(db: Db, userId: string, unreadOnly: boolean, limit: number, offset: number): Promise<NotificationRow[]> {
  let q = db.selectFrom('notifications').selectAll().where('user_id', '=', userId)
  if (unreadOnly) q = q.where('read_at', 'is', null)
  return q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).offset(offset).execute()
}

export async function countNotifications(db: Db, userId: string): Promise<{ total: number; unread: number }> {
  const row = await db.selectFrom('notifications')
    .select((eb) => [
      eb.fn.countAll<number | string>().as('total'),
      eb.fn.count<number | string>('read_at').as('read'),
    ])
    .where('user_id', '=', userId)
    .executeTakeFirstOrThrow()
  return { total: Number(row.total), unread: Number(row.total) - Number(row.read) }
}

/** The unread count alone (every page's header shows it): a count over the partial index of unread rows. */
export async function countUnread(db: Db, userId: string): Promise<number> {
  const row = await db.selectFrom('notifications').select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('user_id', '=', userId).where('read_at', 'is', null).executeTakeFirstOrThrow()
  return Number(row.n)
}

/** Marks one of the user's notifications read; false when they have none with that id. */
export async function markRead(db: Db, userId: string, id: string, at: string): Promise<boolean> {
  const found = await db.selectFrom('notifications').select('read_at').where('id', '=', id).where('user_id', '=', userId).executeTakeFirst()
  if (!found) return false
  if (found.read_at === null) await db.updateTable('notifications').set({ read_at: at }).where('id', '=', id).where('user_id', '=', userId).execute()
  return true
}

export async function markAllRead(db: Db, userId: string, at: string): Promise<number> {
  const result = await db.updateTable('notifications').set({ read_at: at }).where('user_id', '=', userId).where('read_at', 'is', null).executeTakeFirst()
  return Number(result.numUpdatedRows)
}
