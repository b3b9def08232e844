// Drafts of the create-page form. Lookups take the owner, so "someone
// else's draft" and "no such draft" are the same answer.
import type { Db } from './index.js'
import type { DraftsTable } from './schema.js'
import { nowIso } from './time.js'

export type DraftRow = DraftsTable

export async function findOwnedDraft(db: Db, userId: string, draftId: string): Promise<DraftRow | undefined> {
  return db.selectFrom('drafts').selectAll().where('id', '=', draftId).where('user_id', '=', userId).executeTakeFirst()
}

/**
 * Makes sure the draft exists and is the caller's: creates it (empty) if the
 * UUID is new. Returns false when it belongs to someone else.
 */
export async function claimDraft(db: Db, userId: string, draftId: string): Promise<boolean> {
  const now = nowIso()
  // ON CONFLICT DO NOTHING: two first uploads racing for one new draft both succeed, and one row wins.
  await db
    .insertInto('drafts')
    .values({ id: draftId, user_id: userId, data: '{}', created_at: now, updated_at: now })
    .onConflict((oc) => oc.column('id').doNothing())
    .execute()
  const owner = await db.selectFrom('drafts').select('user_id').where('id', '=', draftId).executeTakeFirst()
  return owner?.user_id === userId
}

/** Creates or updates the caller's draft; returns the new updated_at, or undefined when it is someone else's. */
export async function saveDraft(db: Db, userId: string, draftId: string, data: string): Promise<string | undefined> {
  const now = nowIso()
  await db
    .insertInto('drafts')
    .values({ id: draftId, user_id: userId, data, created_at: now, updated_at: now })
    .onConflict((oc) => oc.column('id').doUpdateSet({ data, updated_at: now }).where('drafts.user_id', '=', userId))
    .execute()
  const row = await findOwnedDraft(db, userId, draftId)
  return row?.updated_at
}

export async function deleteDraftRow(db: Db, draftId: string): Promise<void> {
  await db.deleteFrom('drafts').where('id', '=', draftId).execute()
}

export async function listAbandonedDraftIds(db: Db, updatedBefore: string, limit: number): Promise<string[]> {
  const rows = await db.selectFrom('drafts').select('id').where('updated_at', '<', updatedBefore).orderBy('updated_at').limit(limit).execute()
  return rows.map((r) => r.id)
}

/** Who owns the draft, if it exists: the create page tells "new" (empty form) from "someone else's" (404). */
export async function findDraftOwnerId(db: Db, draftId: string): Promise<string | undefined> {
  const row = await db.selectFrom('drafts').select('user_id').where('id', '=', draftId).executeTakeFirst()
  return row?.user_id
}

/** One line of "My drafts". */
export interface DraftSummary {
  id: string
  /** The saved title, trimmed; null when the draft has none yet. */
  title: string | null
  updatedAt: string
  /** The owner's pending uploads of the draft. */
  uploads: number
}

/**
 * The caller's drafts, most recently saved first. Ownership is in the WHERE
 * clause (and in the count, so only the owner's uploads are counted).
 */
export async function listOwnDrafts(db: Db, userId: string): Promise<DraftSummary[]> {
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
  return rows.map((r) => ({ id: r.id, title: titleOf(r.data), updatedAt: r.updated_at, uploads: Number(r.uploads) }))
}

/** The title member of a draft's stored JSON, when it is a non-blank string. */
function titleOf(data: string): string | null {
  try {
    const parsed: unknown = JSON.parse(data)
    const title = typeof parsed === 'object' && parsed !== null ? (parsed as { title?: unknown }).title : undefined
    return typeof title === 'string' && title.trim() !== '' ? title.trim() : null
  } catch {
    return null
  }
}
