// The by-hash lookup's query: which public version an archive is, by its
// SHA-1 or SHA-256 (indexes files_sha1 and files_sha256, migration 0003).
import { sql } from 'kysely'
import type { Db } from '../db/index.js'

/** The version whose archive has the hash, and the archive's facts. */
export interface HashVersionRecord {
  namespace: string
  packId: string
  versionId: string
  version: string
  createdAt: string
  yanked: boolean
  packFormat: number | null
  fileId: string
  size: number
  sha256: string
  sha1: string | null
  filename: string
}

/**
 * For each archive (by content) whose SHA-1 is in `sha1s` or SHA-256 in
 * `sha256s` (lower case), the first published version of a public pack
 * (not hidden, owner not disabled) that has it, yanked ones included (they
 * still name what is installed): one query, one row per content however
 * many versions share it.
 */
export async function findVersionsByHash(db: Db, sha1s: readonly string[], sha256s: readonly string[]): Promise<HashVersionRecord[]> {
  if (sha1s.length === 0 && sha256s.length === 0) return []
  const ranked = db
    .selectFrom('files')
    .innerJoin('versions', 'versions.file_id', 'files.id')
    .innerJoin('packs', 'packs.id', 'versions.pack_id')
    .innerJoin('users', 'users.id', 'packs.owner_id')
    .select([
      'packs.namespace', 'packs.pack_id', 'versions.id as version_id', 'versions.name', 'versions.created_at', 'versions.yanked_at',
      'versions.pack_format', 'versions.file_id', 'files.size', 'files.sha256', 'files.sha1', 'files.filename',
      sql<number>`row_number() over (partition by files.sha256 order by versions.created_at, versions.id)`.as('rank'),
    ])
    .where((eb) => {
      const matches = []
      if (sha1s.length > 0) matches.push(eb('files.sha1', 'in', [...sha1s]))
      if (sha256s.length > 0) matches.push(eb('files.sha256', 'in', [...sha256s]))
      return eb.or(matches)
    })
    .where('packs.hidden_at', 'is', null)
    .where('users.disabled_at', 'is', null)
  const rows = await db.selectFrom(ranked.as('ranked')).selectAll().where('rank', '=', 1).execute()
  return rows.map((row) => ({
    namespace: row.namespace,
    packId: row.pack_id,
    versionId: row.version_id,
    version: row.name,
    createdAt: row.created_at,
    yanked: row.yanked_at !== null,
    packFormat: row.pack_format,
    fileId: row.file_id,
    size: Number(row.size),
    sha256: row.sha256,
    sha1: row.sha1,
    filename: row.filename,
  }))
}
