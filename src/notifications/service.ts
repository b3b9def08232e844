// What the site tells each user (docs/notifications.md): written by the change that causes it, in that
// change's transaction (the caller passes it as `db`), so a notice never claims what did not happen and
// never misses what did; read and marked read by the user it is for.
import { randomUUID } from 'node:crypto'
import type { Db } from '../db/index.js'
import { nowIso } from '../db/time.js'
import { NotFound } from '../errors.js'
import type { NotificationKind, NotificationListBody } from '../api/notifications.js'
import type { NotificationData } from './mapper.js'
import { toNotification } from './mapper.js'
import {
  countNotifications, countUnread, insertForFollowers, insertNotification, listNotifications, markAllRead, markRead,
} from './repository.js'

/** One notification for one user; call it with the transaction that makes the change. */
export async function notifyUser(db: Db, userId: string, kind: NotificationKind, packRowId: string | null, data: NotificationData, now = Date.now()): Promise<void> {
  await insertNotification(db, { id: randomUUID(), userId, kind, createdAt: nowIso(now), packRowId, data: { ...data } })
}

/**
 * The same notification for everyone following the pack but `exceptUserId` (who caused it) and disabled
 * accounts; call it with the change's transaction. Returns how many were written.
 */
export async function notifyFollowers(db: Db, packRowId: string, exceptUserId: string | null, kind: NotificationKind, data: NotificationData, now = Date.now()): Promise<number> {
  return insertForFollowers(db, packRowId, exceptUserId, { eventId: randomUUID(), kind, createdAt: nowIso(now), packRowId, data: { ...data } })
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
