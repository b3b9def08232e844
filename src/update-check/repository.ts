// The update-check's queries. Namespaces and pack ids are stored in lower
// case, so it takes lower-cased keys and the unique index (namespace, pack_id)
// serves it directly.
import { CompiledQuery, sql } from 'kysely'
import type { Db } from '../db/index.js'
import type { PackDeclaration } from '../minecraft/declaration.js'
import { declarationOf } from '../files/repository.js'

/** What the update-check answers. */
export interface NewestVersionRecord {
  namespace: string
  packId: string
  title: string
  version: string
  packFormat: number | null
  fileId: string
  createdAt: string
  /** The archive's, for the updater to check its download against. */
  size: number
  sha256: string
  sha1: string | null
  filename: string
}

/**
 * A public pack's versions that are not yanked, newest first, with the
 * pack's title and each archive's size, hashes, name and declaration: a
 * hidden pack (by staff, or its owner's account is disabled) has none, since
 * a player's mod sees only public packs. The unique (namespace, pack_id)
 * index finds the pack, versions_pack_created orders its versions.
 */
function publicVersions(db: Db, namespace: string, packId: string) {
  return db
    .selectFrom('packs')
    .innerJoin('users', 'users.id', 'packs.owner_id')
    .innerJoin('versions', 'versions.pack_id', 'packs.id')
    .innerJoin('files', 'files.id', 'versions.file_id')
    .select([
      'packs.namespace', 'packs.pack_id', 'packs.title', 'versions.name', 'versions.pack_format', 'versions.file_id', 'versions.created_at',
      'files.size', 'files.sha256', 'files.sha1', 'files.filename',
      'files.pack_kind', 'files.min_format', 'files.min_format_minor', 'files.max_format', 'files.max_format_minor',
    ])
    .where('packs.namespace', '=', namespace)
    .where('packs.pack_id', '=', packId)
    .where('packs.hidden_at', 'is', null)
    .where('users.disabled_at', 'is', null)
    .where('versions.yanked_at', 'is', null)
    // The id breaks a tie in time, so the batch (below) picks the same version as the single check.
    .orderBy('versions.created_at', 'desc')
    .orderBy('versions.id', 'desc')
}

type PublicVersionRow = Awaited<ReturnType<ReturnType<typeof publicVersions>['executeTakeFirstOrThrow']>>

/** A version's declaration beside its answer, for the compatibility variants. */
export interface CandidateVersion extends NewestVersionRecord {
  declaration: PackDeclaration
}

function toCandidate(row: PublicVersionRow): CandidateVersion {
  return {
    namespace: row.namespace,
    packId: row.pack_id,
    title: row.title,
    version: row.name,
    packFormat: row.pack_format,
    fileId: row.file_id,
    createdAt: row.created_at,
    size: Number(row.size),
    sha256: row.sha256,
    sha1: row.sha1,
    filename: row.filename,
    declaration: declarationOf(row),
  }
}

// The update-check's miss (every player's first ask about a pack since it changed, and each ask about one of
// the many packs a large site cannot keep answers for) runs one query. Building and compiling it with Kysely
// took about as long as SQLite took to run it, so it is compiled once per database, with marker values where
// the namespace and the pack id go, and run with the real ones in their places.
const NAMESPACE_MARK = '\u0000namespace'
const PACK_ID_MARK = '\u0000pack_id'
const newestVersionQueries = new WeakMap<Db, CompiledQuery<PublicVersionRow>>()

/** The newest public version of a pack (by publication time) that is not yanked; undefined when there is none. One query. */
export async function findNewestVersion(db: Db, namespace: string, packId: string): Promise<CandidateVersion | undefined> {
  let compiled = newestVersionQueries.get(db)
  if (!compiled) {
    compiled = publicVersions(db, NAMESPACE_MARK, PACK_ID_MARK).limit(1).compile()
    newestVersionQueries.set(db, compiled)
  }
  const parameters = compiled.parameters.map((p) => (p === NAMESPACE_MARK ? namespace : p === PACK_ID_MARK ? packId : p))
  const { rows } = await db.executeQuery<PublicVersionRow>(CompiledQuery.raw(compiled.sql, parameters))
  return rows[0] && toCandidate(rows[0])
}

/** Versions (not yanked, newest first) a compatibility variant chooses from; a pack keeps far fewer in practice. */
export const MAX_CANDIDATES = 500

/** The versions a compatibility variant (?pack_format=, ?game_version=) chooses from, newest first: one query. */
export async function findCandidateVersions(db: Db, namespace: string, packId: string): Promise<CandidateVersion[]> {
  return (await publicVersions(db, namespace, packId).limit(MAX_CANDIDATES).execute()).map(toCandidate)
}

/** Whether a public pack (not hidden, owner not disabled) has this namespace and id: one with no version to offer. */
export async function publicPackExists(db: Db, namespace: string, packId: string): Promise<boolean> {
  const row = await db
    .selectFrom('packs')
    .innerJoin('users', 'users.id', 'packs.owner_id')
    .select('packs.id')
    .where('packs.namespace', '=', namespace)
    .where('packs.pack_id', '=', packId)
    .where('packs.hidden_at', 'is', null)
    .where('users.disabled_at', 'is', null)
    .executeTakeFirst()
  return row !== undefined
}

/** A pack as a batch asks for it: lower-cased namespace and pack id. */
export interface PackKey {
  namespace: string
  packId: string
}

/**
 * Several public packs' versions that are not yanked, newest first, at most
 * `perPack` of each, in ONE query (the batch update-check's misses): a
 * window over each pack's versions, ordered as publicVersions orders them.
 * A public pack with no version to offer is in the map with an empty list;
 * a pack that does not exist, or is hidden, is not in it. Keyed "namespace:pack_id".
 */
export async function findVersionsOfPacks(db: Db, packs: readonly PackKey[], perPack: number): Promise<Map<string, CandidateVersion[]>> {
  const found = new Map<string, CandidateVersion[]>()
  if (packs.length === 0) return found
  const ranked = db
    .selectFrom('packs')
    .innerJoin('users', 'users.id', 'packs.owner_id')
    .leftJoin('versions', (join) => join.onRef('versions.pack_id', '=', 'packs.id').on('versions.yanked_at', 'is', null))
    .leftJoin('files', 'files.id', 'versions.file_id')
    .select([
      'packs.namespace', 'packs.pack_id', 'packs.title', 'versions.name', 'versions.pack_format', 'versions.file_id', 'versions.created_at',
      'files.size', 'files.sha256', 'files.sha1', 'files.filename',
      'files.pack_kind', 'files.min_format', 'files.min_format_minor', 'files.max_format', 'files.max_format_minor',
      sql<number>`row_number() over (partition by packs.id order by versions.created_at desc, versions.id desc)`.as('rank'),
    ])
    // A row value per pack: the unique (namespace, pack_id) index finds each.
    .where((eb) => eb(eb.refTuple('packs.namespace', 'packs.pack_id'), 'in', packs.map((p) => eb.tuple(p.namespace, p.packId))))
    .where('packs.hidden_at', 'is', null)
    .where('users.disabled_at', 'is', null)
  const rows = await db.selectFrom(ranked.as('ranked')).selectAll().where('rank', '<=', perPack).orderBy('namespace').orderBy('pack_id').orderBy('rank').execute()
  for (const row of rows) {
    const key = `${row.namespace}:${row.pack_id}`
    let versions = found.get(key)
    if (versions === undefined) found.set(key, versions = [])
    // A pack without a version to offer comes back once, with nothing from the versions side.
    if (row.name === null || row.file_id === null || row.created_at === null || row.sha256 === null || row.filename === null || row.size === null) continue
    versions.push(toCandidate({ ...row, name: row.name, file_id: row.file_id, created_at: row.created_at, size: row.size, sha256: row.sha256, filename: row.filename }))
  }
  return found
}
