// Drafts of the create page (/api/draft/): load, autosave, delete, and
// the caller's list; removing drafts with their uploads and bytes (on request and by the sweep).
// Publishing one is the packs' use case (src/packs/publish-service.ts).
import type { Db } from '../db/index.js'
import { NotFound } from '../errors.js'
import type { FileStore } from '../storage/index.js'
import { deleteUploadRows, listDraftUploads, listUploadsOfDrafts, type PendingUpload } from '../uploads/repository.js'
import { deleteFileRows } from '../files/repository.js'
import { deleteStoredFiles, type PurgeLog } from '../storage/delete.js'
import { checkDraftData, draftIdOf, parseDraftData, readDraftFields, type DraftFields } from './data.js'
import { deleteDraftRow, findOwnedDraft, listOwnDrafts, saveDraft } from './repository.js'
import { findDraftOwnerId } from '../uploads/quota-repository.js'

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

/** A draft as the create page edits it. */
export interface EditedDraft {
  /** The saved form's fields; all empty for a draft not saved yet. */
  fields: DraftFields
  /** The owner's pending uploads of the draft, oldest first. */
  uploads: PendingUpload[]
  /** When it was last saved; null for a draft not saved yet. */
  savedAt: string | null
}

/**
 * The draft the create page edits under this UUID: the caller's, with its
 * uploads, or an empty one when nobody has saved under it yet (the first
 * autosave or upload makes the row). Someone else's draft is undefined, so the
 * page can answer as for any missing page and show nothing of it.
 */
export async function draftForEditing(db: Db, userId: string, draftUuid: string): Promise<EditedDraft | undefined> {
  const draftId = draftIdOf(draftUuid)
  const ownerId = await findDraftOwnerId(db, draftId)
  if (ownerId !== undefined && ownerId !== userId) return undefined
  const draft = ownerId === undefined ? undefined : await findOwnedDraft(db, userId, draftId)
  return {
    fields: readDraftFields(draft?.data ?? '{}'),
    uploads: draft ? await listDraftUploads(db, userId, draftId) : [],
    savedAt: draft?.updated_at ?? null,
  }
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

/** Deletes the drafts, their pending uploads and those uploads' files. */
export async function purgeDrafts(db: Db, store: FileStore, draftIds: readonly string[], log?: PurgeLog): Promise<void> {
  if (draftIds.length === 0) return
  const storageKeys = await db.transaction().execute(async (trx) => {
    const uploads = await listUploadsOfDrafts(trx, draftIds)
    await deleteUploadRows(trx, uploads.map((u) => u.id))
    await deleteFileRows(trx, uploads.map((u) => u.fileId))
    for (const id of draftIds) await deleteDraftRow(trx, id)
    return uploads.map((u) => u.storageKey)
  })
  await deleteStoredFiles(store, storageKeys, log)
}
