// Drafts of the create page (SPEC: /api/draft/): load, autosave, delete, and
// the caller's list. Publishing one is the packs' use case (src/packs/service.ts).
import type { Db } from '../db/index.js'
import { NotFound } from '../errors.js'
import type { FileStore } from '../storage/index.js'
import { listDraftUploads, type PendingUpload } from '../uploads/repository.js'
import { purgeDrafts, type PurgeLog } from '../uploads/pending.js'
import { checkDraftData, draftIdOf, parseDraftData, readDraftFields } from './data.js'
import { findOwnedDraft, listOwnDrafts, saveDraft } from './repository.js'

export interface LoadedDraft {
  /** The saved data, as saved. */
  data: Record<string, unknown>
  /** The owner's pending uploads of the draft, oldest first. */
  uploads: PendingUpload[]
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

/** The caller's draft and its pending uploads; someone else's draft is NotFound, like a missing one. */
export async function loadDraft(db: Db, userId: string, draftUuid: string): Promise<LoadedDraft> {
  const draft = await findOwnedDraft(db, userId, draftIdOf(draftUuid))
  if (!draft) throw new NotFound('draft not found')
  return { data: parseDraftData(draft.data), uploads: await listDraftUploads(db, userId, draft.id) }
}

/**
 * Creates the draft if the UUID is new, else updates the caller's; returns
 * when it was saved. Someone else's draft is NotFound; a new draft past the
 * caller's `maxDrafts` a Conflict.
 */
export async function autosaveDraft(db: Db, userId: string, draftUuid: string, data: Record<string, unknown>, maxDrafts: number): Promise<string> {
  checkDraftData(data)
  const updatedAt = await saveDraft(db, userId, draftIdOf(draftUuid), JSON.stringify(data), maxDrafts)
  if (updatedAt === undefined) throw new NotFound('draft not found')
  return updatedAt
}

/** Deletes the caller's draft and its pending uploads, their stored files included. */
export async function deleteDraft(db: Db, store: FileStore, userId: string, draftUuid: string, log?: PurgeLog): Promise<void> {
  const draft = await findOwnedDraft(db, userId, draftIdOf(draftUuid))
  if (!draft) throw new NotFound('draft not found')
  await purgeDrafts(db, store, [draft.id], log)
}

/** The caller's drafts, most recently saved first. */
export async function listDrafts(db: Db, userId: string): Promise<DraftSummary[]> {
  const rows = await listOwnDrafts(db, userId)
  return rows.map((r) => ({ id: r.id, title: readDraftFields(r.data).title.trim() || null, updatedAt: r.updatedAt, uploads: r.uploads }))
}
