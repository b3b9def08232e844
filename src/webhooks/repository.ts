// The webhooks' SQL: the webhooks themselves, the outbox's claims and
// outcomes (webhook_deliveries), and the delivery log (webhook_attempts).
import { sql, type Insertable, type Selectable, type Updateable } from 'kysely'
import type { Db } from '../db/index.js'
import { engineOf } from '../db/index.js'
import type { WebhookAttemptsTable, WebhookDeliveriesTable, WebhooksTable } from '../db/schema.js'

export type WebhookRow = Selectable<WebhooksTable>
export type DeliveryRow = Selectable<WebhookDeliveriesTable>

export async function insertWebhook(db: Db, row: Insertable<WebhooksTable>): Promise<void> {
  await db.insertInto('webhooks').values(row).execute()
}

export async function listWebhooks(db: Db, packRowId: string): Promise<WebhookRow[]> {
  return db.selectFrom('webhooks').selectAll().where('pack_row_id', '=', packRowId).orderBy('created_at').orderBy('id').execute()
}

export async function findWebhook(db: Db, packRowId: string, id: string): Promise<WebhookRow | undefined> {
  return db.selectFrom('webhooks').selectAll().where('pack_row_id', '=', packRowId).where('id', '=', id).executeTakeFirst()
}

export async function findWebhookById(db: Db, id: string): Promise<WebhookRow | undefined> {
  return db.selectFrom('webhooks').selectAll().where('id', '=', id).executeTakeFirst()
}

/**
 * Takes the row locks of the user adding a webhook and of its pack (PostgreSQL; SQLite runs one writer at a
 * time), before the bounds are counted.
 */
export async function lockForAdding(db: Db, userId: string, packRowId: string): Promise<void> {
  if (engineOf(db) !== 'postgres') return
  await sql`select id from users where id = ${userId} for update`.execute(db)
  await sql`select id from packs where id = ${packRowId} for no key update`.execute(db)
}

/** How many webhooks a pack has (`pack_row_id`), or a user has added (`created_by`). */
export async function countWebhooks(db: Db, column: 'pack_row_id' | 'created_by', value: string): Promise<number> {
  const row = await db.selectFrom('webhooks').select((eb) => eb.fn.countAll<number | string>().as('n')).where(column, '=', value).executeTakeFirstOrThrow()
  return Number(row.n)
}

export type WebhookChanges = Omit<Updateable<WebhooksTable>, 'id' | 'pack_row_id' | 'created_by' | 'created_at'>

export async function updateWebhook(db: Db, id: string, changes: WebhookChanges): Promise<void> {
  await db.updateTable('webhooks').set(changes).where('id', '=', id).execute()
}

export async function deleteWebhook(db: Db, id: string): Promise<void> {
  // Its deliveries and attempts go with it (foreign keys, on delete cascade).
  await db.deleteFrom('webhooks').where('id', '=', id).execute()
}

/** The usernames of the given user ids (who added each webhook). */
export async function usernamesOf(db: Db, ids: readonly string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map()
  const rows = await db.selectFrom('users').select(['id', 'username']).where('id', 'in', [...new Set(ids)]).execute()
  return new Map(rows.map((r) => [r.id, r.username]))
}

export async function insertDelivery(db: Db, row: Pick<DeliveryRow, 'id' | 'webhook_id' | 'event' | 'payload' | 'created_at'>): Promise<void> {
  await db.insertInto('webhook_deliveries').values({
    ...row, state: 'pending', attempts: 0, next_attempt_at: row.created_at, claimed_until: null, claimed_by: null, finished_at: null,
  }).execute()
}

export async function findDelivery(db: Db, webhookId: string, id: string): Promise<DeliveryRow | undefined> {
  return db.selectFrom('webhook_deliveries').selectAll().where('webhook_id', '=', webhookId).where('id', '=', id).executeTakeFirst()
}

/** A finished (or waiting) delivery is due again now; its message id and body stay the same. */
export async function requeueDelivery(db: Db, id: string, at: string): Promise<void> {
  await db.updateTable('webhook_deliveries')
    .set({ state: 'pending', next_attempt_at: at, finished_at: null })
    .where('id', '=', id).execute()
}

/**
 * Claims up to `limit` due deliveries for `claimer` until `until`: each is then tried by this claimer alone
 * until its claim runs out. On PostgreSQL the rows are picked FOR UPDATE SKIP LOCKED, so instances claiming at
 * once take different rows without waiting on each other; SQLite has one writer at a time, and the one
 * UPDATE … RETURNING picks and claims in a single step. A claim that ran out (a process killed mid-try) is
 * due again.
 */
export async function claimDue(db: Db, claimer: string, now: string, until: string, limit: number): Promise<DeliveryRow[]> {
  const due = sql`
    select d.id from webhook_deliveries d
    where d.state = 'pending' and d.next_attempt_at <= ${now} and (d.claimed_until is null or d.claimed_until <= ${now})
    order by d.next_attempt_at, d.id
    limit ${limit}`
  const picked = engineOf(db) === 'postgres' ? sql`${due} for update skip locked` : due
  const result = await sql<DeliveryRow>`
    update webhook_deliveries set claimed_by = ${claimer}, claimed_until = ${until}
    where id in (${picked})
    returning *`.execute(db)
  return result.rows
}

/** When the next delivery is due (to sleep until then), if any is waiting. */
export async function nextDueAt(db: Db): Promise<string | undefined> {
  const row = await db.selectFrom('webhook_deliveries').select('next_attempt_at').where('state', '=', 'pending')
    .orderBy('next_attempt_at').limit(1).executeTakeFirst()
  return row?.next_attempt_at
}

export interface AttemptOutcome {
  id: string
  startedAt: string
  durationMs: number
  status: number | null
  error: string | null
  response: string
}

/**
 * Records a try of a claimed delivery and where the delivery stands after it, if the claim is still
 * `claimer`'s (a claim that ran out and was taken by another instance is theirs to finish: nothing is
 * written). Returns whether it was written.
 */
export async function finishAttempt(db: Db, delivery: DeliveryRow, claimer: string, outcome: AttemptOutcome,
  next: { state: 'pending' | 'delivered' | 'failed'; nextAttemptAt: string; finishedAt: string | null }, keep: number): Promise<boolean> {
  const updated = await db.updateTable('webhook_deliveries')
    .set((eb) => ({
      state: next.state, attempts: eb('attempts', '+', 1), next_attempt_at: next.nextAttemptAt, finished_at: next.finishedAt,
      claimed_by: null, claimed_until: null,
    }))
    .where('id', '=', delivery.id).where('claimed_by', '=', claimer)
    .executeTakeFirst()
  if (Number(updated.numUpdatedRows) === 0) return false
  await db.insertInto('webhook_attempts').values({
    id: outcome.id, delivery_id: delivery.id, webhook_id: delivery.webhook_id, started_at: outcome.startedAt, attempt: delivery.attempts + 1,
    duration_ms: Math.max(0, Math.round(outcome.durationMs)), status: outcome.status, error: outcome.error, response: outcome.response,
  }).execute()
  await pruneAttempts(db, delivery.webhook_id, keep)
  return true
}

/** Keeps a webhook's newest `keep` attempts. */
async function pruneAttempts(db: Db, webhookId: string, keep: number): Promise<void> {
  const cutoff = await db.selectFrom('webhook_attempts').select(['started_at', 'id']).where('webhook_id', '=', webhookId)
    .orderBy('started_at', 'desc').orderBy('id', 'desc').offset(keep).limit(1).executeTakeFirst()
  if (!cutoff) return
  await db.deleteFrom('webhook_attempts').where('webhook_id', '=', webhookId)
    .where((eb) => eb.or([
      eb('started_at', '<', cutoff.started_at),
      eb.and([eb('started_at', '=', cutoff.started_at), eb('id', '<=', cutoff.id)]),
    ]))
    .execute()
}

/** After a success its failure count starts again; after a failure it grows. Returns the count now. */
export async function countFailure(db: Db, webhookId: string, failed: boolean): Promise<number> {
  if (!failed) {
    await db.updateTable('webhooks').set({ failures: 0 }).where('id', '=', webhookId).where('failures', '>', 0).execute()
    return 0
  }
  await db.updateTable('webhooks').set((eb) => ({ failures: eb('failures', '+', 1) })).where('id', '=', webhookId).execute()
  const row = await db.selectFrom('webhooks').select('failures').where('id', '=', webhookId).executeTakeFirst()
  return Number(row?.failures ?? 0)
}

/** Switches a webhook off; what it still had waiting fails with it. Returns false when it was off already. */
export async function disableWebhook(db: Db, id: string, at: string, reason: string): Promise<boolean> {
  const updated = await db.updateTable('webhooks').set({ disabled_at: at, disabled_reason: reason, updated_at: at })
    .where('id', '=', id).where('disabled_at', 'is', null).executeTakeFirst()
  if (Number(updated.numUpdatedRows) === 0) return false
  await db.updateTable('webhook_deliveries').set({ state: 'failed', finished_at: at, claimed_by: null, claimed_until: null })
    .where('webhook_id', '=', id).where('state', '=', 'pending').execute()
  return true
}

export interface AttemptRecord extends Selectable<WebhookAttemptsTable> {
  event: string
  state: string
}

export async function listAttempts(db: Db, webhookId: string, limit: number): Promise<AttemptRecord[]> {
  return db.selectFrom('webhook_attempts as a')
    .innerJoin('webhook_deliveries as d', 'd.id', 'a.delivery_id')
    .selectAll('a').select(['d.event', 'd.state'])
    .where('a.webhook_id', '=', webhookId)
    .orderBy('a.started_at', 'desc').orderBy('a.id', 'desc')
    .limit(limit)
    .execute()
}

/** Finished deliveries older than `before` (and their attempts, by cascade) go: the outbox does not grow without end. */
export async function deleteFinishedBefore(db: Db, before: string, limit: number): Promise<number> {
  const result = await db.deleteFrom('webhook_deliveries')
    .where('id', 'in', (eb) => eb.selectFrom('webhook_deliveries').select('id')
      .where('state', '<>', 'pending').where('finished_at', '<', before).limit(limit))
    .executeTakeFirst()
  return Number(result.numDeletedRows)
}

/** How many deliveries wait, in all (for the statistics). */
export async function countPending(db: Db): Promise<number> {
  const row = await db.selectFrom('webhook_deliveries').select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('state', '=', 'pending').executeTakeFirstOrThrow()
  return Number(row.n)
}
