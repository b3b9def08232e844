// Drafts of the create-page form. Lookups take the owner, so "someone
// else's draft" and "no such draft" are the same answer.
import type { Db } from '../db/index.js'
import type { DraftsTable } from '../db/schema.js'
import { nowIso } from '../db/time.js'
import { checkDraftQuota, findDraftOwnerId, lockUserQuotas } from '../uploads/quota-repository.js'

export type DraftRow = DraftsTable

export async function findOwnedDraft(db: Db, userId: string, draftId: string): Promise<DraftRow | undefined> {
  return db.selectFrom('drafts').selectAll().where('id', '=', draftId).where('user_id', '=', userId).executeTakeFirst()
}

/**
 * Creates or updates the caller's draft; returns the new updated_at, or
 * undefined when it is someone else's. Creating one past the caller's
 * `maxDrafts` is a Conflict. An autosave of an existing draft (nearly every
 * call) is one UPDATE; only a new UUID takes the quota lock and counts.
 */
export async function saveDraft(db: Db, userId: string, draftId: string, data: string, maxDrafts: number): Promise<string | undefined> {
  const now = nowIso()
  const updated = await db.updateTable('drafts').set({ data, updated_at: now })
    .where('id', '=', draftId).where('user_id', '=', userId).executeTakeFirst()
  if (Number(updated.numUpdatedRows) > 0) return now
  return db.transaction().execute(async (trx) => {
    await lockUserQuotas(trx, userId)
    const owner = await findDraftOwnerId(trx, draftId)
    if (owner === undefined) await checkDraftQuota(trx, userId, maxDrafts)
    else if (owner !== userId) return undefined
    await trx
      .insertInto('drafts')
      .values({ id: draftId, user_id: userId, data, created_at: now, updated_at: now })
      .onConflict((oc) => oc.column('id').doUpdateSet({ data, updated_at: now }).where('drafts.user_id', '=', userId))
      .execute()
    const row = await findOwnedDraft(trx, userId, draftId)
    return row?.updated_at
  })
}

export async function deleteDraftRow(db: Db, draftId: string): Promise<void> {
  await db.deleteFrom('drafts').where('id', '=', draftId).execute()
}

export async function listAbandonedDraftIds(db: Db, updatedBefore: string, limit: number): Promise<string[]> {
  const rows = await db.selectFrom('drafts').select('id').where('updated_at', '<', updatedBefore).orderBy('updated_at').limit(limit).execute()
  return rows.map((r) => r.id)
}

/** One line of "My drafts", before its data is read. */
export interface DraftListRow {
  id: string
  /** The stored JSON text. */
  data: string
  updatedAt: string
  /** The owner's pending uploads of the draft. */
  uploads: number
}

/**
 * The caller's drafts, most recently saved first. Ownership is in the WHERE
 * clause (and in the count, so only the owner's uploads are counted).
 */
export async function listOwnDrafts(db: Db, userId: string): Promise<DraftListRow[]> {
  const rows = await db
    .selectFrom('drafts')
    .select((eb) => [
      'drafts.id', 'drafts.data', 'drafts.updated_at',
      eb.selectFrom('uploads').select(eb.fn.countAll<number | string>().as('n'))
        .whereRef('uploads.draft_id', '=', 'drafts.id').whereRef('uploads.user_id', '=', 'drafts.user_id').as('uploads'),
    ])
    .where('drafts.user_id', '=', userId)
    .orderBy('drafts.updated_at', 'desc')
    .orderBy('drafts.id')
    .execute()
  return rows.map((r) => ({ id: r.id, data: r.data, updatedAt: r.updated_at, uploads: Number(r.uploads) }))
}
