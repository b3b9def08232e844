// Pending uploads. Ownership is part of every lookup's WHERE clause, so
// another user's upload is exactly as absent as a missing one.
import type { Db } from '../db/index.js'
import type { UploadsTable } from '../db/schema.js'
import type { UploadKind } from '../api/constants.js'

export type UploadRow = UploadsTable

/** An upload joined with its file: what the API shows as a TempUpload. */
export interface PendingUpload {
  id: string
  userId: string
  draftId: string | null
  kind: UploadKind
  fileId: string
  /** Where the file's bytes are in storage (files.storage_key). */
  storageKey: string
  filename: string
  contentType: string
  size: number
  packFormat: number | null
  createdAt: string
}

const pendingColumns = [
  'uploads.id', 'uploads.user_id', 'uploads.draft_id', 'uploads.kind', 'uploads.file_id', 'uploads.pack_format',
  'uploads.created_at', 'files.storage_key', 'files.filename', 'files.content_type', 'files.size',
] as const

function selectPending(db: Db) {
  return db.selectFrom('uploads').innerJoin('files', 'files.id', 'uploads.file_id').select(pendingColumns)
}

type PendingRow = Awaited<ReturnType<ReturnType<typeof selectPending>['executeTakeFirstOrThrow']>>

function toPending(row: PendingRow): PendingUpload {
  return {
    id: row.id,
    userId: row.user_id,
    draftId: row.draft_id,
    kind: row.kind as UploadKind,
    fileId: row.file_id,
    storageKey: row.storage_key,
    filename: row.filename,
    contentType: row.content_type,
    size: Number(row.size),
    packFormat: row.pack_format,
    createdAt: row.created_at,
  }
}

export async function insertUpload(db: Db, row: UploadRow): Promise<void> {
  await db.insertInto('uploads').values(row).execute()
}

export async function findOwnedUpload(db: Db, userId: string, uploadId: string): Promise<PendingUpload | undefined> {
  const row = await selectPending(db).where('uploads.id', '=', uploadId).where('uploads.user_id', '=', userId).executeTakeFirst()
  return row && toPending(row)
}

/** The caller's pending uploads of one draft, oldest first. */
export async function listDraftUploads(db: Db, userId: string, draftId: string): Promise<PendingUpload[]> {
  const rows = await selectPending(db)
    .where('uploads.draft_id', '=', draftId)
    .where('uploads.user_id', '=', userId)
    .orderBy('uploads.created_at')
    .orderBy('uploads.id')
    .execute()
  return rows.map(toPending)
}

export async function listExpiredUploads(db: Db, now: string, limit: number): Promise<PendingUpload[]> {
  const rows = await selectPending(db).where('uploads.expires_at', '<=', now).orderBy('uploads.expires_at').limit(limit).execute()
  return rows.map(toPending)
}

export async function listUploadsOfDrafts(db: Db, draftIds: readonly string[]): Promise<PendingUpload[]> {
  if (draftIds.length === 0) return []
  return (await selectPending(db).where('uploads.draft_id', 'in', draftIds).execute()).map(toPending)
}

export async function deleteUploadRows(db: Db, ids: readonly string[]): Promise<void> {
  if (ids.length > 0) await db.deleteFrom('uploads').where('id', 'in', ids).execute()
}
