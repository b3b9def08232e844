// The notifications' SQL. Each user keeps at most NOTIFICATIONS_KEPT: every
// insert drops what falls past that for the users it wrote to, in the same
// transaction, so a list and its unread count are a short range of the
// (user_id, created_at, id) index whatever the site's size.
import { sql } from 'kysely'
import type { Db } from '../db/index.js'
import type { NotificationsTable } from '../db/schema.js'
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
  await dropPastKept(db, sql`select ${n.userId} as user_id`)
}

/**
 * One notification to every follower of a pack but `exceptUserId` (who caused it): one INSERT … SELECT, the
 * ids made by the database from the event's id and the follower's (unique per event and user), then the
 * followers' oldest past the bound dropped.
 */
export async function insertForFollowers(db: Db, packRowId: string, exceptUserId: string | null, n: Omit<NewNotification, 'userId' | 'id'> & { eventId: string }): Promise<number> {
  const data = JSON.stringify(n.data)
  const result = await sql`
    insert into notifications (id, user_id, kind, created_at, read_at, pack_row_id, data)
    select ${n.eventId} || ':' || f.user_id, f.user_id, ${n.kind}, ${n.createdAt}, null, ${packRowId}, ${data}
    from pack_follows f join users u on u.id = f.user_id
    where f.pack_row_id = ${packRowId} and u.disabled_at is null ${exceptUserId === null ? sql`` : sql`and f.user_id <> ${exceptUserId}`}
  `.execute(db)
  const written = Number(result.numAffectedRows ?? 0)
  if (written > 0) await dropPastKept(db, sql`select user_id from pack_follows where pack_row_id = ${packRowId}`)
  return written
}

/** Drops, for each user `users` (a subquery of user_id) selects, what lies past their newest NOTIFICATIONS_KEPT. */
async function dropPastKept(db: Db, users: ReturnType<typeof sql>): Promise<void> {
  await sql`
    delete from notifications where id in (
      select id from (
        select n.id, row_number() over (partition by n.user_id order by n.created_at desc, n.id desc) as place
        from notifications n where n.user_id in (${users})
      ) ranked where place > ${NOTIFICATIONS_KEPT}
    )
  `.execute(db)
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
