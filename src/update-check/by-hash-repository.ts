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
 * `sha256s` (lower case), the first published version that has it in the
 * pack that claims those bytes (archive_claims: the pack that first
 * published them), yanked ones included (they still name what is installed),
 * when that pack is public (not hidden, owner not disabled). A copy of the
 * bytes in any other pack is never the answer: when the claiming pack is
 * gone or hidden the archive is not found. One query, one row per content.
 */
export async function findVersionsByHash(db: Db, sha1s: readonly string[], sha256s: readonly string[]): Promise<HashVersionRecord[]> {
  if (sha1s.length === 0 && sha256s.length === 0) return []
  const ranked = db
    .selectFrom('files')
    .innerJoin('versions', 'versions.file_id', 'files.id')
    .innerJoin('archive_claims', (join) => join
      .onRef('archive_claims.sha256', '=', 'files.sha256')
      .onRef('archive_claims.pack_row_id', '=', 'versions.pack_id'))
    .innerJoin('packs', 'packs.id', 'versions.pack_id')
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
    .where('packs.owner_disabled', '=', 0)
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
