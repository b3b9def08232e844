// What the site tells each user (docs/notifications.md): written by the change that causes it, in that
// change's transaction (the caller passes it as `db`), so a notice never claims what did not happen and
// never misses what did; read and marked read by the user it is for.
import { randomBytes } from 'node:crypto'
import { EventEmitter } from 'node:events'
import type { Db } from '../db/index.js'
import { nowIso } from '../db/time.js'
import { NotFound } from '../errors.js'
import type { NotificationKind, NotificationListBody } from '../api/notifications.js'
import type { NotificationData } from './mapper.js'
import { toNotification } from './mapper.js'
import {
  countNotifications, countUnread, insertFanout, insertNotification, listNotifications, markAllRead, markRead,
} from './repository.js'

/**
 * A notification's id: the time in base 36 first, so that new rows go to the end of the primary key's index
 * (a random id would write into its middle, several times slower at a million rows), then 48 random bits.
 */
export function newNotificationId(now: number): string {
  return `${now.toString(36).padStart(9, '0')}-${randomBytes(6).toString('hex')}`
}

/** This process's fan-out worker (./fanout.ts) hears that one was written, to start on it soon after the commit. */
export const fanoutWritten = new EventEmitter()

/** One notification for one user; call it with the transaction that makes the change. */
export async function notifyUser(db: Db, userId: string, kind: NotificationKind, packRowId: string | null, data: NotificationData, now = Date.now()): Promise<void> {
  await insertNotification(db, { id: newNotificationId(now), userId, kind, createdAt: nowIso(now), packRowId, data: { ...data } })
}

/**
 * The same notification for everyone following the pack (when the change happens) but `exceptUserId` (who
 * caused it) and disabled accounts; call it with the change's transaction. It writes one row, however many
 * follow: the followers' notices are written from it just after the commit, a few hundred per transaction
 * (./fanout.ts), so a pack with 10,000 followers does not hold the publish (and, on SQLite, every other
 * request) for the seconds that 10,000 inserts take.
 */
export async function notifyFollowers(db: Db, packRowId: string, exceptUserId: string | null, kind: NotificationKind, data: NotificationData, now = Date.now()): Promise<void> {
  await insertFanout(db, { id: newNotificationId(now), pack_row_id: packRowId, except_user_id: exceptUserId, kind, data: JSON.stringify(data), created_at: nowIso(now) })
  fanoutWritten.emit('written')
}

export async function notificationsFor(db: Db, userId: string, query: { unread?: boolean | undefined; limit: number; offset: number }): Promise<NotificationListBody> {
  const [rows, counts] = await Promise.all([
    listNotifications(db, userId, query.unread === true, query.limit, query.offset),
    countNotifications(db, userId),
  ])
  return { items: rows.map(toNotification), unread: counts.unread, total: counts.total }
}

export function unreadCountFor(db: Db, userId: string): Promise<number> {
  return countUnread(db, userId)
}

export async function markNotificationRead(db: Db, userId: string, id: string, now = Date.now()): Promise<void> {
  if (!(await markRead(db, userId, id, nowIso(now)))) throw new NotFound('notification not found')
}

export async function markAllNotificationsRead(db: Db, userId: string, now = Date.now()): Promise<number> {
  return markAllRead(db, userId, nowIso(now))
}
