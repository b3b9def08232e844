// The packs' use cases: the listing, one pack, and new versions (docs/decisions.md#publishing); the first
// version comes with the pack when a draft is published (./publish-service.ts). Each change is one transaction,
// so a failure anywhere leaves the pack as it was.
import { randomUUID } from 'node:crypto'
import type { Readable } from 'node:stream'
import type { Config } from '../config/index.js'
import type { Db } from '../db/index.js'
import { nowIso } from '../db/time.js'
import type { FileStore } from '../storage/index.js'
import { BadRequest, Conflict, DomainError, NotFound } from '../errors.js'
import type { User } from '../auth/user.js'
import { insertFile } from '../files/repository.js'
import { claimArchive } from './archive-claims.js'
import { ingestFile, type IngestedFile } from '../uploads/ingest.js'
import type { UpdateCheckCache } from '../update-check/cache.js'
import { packChanged } from '../update-check/service.js'
import { recordAudit, versionTarget, type Actor } from '../audit/service.js'
import {
  findOwnedPackId, insertVersion, listPacks, loadPackDetail, newestVersionCreatedAt, touchOwnedPack, versionNameTaken,
  type MediaRef, type PackDetail, type PackFilter, type PackRecord, type PackSort, type PackSummaryRecord, type VersionRecord, type Viewer,
} from './repository.js'

export type { MediaRef, PackDetail, PackFilter, PackRecord, PackSort, PackSummaryRecord, VersionRecord, Viewer }

export const MAX_TITLE_LENGTH = 200
export const MAX_VERSION_NAME_LENGTH = 100

/** What the packs' changes need; the app instance has all of it. */
export interface PacksDeps {
  db: Db
  store: FileStore
  updateCheckCache: UpdateCheckCache
  config: Pick<Config, 'uploadLimits'>
  /** The app's clock (BuildOptions.clock): when a deleted pack's id is free again. Date.now when absent. */
  clock?: () => number
}

/**
 * One page of packs matching `filter` (pages count from 1) in the `sort`
 * order, and how many match in all; a title search counts and reaches its
 * first SEARCH_LIMIT matches only (`capped` when more match).
 */
export async function listPackPage(
  db: Db,
  filter: PackFilter,
  page: number,
  perPage: number,
  sort: PackSort = 'updated',
): Promise<{ items: PackSummaryRecord[]; total: number; capped: boolean }> {
  return listPacks(db, filter, { limit: perPage, offset: (page - 1) * perPage }, sort)
}

/** May `viewer` see the pack? Hidden packs (by staff, or of a disabled account) only to their owner and staff. */
export function canSee(viewer: Viewer | null | undefined, pack: Pick<PackRecord, 'hidden' | 'ownerDisabled' | 'ownerId'>): boolean {
  if (!pack.hidden && !pack.ownerDisabled) return true
  return viewer != null && (viewer.isStaff || viewer.id === pack.ownerId)
}

/** May `user` change the pack (edit it, manage its versions, delete it)? Its owner and staff. */
export function canManage(user: Viewer | null | undefined, pack: Pick<PackRecord, 'ownerId'>): boolean {
  return user != null && (user.isStaff || user.id === pack.ownerId)
}

/**
 * A pack with everything its page shows, or undefined when there is none or
 * `viewer` may not see it (canSee); namespace and pack id are matched
 * case-insensitively (they are stored in lower case).
 */
export async function findPack(db: Db, namespace: string, packId: string, viewer: Viewer | null | undefined): Promise<PackDetail | undefined> {
  const pack = await loadPackDetail(db, namespace.toLowerCase(), packId.toLowerCase())
  return pack && canSee(viewer, pack) ? pack : undefined
}

/** As findPack, for the API: a missing (or unseen) pack is NotFound. */
export async function getPack(db: Db, namespace: string, packId: string, viewer: Viewer | null | undefined): Promise<PackDetail> {
  const pack = await findPack(db, namespace, packId, viewer)
  if (!pack) throw new NotFound('pack not found')
  return pack
}

/** As getPack, for a change: someone who may not change the pack hears NotFound, as for a missing one (as drafts do). */
export async function getManagedPack(db: Db, namespace: string, packId: string, user: Viewer): Promise<PackDetail> {
  const pack = await loadPackDetail(db, namespace.toLowerCase(), packId.toLowerCase())
  if (!pack || !canManage(user, pack)) throw new NotFound('pack not found')
  return pack
}

export function checkLength(field: string, value: string, max: number): void {
  if (value.length > max) throw new BadRequest(`${field} is longer than ${max} characters`)
}

/** Trimmed, non-empty, not too long: the rules for a version's name. */
export function checkVersionName(raw: string | undefined): string {
  const name = (raw ?? '').trim()
  if (name === '') throw new BadRequest('version_name is required')
  checkLength('version_name', name, MAX_VERSION_NAME_LENGTH)
  return name
}

/** A new version's form as the route read it; its archive is already in storage. */
export interface VersionForm {
  file: IngestedFile | undefined
  versionName: string | undefined
  changelog: string | undefined
}

/** What the form reader is given: where the archive part goes as it streams, and how to remove it if the form fails later. */
export interface VersionArchives {
  /** `versionName` is the name when its field came before the file: a duplicate is refused before the archive is stored. */
  store(archive: Readable, clientFilename: string | undefined, versionName: string | undefined): Promise<IngestedFile>
  discard(file: IngestedFile): Promise<void>
}

/**
 * Adds a version to the caller's pack (someone else's is NotFound, like a
 * missing one) from a form that `readForm` reads, streaming its archive into
 * storage through the given VersionArchives. The pack is looked up before
 * the form is read, so nothing is stored for a pack that is not theirs.
 * Returns the pack with its new version.
 */
export async function addVersion(
  deps: PacksDeps,
  user: User,
  namespace: string,
  packId: string,
  readForm: (archives: VersionArchives) => Promise<VersionForm>,
): Promise<PackDetail> {
  const lowerNamespace = namespace.toLowerCase()
  const lowerPackId = packId.toLowerCase()
  const packRowId = await findOwnedPackId(deps.db, user.id, lowerNamespace, lowerPackId)
  if (!packRowId) throw new NotFound('pack not found')
  const form = await readForm({
    async store(archive, clientFilename, versionName) {
      const earlyName = versionName?.trim()
      if (earlyName && (await versionNameTaken(deps.db, packRowId, earlyName))) {
        archive.resume()
        throw new Conflict(`the pack already has a version named "${earlyName}"`)
      }
      return ingestFile(deps.store, archive, { kind: 'version', maxBytes: deps.config.uploadLimits.version, clientFilename })
    },
    discard: (file) => deps.store.delete(file.storageKey),
  })
  if (!form.file) throw new BadRequest('the "file" part (a ZIP archive) is required')
  await recordVersion(deps.db, deps.store, {
    ownerId: user.id, packRowId, file: form.file, versionName: form.versionName, changelog: form.changelog,
    actor: user, namespace: lowerNamespace, packId: lowerPackId,
  })
  await packChanged(deps.updateCheckCache, lowerNamespace, lowerPackId)
  return getPack(deps.db, lowerNamespace, lowerPackId, user)
}

interface NewVersion {
  ownerId: string
  packRowId: string
  /** Who publishes it, and the pack's lower-case keys: for the audit log. */
  actor: Actor
  namespace: string
  packId: string
  /** Already in storage; deleted again if the version is not recorded. */
  file: IngestedFile
  versionName: string | undefined
  changelog: string | undefined
}

/**
 * Records an uploaded archive as the pack's newest version. Its created_at is
 * at least one millisecond after the current newest version's, so "newest by
 * publication time" has one answer even for two uploads within a millisecond.
 * On any failure the stored file is deleted: no orphan bytes.
 */
async function recordVersion(db: Db, store: FileStore, input: NewVersion): Promise<void> {
  let name: string | undefined
  try {
    name = checkVersionName(input.versionName)
    const versionName = name
    await db.transaction().execute(async (trx) => {
      const now = Date.now()
      // First statement: takes the pack's row lock, so concurrent versions of one pack queue up here.
      if (!(await touchOwnedPack(trx, input.ownerId, input.packRowId, nowIso(now)))) throw new NotFound('pack not found')
      if (await versionNameTaken(trx, input.packRowId, versionName)) {
        throw new Conflict(`the pack already has a version named "${versionName}"`)
      }
      const newest = await newestVersionCreatedAt(trx, input.packRowId)
      const createdAt = newest === undefined ? now : Math.max(now, Date.parse(newest) + 1)
      if (createdAt !== now) await touchOwnedPack(trx, input.ownerId, input.packRowId, nowIso(createdAt))
      await insertFile(trx, input.file)
      await claimArchive(trx, { fileId: input.file.id, packRowId: input.packRowId, ownerId: input.ownerId, now })
      await insertVersion(trx, {
        id: randomUUID(),
        pack_id: input.packRowId,
        name: versionName,
        changelog: input.changelog ?? '',
        pack_format: input.file.packFormat,
        file_id: input.file.id,
        created_at: nowIso(createdAt),
      })
      await recordAudit(trx, input.actor, 'version.publish', versionTarget(input.namespace, input.packId, versionName), {})
    })
  } catch (error) {
    await store.delete(input.file.storageKey)
    if (!(error instanceof DomainError) && name !== undefined && (await versionNameTaken(db, input.packRowId, name))) {
      throw new Conflict(`the pack already has a version named "${name}"`)
    }
    throw error
  }
}
