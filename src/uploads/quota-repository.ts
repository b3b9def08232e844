// What a user holds in progress, counted against their quotas (docs/decisions.md#quotas): pending uploads and
// drafts. An upload into a draft claims the draft here, under the drafts cap; the lock serialises the checks.
import type { Db } from '../db/index.js'
import { nowIso } from '../db/time.js'
import { Conflict } from '../errors.js'

/** What one user's pending uploads hold now. */
export interface PendingUsage {
  uploads: number
  bytes: number
}

export async function pendingUsage(db: Db, userId: string): Promise<PendingUsage> {
  const row = await db
    .selectFrom('uploads')
    .innerJoin('files', 'files.id', 'uploads.file_id')
    .select((eb) => [eb.fn.countAll<number | string>().as('n'), eb.fn.sum<number | string | null>('files.size').as('bytes')])
    .where('uploads.user_id', '=', userId)
    .executeTakeFirstOrThrow()
  return { uploads: Number(row.n), bytes: Number(row.bytes ?? 0) }
}

/**
 * Serialises the transactions that check one user's quotas and then add to
 * them (a new upload, a new draft): each takes this lock first, so two at
 * once cannot both see room for one. A no-op write to the user's row does it
 * on both engines: PostgreSQL holds the row lock until commit (READ COMMITTED
 * would otherwise let both counts miss the other's insert), and SQLite takes
 * its write lock at once instead of at the first insert. is_staff, because no
 * index covers it (PostgreSQL makes a heap-only update).
 */
export async function lockUserQuotas(db: Db, userId: string): Promise<void> {
  await db.updateTable('users').set((eb) => ({ is_staff: eb.ref('is_staff') })).where('id', '=', userId).execute()
}

/**
 * Makes sure the draft exists and is the caller's: creates it (empty) if the
 * UUID is new and the caller has fewer than `maxDrafts` drafts (a Conflict
 * otherwise). Returns false when it belongs to someone else. The caller holds
 * lockUserQuotas in the same transaction.
 */
export async function claimDraft(db: Db, userId: string, draftId: string, maxDrafts: number): Promise<boolean> {
  const existing = await findDraftOwnerId(db, draftId)
  if (existing !== undefined) return existing === userId
  await checkDraftQuota(db, userId, maxDrafts)
  const now = nowIso()
  // ON CONFLICT DO NOTHING: another user racing for the same new UUID; one row wins, the other caller gets false.
  await db
    .insertInto('drafts')
    .values({ id: draftId, user_id: userId, data: '{}', created_at: now, updated_at: now })
    .onConflict((oc) => oc.column('id').doNothing())
    .execute()
  return (await findDraftOwnerId(db, draftId)) === userId
}

/** A Conflict when the user already has `maxDrafts` drafts: no new one. */
export async function checkDraftQuota(db: Db, userId: string, maxDrafts: number): Promise<void> {
  const row = await db.selectFrom('drafts').select((eb) => eb.fn.countAll<number | string>().as('n')).where('user_id', '=', userId).executeTakeFirstOrThrow()
  if (Number(row.n) >= maxDrafts) {
    throw new Conflict(`you already have ${Number(row.n)} drafts, the most one user may keep (${maxDrafts}); publish or delete some (My drafts) to start another`)
  }
}

/** Who owns the draft, if it exists: the create page tells "new" (empty form) from "someone else's" (404). */
export async function findDraftOwnerId(db: Db, draftId: string): Promise<string | undefined> {
  const row = await db.selectFrom('drafts').select('user_id').where('id', '=', draftId).executeTakeFirst()
  return row?.user_id
}
