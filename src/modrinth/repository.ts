// The Modrinth-compatible API's lookups: which packs a request names, by
// short id, by "namespace:pack_id", by a version's short id or by an
// archive's hash. Each answers row ids in one indexed query; the packs
// themselves come from the packs repository (loadPackDetailsByRowIds).
import type { Db } from '../db/index.js'

/** Packs named by short id or by "namespace:pack_id" (lower case), hidden ones included: the caller decides who sees them. */
export async function findPackRowIds(db: Db, shortIds: readonly string[], names: ReadonlyArray<{ namespace: string; packId: string }>): Promise<Array<{ id: string; shortId: string | null; namespace: string; packId: string }>> {
  if (shortIds.length === 0 && names.length === 0) return []
  const rows = await db
    .selectFrom('packs')
    .select(['id', 'short_id', 'namespace', 'pack_id'])
    .where((eb) => {
      const either = []
      if (shortIds.length > 0) either.push(eb('short_id', 'in', [...shortIds]))
      if (names.length > 0) either.push(eb(eb.refTuple('namespace', 'pack_id'), 'in', names.map((n) => eb.tuple(n.namespace, n.packId))))
      return eb.or(either)
    })
    .execute()
  return rows.map((row) => ({ id: row.id, shortId: row.short_id, namespace: row.namespace, packId: row.pack_id }))
}

/** The pack of each version named by short id. */
export async function findVersionPacks(db: Db, versionShortIds: readonly string[]): Promise<Array<{ versionShortId: string; packRowId: string }>> {
  if (versionShortIds.length === 0) return []
  const rows = await db.selectFrom('versions').select(['short_id', 'pack_id']).where('short_id', 'in', [...versionShortIds]).execute()
  return rows.flatMap((row) => (row.short_id === null ? [] : [{ versionShortId: row.short_id, packRowId: row.pack_id }]))
}

/**
 * Every version whose archive has one of the hashes (lower-case hex of the
 * algorithm's digest), with its pack: through the files_sha1 / files_sha256
 * indexes, then versions_file_id. Only versions of the pack that claims the
 * bytes (archive_claims, src/packs/archive-claims.ts): a copy in another
 * owner's pack is never named, so a launcher cannot be moved to it.
 */
export async function findVersionsByArchiveHash(
  db: Db,
  algorithm: 'sha1' | 'sha256',
  hashes: readonly string[],
): Promise<Array<{ hash: string; versionId: string; packRowId: string }>> {
  if (hashes.length === 0) return []
  const rows = await db
    .selectFrom('files')
    .innerJoin('versions', 'versions.file_id', 'files.id')
    .innerJoin('archive_claims', (join) => join
      .onRef('archive_claims.sha256', '=', 'files.sha256')
      .onRef('archive_claims.pack_row_id', '=', 'versions.pack_id'))
    .select([algorithm === 'sha1' ? 'files.sha1 as hash' : 'files.sha256 as hash', 'versions.id', 'versions.pack_id'])
    .where(algorithm === 'sha1' ? 'files.sha1' : 'files.sha256', 'in', [...hashes])
    .execute()
  return rows.flatMap((row) => (row.hash === null ? [] : [{ hash: row.hash, versionId: row.id, packRowId: row.pack_id }]))
}

/** What Modrinth's User shape needs of a team's people (a team member's record has only the username). */
export interface TeamUserRow {
  id: string
  username: string
  createdAt: string
  isStaff: boolean
}

export async function findTeamUsers(db: Db, userIds: readonly string[]): Promise<Map<string, TeamUserRow>> {
  if (userIds.length === 0) return new Map()
  const rows = await db.selectFrom('users').select(['id', 'username', 'created_at', 'is_staff']).where('id', 'in', [...userIds]).execute()
  return new Map(rows.map((row) => [row.id, { id: row.id, username: row.username, createdAt: row.created_at, isStaff: Number(row.is_staff) === 1 }]))
}

/** Which of these category keys (lower case) exist. */
export async function findCategoryKeys(db: Db, keys: readonly string[]): Promise<Set<string>> {
  if (keys.length === 0) return new Set()
  const rows = await db.selectFrom('categories').select('key').where('key', 'in', [...keys]).execute()
  return new Set(rows.map((row) => row.key))
}

/** Which of these tag names (lower case) exist, in lower case. */
export async function findTagNames(db: Db, lowerNames: readonly string[]): Promise<Set<string>> {
  if (lowerNames.length === 0) return new Set()
  const rows = await db.selectFrom('tags').select('name_lower').where('name_lower', 'in', [...lowerNames]).execute()
  return new Set(rows.map((row) => row.name_lower))
}

/** The user id of each of these usernames (lower case) that exists. */
export async function findUserIds(db: Db, lowerNames: readonly string[]): Promise<Map<string, string>> {
  if (lowerNames.length === 0) return new Map()
  const rows = await db.selectFrom('users').select(['id', 'username_lower']).where('username_lower', 'in', [...lowerNames]).execute()
  return new Map(rows.map((row) => [row.username_lower, row.id]))
}

/** The kinds ('resource', 'data') each pack's public (not yanked) versions declare; a version of no single kind adds none. */
export async function publicKindsOf(db: Db, packRowIds: readonly string[]): Promise<Map<string, Set<string>>> {
  const out = new Map<string, Set<string>>()
  if (packRowIds.length === 0) return out
  const rows = await db
    .selectFrom('versions')
    .innerJoin('files', 'files.id', 'versions.file_id')
    .select(['versions.pack_id', 'files.pack_kind'])
    .distinct()
    .where('versions.pack_id', 'in', [...packRowIds])
    .where('versions.yanked_at', 'is', null)
    .where('files.pack_kind', 'is not', null)
    .execute()
  for (const row of rows) {
    const kinds = out.get(row.pack_id) ?? new Set<string>()
    kinds.add(row.pack_kind!)
    out.set(row.pack_id, kinds)
  }
  return out
}

/** Every category, and every tag with its category's key and name, for Modrinth's category tags. */
export async function listCategoriesAndTags(db: Db): Promise<{
  categories: Array<{ key: string; name: string; color: string }>
  tags: Array<{ name: string; categoryKey: string; categoryName: string; color: string }>
}> {
  const [categories, tags] = await Promise.all([
    db.selectFrom('categories').select(['key', 'name', 'color']).orderBy('key').execute(),
    db
      .selectFrom('tags')
      .innerJoin('categories', 'categories.id', 'tags.category_id')
      .select(['tags.name', 'categories.key', 'categories.name as category_name', 'categories.color'])
      .orderBy('categories.key')
      .orderBy('tags.name_lower')
      .execute(),
  ])
  return { categories, tags: tags.map((t) => ({ name: t.name, categoryKey: t.key, categoryName: t.category_name, color: t.color })) }
}
