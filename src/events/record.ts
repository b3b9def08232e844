// What happened to a pack, told to those who asked to hear about it
// (docs/notifications.md): its followers and its owner get notifications, its
// webhooks get a delivery in the outbox. recordPackEvent is called by the
// service that makes the change, with the change's transaction, beside its
// audit entry: the event is committed exactly when the change is, so it is
// never lost (a crash before the commit loses both) and never told of a change
// that did not happen (a rollback takes both). Deliveries are sent after the
// commit by the webhooks' dispatcher (src/webhooks/dispatcher.ts).
import { randomUUID } from 'node:crypto'
import { EventEmitter } from 'node:events'
import type { Db } from '../db/index.js'
import { nowIso } from '../db/time.js'
import type { WebhookEvent } from '../api/webhooks.js'
import type { Actor } from '../audit/service.js'
import { notifyFollowers, notifyUser } from '../notifications/service.js'
import { findEventPack, findEventVersion, insertDeliveries, webhooksFor, type EventPack } from './repository.js'

/**
 * Deliveries one webhook may have waiting; an event past that is not queued for it. A dead endpoint is
 * switched off after a day of failures (src/webhooks/dispatcher.ts), and until then this bounds what it
 * holds in the outbox.
 */
export const MAX_PENDING_PER_WEBHOOK = 1000

export interface PackEventInput {
  type: WebhookEvent
  packRowId: string
  actor: Actor
  /** The version's name, for version events. */
  version?: string
  /** A deleted version's particulars (its row is gone by the time the event is recorded). */
  deletedVersion?: { name: string; yanked: boolean }
  /** Staff's reason, for hidden / shown. */
  reason?: string
  /** pack.edited: the fields that changed. */
  changes?: readonly string[]
  now?: number
}

/** The event as stored in the outbox: the body's JSON (Standard Webhooks' type, timestamp, data) and what rendering adds. */
export interface StoredEvent {
  event: { type: string; timestamp: string; data: Record<string, unknown> }
  /** The pack's thumbnail, for a Discord embed (a link that works without the gate is made when sending). */
  thumbnailFileId: string | null
}

/** Local listeners (this process's dispatcher) hear that the outbox was written to, to look soon after the commit. */
export const outboxWritten = new EventEmitter()

export function packPath(pack: Pick<EventPack, 'namespace' | 'packId'>): string {
  return `/packs/${encodeURIComponent(pack.namespace)}/${encodeURIComponent(pack.packId)}/`
}

/** Records a pack event; call it with the transaction that makes the change, after the change. */
export async function recordPackEvent(db: Db, input: PackEventInput): Promise<void> {
  const now = input.now ?? Date.now()
  const pack = await findEventPack(db, input.packRowId)
  if (!pack) return
  const version = input.version === undefined ? undefined : await findEventVersion(db, pack.id, input.version)
  const data: Record<string, unknown> = {
    pack: { id: pack.shortId, namespace: pack.namespace, pack_id: pack.packId, title: pack.title, summary: pack.summary, url: packPath(pack) },
    actor: input.actor.id === null ? null : { username: input.actor.username, staff: input.actor.isStaff },
  }
  if (version) {
    data.version = {
      id: version.shortId, name: version.name, changelog: version.changelog, yanked: version.yanked, published_at: version.createdAt,
      url: `${packPath(pack)}#version-${encodeURIComponent(version.name)}`,
    }
  }
  if (input.deletedVersion) data.version = { name: input.deletedVersion.name, yanked: input.deletedVersion.yanked }
  if (input.reason !== undefined) data.reason = input.reason
  if (input.changes !== undefined) data.changes = [...input.changes]
  const stored: StoredEvent = { event: { type: input.type, timestamp: nowIso(now), data }, thumbnailFileId: pack.thumbnailFileId }

  await tellPeople(db, input, pack, now)
  const webhooks = await webhooksFor(db, pack.id, input.type, MAX_PENDING_PER_WEBHOOK)
  if (webhooks.length === 0) return
  const payload = JSON.stringify(stored)
  await insertDeliveries(db, webhooks.map((w) => ({ id: newMessageId(), webhookId: w.id, event: input.type, payload, createdAt: nowIso(now) })))
  outboxWritten.emit('written')
}

/** A Standard Webhooks message id: the same on every try of one delivery, so receivers can tell a retry. */
export function newMessageId(): string {
  return `msg_${randomUUID().replaceAll('-', '')}`
}

async function tellPeople(db: Db, input: PackEventInput, pack: EventPack, now: number): Promise<void> {
  const about = { namespace: pack.namespace, pack_id: pack.packId, title: pack.title }
  const byStaffOnly = input.actor.isStaff && input.actor.id !== pack.ownerId
  switch (input.type) {
    case 'version.published':
      // Followers hear of what everyone may see; a hidden pack's new version stays with its team.
      if (pack.listed && input.version !== undefined) await notifyFollowers(db, pack.id, input.actor.id, 'version.published', { ...about, version: input.version }, now)
      return
    case 'pack.hidden':
    case 'pack.shown':
      if (byStaffOnly) await notifyUser(db, pack.ownerId, input.type, pack.id, { ...about, ...(input.reason ? { reason: input.reason } : {}) }, now)
      return
    case 'version.yanked':
      if (byStaffOnly && input.version !== undefined) {
        await notifyUser(db, pack.ownerId, 'version.yanked', pack.id, { ...about, version: input.version, ...(input.reason ? { reason: input.reason } : {}) }, now)
      }
      return
    default:
      return
  }
}
