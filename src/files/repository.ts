import type { Db } from '../db/index.js'
import type { FilesTable } from '../db/schema.js'
import { nowIso } from '../db/time.js'
import type { IngestedFile } from '../uploads/ingest.js'

export type FileRow = FilesTable

export async function insertFile(db: Db, file: IngestedFile): Promise<FileRow> {
  const row: FileRow = {
    id: file.id,
    storage_key: file.id,
    filename: file.filename,
    content_type: file.contentType,
    size: file.size,
    sha256: file.sha256,
    created_at: nowIso(),
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

export async function storedBytes(db: Db): Promise<{ files: number; bytes: number }> {
  const row = await db
    .selectFrom('files')
    .select((eb) => [eb.fn.countAll<number | string>().as('files'), eb.fn.coalesce(eb.fn.sum<number | string>('size'), eb.lit(0)).as('bytes')])
    .executeTakeFirstOrThrow()
  return { files: Number(row.files), bytes: Number(row.bytes) }
}
