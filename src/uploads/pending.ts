// Removing pending uploads and drafts together with their stored bytes: on
// request (upload delete, draft delete) and by the periodic sweep.
import type { Db } from '../db/index.js'
import { deleteDraftRow, listAbandonedDraftIds } from '../drafts/repository.js'
import { deleteFileRows } from '../files/repository.js'
import { deleteUploadRows, listExpiredUploads, listUploadsOfDrafts, type PendingUpload } from './repository.js'
import { nowIso } from '../db/time.js'
import type { FileStore } from '../storage/index.js'

/** Where a failed byte delete is reported; the caller's request or sweep logger. */
export interface PurgeLog {
  warn(details: object, message: string): void
}

/**
 * Deletes the uploads' rows and their files' rows in one transaction, then the
 * bytes. Rows go first: a crash in between leaves unreferenced bytes (harmless)
 * rather than rows pointing at nothing.
 */
export async function purgeUploads(db: Db, store: FileStore, uploads: readonly PendingUpload[], log?: PurgeLog): Promise<void> {
  if (uploads.length === 0) return
  await db.transaction().execute(async (trx) => {
    await deleteUploadRows(trx, uploads.map((u) => u.id))
    await deleteFileRows(trx, uploads.map((u) => u.fileId))
  })
  await deleteStoredFiles(store, uploads.map((u) => u.storageKey), log)
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

/**
 * Deletes bytes by their storage keys (files.storage_key, never a file id).
 * Once the rows are gone the deletion has happened as far as anyone can see;
 * bytes that storage failed to drop (it is down) are only unreferenced, and
 * the consistency check (`packs doctor`, also run by the sweep) removes them
 * later. So a failure is logged, not thrown: the client is not told "try
 * again" for a delete that already took effect.
 */
export async function deleteStoredFiles(store: FileStore, keys: readonly string[], log?: PurgeLog): Promise<void> {
  const results = await Promise.allSettled(keys.map((key) => store.delete(key)))
  results.forEach((result, i) => {
    if (result.status === 'rejected') log?.warn({ err: result.reason, key: keys[i] }, 'could not delete stored bytes; the consistency check will remove them')
  })
}

export interface SweepResult {
  uploads: number
  drafts: number
}

const SWEEP_BATCH = 500

/** One pass: expired pending uploads, then drafts untouched for longer than `draftTtlMs`. */
export async function sweepExpired(db: Db, store: FileStore, draftTtlMs: number, now = Date.now()): Promise<SweepResult> {
  const result: SweepResult = { uploads: 0, drafts: 0 }
  for (;;) {
    const expired = await listExpiredUploads(db, nowIso(now), SWEEP_BATCH)
    await purgeUploads(db, store, expired)
    result.uploads += expired.length
    if (expired.length < SWEEP_BATCH) break
  }
  for (;;) {
    const abandoned = await listAbandonedDraftIds(db, nowIso(now - draftTtlMs), SWEEP_BATCH)
    await purgeDrafts(db, store, abandoned)
    result.drafts += abandoned.length
    if (abandoned.length < SWEEP_BATCH) break
  }
  return result
}
