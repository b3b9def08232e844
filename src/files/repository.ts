// Stored files' rows. A row names its bytes by storage_key, the one place a
// file's key is read from: serving, deleting and checking all go by it.
import type { Selectable } from 'kysely'
import type { Db } from '../db/index.js'
import type { FilesTable } from '../db/schema.js'
import { nowIso } from '../db/time.js'
import type { PackDeclaration, PackKind } from '../minecraft/declaration.js'

export type FileRow = FilesTable

/** A file whose bytes are already in storage, under `storageKey`. */
export interface NewFile {
  id: string
  storageKey: string
  filename: string
  contentType: string
  size: number
  sha256: string
  sha1: string
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
    sha1: file.sha1,
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

/** A file's row, with the version whose archive it is when asked for (`withVersion`): null ids for other files. */
export interface ServedFileRow extends FileRow {
  version_id: string | null
  /** packs.id of that version. */
  version_pack_id: string | null
}

/**
 * The file's row. With `withVersion` (a download, which may be counted) the
 * same query joins the version whose archive it is, so counting a download
 * adds no query; other fetches (thumbnails, media) skip the join.
 */
export async function findFile(db: Db, id: string, withVersion = false): Promise<ServedFileRow | undefined> {
  if (!withVersion) {
    const row = await db.selectFrom('files').selectAll().where('id', '=', id).executeTakeFirst()
    return row && { ...row, version_id: null, version_pack_id: null }
  }
  return db
    .selectFrom('files')
    .leftJoin('versions', 'versions.file_id', 'files.id')
    .selectAll('files')
    .select(['versions.id as version_id', 'versions.pack_id as version_pack_id'])
    .where('files.id', '=', id)
    // One archive is one version's; should a file ever be shared, the download counts once, for one of them.
    .limit(1)
    .executeTakeFirst()
}

export async function deleteFileRows(db: Db, ids: readonly string[]): Promise<void> {
  if (ids.length > 0) await db.deleteFrom('files').where('id', 'in', ids).execute()
}

/**
 * Of `ids`, the files no record uses any more (no version, gallery item,
 * thumbnail or pending upload): those whose row and bytes may go. Run in the
 * transaction that removed the last use, so a file shared with another
 * record is kept.
 */
export async function filesNotInUse(db: Db, ids: readonly string[]): Promise<FileRow[]> {
  if (ids.length === 0) return []
  return db
    .selectFrom('files')
    .selectAll()
    .where('files.id', 'in', [...new Set(ids)])
    .where(({ not, exists, selectFrom }) => not(exists(selectFrom('versions').select('versions.id').whereRef('versions.file_id', '=', 'files.id'))))
    .where(({ not, exists, selectFrom }) => not(exists(selectFrom('pack_media').select('pack_media.pack_id').whereRef('pack_media.file_id', '=', 'files.id'))))
    .where(({ not, exists, selectFrom }) => not(exists(selectFrom('packs').select('packs.id').whereRef('packs.thumbnail_file_id', '=', 'files.id'))))
    .where(({ not, exists, selectFrom }) => not(exists(selectFrom('uploads').select('uploads.id').whereRef('uploads.file_id', '=', 'files.id'))))
    .execute()
}

/** The declaration kept on a file's row (src/db/migrations/2026_11_23_0002_lifecycle.ts). */
export function declarationOf(row: Pick<Selectable<FilesTable>, 'pack_kind' | 'min_format' | 'min_format_minor' | 'max_format' | 'max_format_minor'>): PackDeclaration {
  const kind = row.pack_kind === 'resource' || row.pack_kind === 'data' ? (row.pack_kind as PackKind) : null
  if (row.min_format === null || row.max_format === null) return { kind, range: null }
  return {
    kind,
    range: {
      min: [row.min_format, row.min_format_minor ?? 0],
      max: row.max_format_minor === null ? [row.max_format] : [row.max_format, row.max_format_minor],
    },
  }
}
