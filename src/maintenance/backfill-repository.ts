// The SQL of the start-up back-fill (./backfill.ts): files still missing
// what newer code keeps for every file, a page at a time in id order.
import type { Db } from '../db/index.js'
import type { PackDeclaration } from '../minecraft/declaration.js'

export interface FileToFill {
  id: string
  storageKey: string
  size: number
  sha256: string
  /** A version archive whose declaration (kind, format range) was never read. */
  needsDeclaration: boolean
  /** For a version archive: its pack, whose update-check answer carries the hashes (and whose search entry, the declaration). */
  pack: { rowId: string; namespace: string; packId: string } | null
}

/** Files without a SHA-1, after `afterId` in id order (keyset paging: a file that cannot be read is passed, not retried). */
export async function filesWithoutSha1(db: Db, afterId: string, limit: number): Promise<FileToFill[]> {
  const rows = await db
    .selectFrom('files')
    .leftJoin('versions', 'versions.file_id', 'files.id')
    .leftJoin('packs', 'packs.id', 'versions.pack_id')
    .select([
      'files.id', 'files.storage_key', 'files.size', 'files.sha256', 'files.pack_kind', 'files.min_format', 'versions.id as version_id',
      'packs.id as pack_row_id', 'packs.namespace', 'packs.pack_id',
    ])
    .where('files.sha1', 'is', null)
    .where('files.id', '>', afterId)
    .orderBy('files.id')
    .limit(limit)
    .execute()
  return rows.map((row) => ({
    id: row.id,
    storageKey: row.storage_key,
    size: Number(row.size),
    sha256: row.sha256,
    needsDeclaration: row.version_id !== null && row.pack_kind === null && row.min_format === null,
    pack: row.pack_row_id !== null && row.namespace !== null && row.pack_id !== null
      ? { rowId: row.pack_row_id, namespace: row.namespace, packId: row.pack_id }
      : null,
  }))
}

export async function setFileSha1(db: Db, fileId: string, sha1: string): Promise<void> {
  await db.updateTable('files').set({ sha1 }).where('id', '=', fileId).where('sha1', 'is', null).execute()
}

export async function setFileDeclaration(db: Db, fileId: string, pack: PackDeclaration): Promise<void> {
  await db.updateTable('files').set({
    pack_kind: pack.kind,
    min_format: pack.range?.min[0] ?? null,
    min_format_minor: pack.range?.min[1] ?? null,
    max_format: pack.range?.max[0] ?? null,
    max_format_minor: pack.range?.max[1] ?? null,
  }).where('id', '=', fileId).execute()
}
