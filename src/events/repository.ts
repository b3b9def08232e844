// The SQL of recording what happened to a pack: the pack's facts an event carries, and the outbox rows
// (webhook_deliveries) of the webhooks that receive it. The caller passes the change's transaction.
import { sql } from 'kysely'
import type { Db } from '../db/index.js'

export interface EventPack {
  id: string
  namespace: string
  packId: string
  shortId: string | null
  title: string
  summary: string
  ownerId: string
  thumbnailFileId: string | null
  /** Not hidden by staff, owner not disabled: what everyone may see. */
  listed: boolean
}

export async function findEventPack(db: Db, packRowId: string): Promise<EventPack | undefined> {
  const row = await db.selectFrom('packs')
    .select(['id', 'namespace', 'pack_id', 'short_id', 'title', 'summary', 'owner_id', 'thumbnail_file_id', 'hidden_at', 'owner_disabled'])
    .where('id', '=', packRowId)
    .executeTakeFirst()
  if (!row) return undefined
  return {
    id: row.id, namespace: row.namespace, packId: row.pack_id, shortId: row.short_id, title: row.title, summary: row.summary,
    ownerId: row.owner_id, thumbnailFileId: row.thumbnail_file_id, listed: row.hidden_at === null && Number(row.owner_disabled) === 0,
  }
}

export interface EventVersion {
  id: string
  shortId: string | null
  name: string
  changelog: string
  createdAt: string
  yanked: boolean
}

export async function findEventVersion(db: Db, packRowId: string, name: string): Promise<EventVersion | undefined> {
  const row = await db.selectFrom('versions').select(['id', 'short_id', 'name', 'changelog', 'created_at', 'yanked_at'])
    .where('pack_id', '=', packRowId).where('name', '=', name).executeTakeFirst()
  return row && { id: row.id, shortId: row.short_id, name: row.name, changelog: row.changelog, createdAt: row.created_at, yanked: row.yanked_at !== null }
}

/**
 * The pack's webhooks that receive `event`: switched on, subscribed to it, and with fewer than `maxPending`
 * deliveries still waiting (an endpoint that has been down for a while gets no more until it drains: the
 * outbox stays bounded).
 */
export async function webhooksFor(db: Db, packRowId: string, event: string, maxPending: number): Promise<Array<{ id: string; pending: number }>> {
  const rows = await db.selectFrom('webhooks as w')
    .select((eb) => [
      'w.id',
      eb.selectFrom('webhook_deliveries as d').select((e) => e.fn.countAll<number | string>().as('n'))
        .whereRef('d.webhook_id', '=', 'w.id').where('d.state', '=', 'pending').as('pending'),
    ])
    .where('w.pack_row_id', '=', packRowId)
    .where('w.disabled_at', 'is', null)
    .where(sql<boolean>`(',' || w.events || ',') like ${`%,${event},%`}`)
    .execute()
  return rows.map((r) => ({ id: r.id, pending: Number(r.pending ?? 0) })).filter((r) => r.pending < maxPending)
}

export interface NewDelivery {
  id: string
  webhookId: string
  event: string
  payload: string
  createdAt: string
}

export async function insertDeliveries(db: Db, deliveries: readonly NewDelivery[]): Promise<void> {
  if (deliveries.length === 0) return
  await db.insertInto('webhook_deliveries').values(deliveries.map((d) => ({
    id: d.id, webhook_id: d.webhookId, event: d.event, payload: d.payload, created_at: d.createdAt, state: 'pending',
    attempts: 0, next_attempt_at: d.createdAt, claimed_until: null, claimed_by: null, finished_at: null,
  }))).execute()
}
