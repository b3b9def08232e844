// Stored files' rows. A row names its bytes by storage_key, the one place a
// file's key is read from: serving, deleting and checking all go by it.
import type { Db } from '../db/index.js'
import type { FilesTable } from '../db/schema.js'
import { nowIso } from '../db/time.js'
import type { PackDeclaration } from '../minecraft/declaration.js'

export type FileRow = FilesTable

/** A file whose bytes are already in storage, under `storageKey`. */
export interface NewFile {
  id: string
  storageKey: string
  filename: string
  contentType: string
  size: number
  sha256: string
  /** Version archives: what pack.mcmeta and the folders declare (src/minecraft/); absent for other files. */
  pack?: PackDeclaration | undefined
}

export async function insertFile(db: Db, file: NewFile): Promise<FileRow> {
  const row: FileRow = {
    id: file.id,
    storage_key: file.storageKey,
    filename: file.filename,
    content_type: file.contentType,
    size: file.size,
    sha256: file.sha256,
    created_at: nowIso(),
    pack_kind: file.pack?.kind ?? null,
    min_format: file.pack?.range?.min[0] ?? null,
    min_format_minor: file.pack?.range?.min[1] ?? null,
    max_format: file.pack?.range?.max[0] ?? null,
    max_format_minor: file.pack?.range?.max[1] ?? null,
  }
  await db.insertInto('files').values(row).execute()
  return row
}

export async function findFile(db: Db, id: string): Promise<FileRow | undefined> {
  return db.selectFrom('files').selectAll().where('id', '=', id).executeTakeFirst()
}

export async function deleteFileRows(db: Db, ids: readonly string[]): Promise<void> {
  if (ids.length > 0) await db.deleteFrom('files').where('id', 'in', ids).execute()
}
