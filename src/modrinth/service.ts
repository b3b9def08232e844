// The Modrinth-compatible API's use cases (src/api/modrinth.ts): which packs
// and versions a request names, as whole packs the caller may see (hidden
// ones only to their owner and staff, as everywhere), and which version of a
// pack is the update for a Modrinth client's filters. Read-only: nothing here
// writes.
import type { Db } from '../db/index.js'
import { BadRequest, NotFound } from '../errors.js'
import { MAX_BATCH_SIZE } from '../api/update-check.js'
import { loadPackDetailsByRowIds, type PackDetail, type VersionRecord, type Viewer } from '../packs/repository.js'
import { canSee } from '../packs/service.js'
import { may } from '../packs/policy.js'
import { loadersOf, releasesOf } from './game.js'
import { findPackRowIds, findTeamUsers, findVersionPacks, findVersionsByArchiveHash, type TeamUserRow } from './repository.js'

export type Algorithm = 'sha1' | 'sha256' | 'sha512'

/** A version with its pack, as the mapper needs them. */
export interface PackVersion {
  pack: PackDetail
  version: VersionRecord
}

/** A Modrinth client's filters on versions: any of the loaders, any of the releases; an empty list filters nothing. */
export interface VersionFilter {
  loaders?: readonly string[] | undefined
  gameVersions?: readonly string[] | undefined
}

function matches(version: VersionRecord, filter: VersionFilter): boolean {
  const { loaders, gameVersions } = filter
  if (loaders?.length && !loadersOf(version).some((loader) => loaders.includes(loader))) return false
  if (gameVersions?.length && !releasesOf(version).some((release) => gameVersions.includes(release))) return false
  return true
}

/**
 * A list Modrinth passes in a query parameter as JSON (`ids=["a","b"]`):
 * strings only, each once, at most MAX_BATCH_SIZE. Anything else is a 400
 * that says what was expected.
 */
export function parseJsonList(raw: string, name: string): string[] {
  let parsed: unknown
  try {
    parsed = JSON.parse(raw)
  } catch {
    throw new BadRequest(`${name} must be a JSON array of strings, e.g. ${name}=["a","b"]`)
  }
  if (!Array.isArray(parsed) || !parsed.every((item): item is string => typeof item === 'string' && item.length <= 200)) {
    throw new BadRequest(`${name} must be a JSON array of strings (each at most 200 characters)`)
  }
  if (parsed.length > MAX_BATCH_SIZE) throw new BadRequest(`${name} names ${parsed.length} items; at most ${MAX_BATCH_SIZE} at once`)
  return [...new Set(parsed)]
}

/** The packs these refs name (8-character ids or "namespace:pack_id", any case) that `viewer` may see. */
async function packsNamed(db: Db, refs: readonly string[], viewer: Viewer | null): Promise<Map<string, PackDetail>> {
  const shortIds: string[] = []
  const names: Array<{ namespace: string; packId: string }> = []
  for (const ref of refs) {
    const colon = ref.indexOf(':')
    if (colon > 0) names.push({ namespace: ref.slice(0, colon).toLowerCase(), packId: ref.slice(colon + 1).toLowerCase() })
    else shortIds.push(ref)
  }
  const found = await findPackRowIds(db, shortIds, names)
  const packs = await loadPackDetailsByRowIds(db, found.map((row) => row.id))
  const byRef = new Map<string, PackDetail>()
  for (const pack of packs) {
    if (!canSee(viewer, pack)) continue
    if (pack.shortId !== null) byRef.set(pack.shortId, pack)
    byRef.set(`${pack.namespace}:${pack.packId}`, pack)
  }
  return byRef
}

function refKey(ref: string): string {
  return ref.includes(':') ? ref.toLowerCase() : ref
}

export async function getProject(db: Db, ref: string, viewer: Viewer | null): Promise<PackDetail> {
  const pack = (await packsNamed(db, [ref], viewer)).get(refKey(ref))
  if (!pack) throw new NotFound(`no project ${ref}: give a pack's 8-character id or its namespace:pack_id`)
  return pack
}

/** The projects of a list, in its order; those not found (or not visible) are left out, as Modrinth does. */
export async function getProjects(db: Db, refs: readonly string[], viewer: Viewer | null): Promise<PackDetail[]> {
  const found = await packsNamed(db, refs, viewer)
  const seen = new Set<PackDetail>()
  return refs.flatMap((ref) => {
    const pack = found.get(refKey(ref))
    if (!pack || seen.has(pack)) return []
    seen.add(pack)
    return [pack]
  })
}

/** A project's versions that pass the filter, newest first (yanked ones too: Modrinth lists archived versions). */
export async function getProjectVersions(db: Db, ref: string, filter: VersionFilter & { featured?: boolean | undefined }, viewer: Viewer | null): Promise<PackVersion[]> {
  const pack = await getProject(db, ref, viewer)
  // No version is featured here.
  if (filter.featured === true) return []
  return pack.versions.filter((version) => matches(version, filter)).map((version) => ({ pack, version }))
}

/** Versions by their 8-character ids, in the list's order; those not found are left out. */
export async function getVersions(db: Db, ids: readonly string[], viewer: Viewer | null): Promise<PackVersion[]> {
  const refs = await findVersionPacks(db, ids)
  const packs = await loadPackDetailsByRowIds(db, refs.map((ref) => ref.packRowId))
  const byId = new Map<string, PackVersion>()
  for (const pack of packs) {
    if (!canSee(viewer, pack)) continue
    for (const version of pack.versions) if (version.shortId !== null) byId.set(version.shortId, { pack, version })
  }
  return ids.flatMap((id) => byId.get(id) ?? [])
}

export async function getVersion(db: Db, id: string, viewer: Viewer | null): Promise<PackVersion> {
  const [found] = await getVersions(db, [id], viewer)
  if (!found) throw new NotFound(`no version ${id}`)
  return found
}

/** Only what this site keeps: SHA-512 is named in the 400, so a client knows to ask by SHA-1. */
function checkAlgorithm(algorithm: Algorithm | undefined): 'sha1' | 'sha256' {
  if (algorithm === 'sha512') throw new BadRequest('this site keeps SHA-1 and SHA-256 of each archive, not SHA-512: ask with algorithm=sha1 or sha256')
  return algorithm ?? 'sha1'
}

/**
 * For each hash (as sent, each once) that an archive of a visible pack has:
 * that archive's version (the first published, when several versions share
 * the bytes) and its pack.
 */
export async function versionsByHash(db: Db, hashes: readonly string[], algorithm: Algorithm | undefined, viewer: Viewer | null): Promise<Map<string, PackVersion>> {
  const asked = new Map<string, string>()
  for (const hash of hashes) if (!asked.has(hash)) asked.set(hash, hash.toLowerCase())
  const found = await findVersionsByArchiveHash(db, checkAlgorithm(algorithm), [...new Set(asked.values())])
  const packs = new Map((await loadPackDetailsByRowIds(db, found.map((f) => f.packRowId))).map((pack) => [pack.id, pack]))
  const byHash = new Map<string, PackVersion>()
  for (const { hash, versionId, packRowId } of found) {
    const pack = packs.get(packRowId)
    if (!pack || !canSee(viewer, pack)) continue
    const version = pack.versions.find((v) => v.id === versionId)
    // Versions are newest first: the last one found with these bytes was published first.
    if (version && (!byHash.has(hash) || version.createdAt <= byHash.get(hash)!.version.createdAt)) byHash.set(hash, { pack, version })
  }
  const out = new Map<string, PackVersion>()
  for (const [hash, lower] of asked) {
    const match = byHash.get(lower)
    if (match) out.set(hash, match)
  }
  return out
}

export async function versionByHash(db: Db, hash: string, algorithm: Algorithm | undefined, viewer: Viewer | null): Promise<PackVersion> {
  const found = (await versionsByHash(db, [hash], algorithm, viewer)).get(hash)
  if (!found) throw new NotFound(`no version has an archive with ${algorithm ?? 'sha1'} ${hash.toLowerCase()}`)
  return found
}

/**
 * For each hash that names a version: the newest version of its pack that
 * passes the filter and is not yanked (the update; perhaps the same
 * version). Hashes with no such version are left out, as Modrinth does.
 */
export async function updatesByHash(db: Db, hashes: readonly string[], algorithm: Algorithm | undefined, filter: VersionFilter, viewer: Viewer | null): Promise<Map<string, PackVersion>> {
  const out = new Map<string, PackVersion>()
  for (const [hash, { pack }] of await versionsByHash(db, hashes, algorithm, viewer)) {
    const newest = pack.versions.find((version) => !version.yanked && matches(version, filter))
    if (newest) out.set(hash, { pack, version: newest })
  }
  return out
}

export async function updateByHash(db: Db, hash: string, algorithm: Algorithm | undefined, filter: VersionFilter, viewer: Viewer | null): Promise<PackVersion> {
  const found = (await updatesByHash(db, [hash], algorithm, filter, viewer)).get(hash)
  if (!found) throw new NotFound(`no version for these loaders and game versions updates the archive with ${algorithm ?? 'sha1'} ${hash.toLowerCase()}`)
  return found
}

/** A pack's team as Modrinth's members endpoints answer it (./mapper.ts toModrinthTeam). */
export interface ProjectTeam {
  pack: PackDetail
  /** The owner's and every listed member's account. */
  users: Map<string, TeamUserRow>
  /**
   * The caller is in the team or staff (the policy's 'see-pending'): they see invitations, permissions and
   * payout splits; anyone else sees the owner and accepted members only, as on Modrinth.
   */
  insider: boolean
}

async function teamsOfPacks(db: Db, packs: readonly PackDetail[], viewer: Viewer | null): Promise<ProjectTeam[]> {
  const users = await findTeamUsers(db, [...new Set(packs.flatMap((pack) => [pack.ownerId, ...pack.team.map((m) => m.userId)]))])
  return packs.map((pack) => {
    const insider = viewer != null && may({ userId: viewer.id, isStaff: viewer.isStaff }, 'see-pending', { id: pack.id, ownerId: pack.ownerId, team: pack.team })
    return { pack: insider ? pack : { ...pack, team: pack.team.filter((m) => m.accepted) }, users, insider }
  })
}

/** GET /v2/project/{id|slug}/members. */
export async function getProjectTeam(db: Db, ref: string, viewer: Viewer | null): Promise<ProjectTeam> {
  return (await teamsOfPacks(db, [await getProject(db, ref, viewer)], viewer))[0]!
}

/** A team id is a project's `team`: the pack's own 8-character id. A "namespace:pack_id" names no team. */
async function packsOfTeams(db: Db, teamIds: readonly string[], viewer: Viewer | null): Promise<PackDetail[]> {
  const named = await packsNamed(db, teamIds.filter((id) => !id.includes(':')), viewer)
  return teamIds.flatMap((id) => {
    const pack = id.includes(':') ? undefined : named.get(id)
    return pack ? [pack] : []
  })
}

/** GET /v2/team/{id}/members. */
export async function getTeam(db: Db, teamId: string, viewer: Viewer | null): Promise<ProjectTeam> {
  const [pack] = await packsOfTeams(db, [teamId], viewer)
  if (!pack) throw new NotFound(`no team ${teamId}: a team id is a project's "team" (its 8-character id)`)
  return (await teamsOfPacks(db, [pack], viewer))[0]!
}

/** GET /v2/teams?ids=[...]: the teams found, in the order asked; unknown ones left out. */
export async function getTeams(db: Db, teamIds: readonly string[], viewer: Viewer | null): Promise<ProjectTeam[]> {
  return teamsOfPacks(db, await packsOfTeams(db, teamIds, viewer), viewer)
}
