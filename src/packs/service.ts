// The packs' use cases: the listing, one pack, and how packs come to exist
// (docs/decisions.md#publishing): a draft becomes a pack with its first version, and the owner
// adds versions later. Each of those is one transaction, so a failure
// anywhere leaves the draft, its uploads and the pack as they were.
import { randomUUID } from 'node:crypto'
import type { Readable } from 'node:stream'
import type { Config } from '../config/index.js'
import type { Db } from '../db/index.js'
import { nowIso } from '../db/time.js'
import type { FileStore } from '../storage/index.js'
import { BadRequest, Conflict, DomainError, NotFound } from '../errors.js'
import { fieldTextFault } from '../http/text-input.js'
import type { User } from '../accounts/users-repository.js'
import { namespaceOf } from '../accounts/usernames.js'
import { draftIdOf, readDraftFields } from '../drafts/data.js'
import { deleteDraftRow, findOwnedDraft } from '../drafts/repository.js'
import { deleteFileRows, insertFile } from '../files/repository.js'
import { claimArchive } from './archive-claims.js'
import { ingestFile, type IngestedFile } from '../uploads/ingest.js'
import { deleteStoredFiles } from '../uploads/pending.js'
import { deleteUploadRows, listDraftUploads } from '../uploads/repository.js'
import type { UpdateCheckCache } from '../update-check/cache.js'
import { packChanged } from '../update-check/service.js'
import { packTarget, recordAudit, versionTarget, type Actor } from '../audit/service.js'
import {
  findCategoryIdByKey, findOwnedPackId, findTagIdsByNames, insertPack, insertPackMedia, insertPackTags, insertVersion, listPacks,
  loadPackDetail, newestVersionCreatedAt, packExists, touchOwnedPack, versionNameTaken,
  type MediaRef, type PackDetail, type PackFilter, type PackRecord, type PackSort, type PackSummaryRecord, type VersionRecord, type Viewer,
} from './repository.js'
import { slugify } from './slugs.js'
import { packIdHeldUntil } from './versions-repository.js'

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

/**
 * Turns the caller's draft into a pack and its first version, consuming the
 * draft and its pending uploads; their files now belong to the pack. Needs
 * title, version_name and exactly one version upload. Thumbnail: the newest
 * thumbnail upload (older ones are deleted). Media: in upload order. Tags are
 * matched to the site's tags by name, case-insensitively; names that are not
 * tags of the site are ignored. The category is matched by key, else none.
 */
export async function publishDraft(deps: PacksDeps, user: User, draftUuid: string): Promise<PackDetail> {
  const { db } = deps
  const draftId = draftIdOf(draftUuid)
  const namespace = namespaceOf(user.username)
  let packId: string | undefined
  let extraStorageKeys: string[]
  try {
    extraStorageKeys = await db.transaction().execute(async (trx) => {
      const draft = await findOwnedDraft(trx, user.id, draftId)
      if (!draft) throw new NotFound('draft not found')
      const fields = readDraftFields(draft.data)
      const uploads = await listDraftUploads(trx, user.id, draftId)
      const versions = uploads.filter((u) => u.kind === 'version')
      const thumbnails = uploads.filter((u) => u.kind === 'thumbnail')
      const media = uploads.filter((u) => u.kind === 'media')

      const title = fields.title.trim()
      const versionName = fields.version_name.trim()
      const missing = [
        ...(title === '' ? ['title'] : []),
        ...(versionName === '' ? ['version_name'] : []),
        ...(versions.length === 0 ? ['a version upload'] : []),
      ]
      if (missing.length > 0) throw new BadRequest(`cannot publish the draft, missing: ${missing.join(', ')}`)
      if (versions.length > 1) {
        throw new BadRequest(`the draft has ${versions.length} version uploads; a pack is published with exactly one (delete the others)`)
      }
      checkLength('title', title, MAX_TITLE_LENGTH)
      checkLength('version_name', versionName, MAX_VERSION_NAME_LENGTH)
      // The draft's data was stored as given; what it becomes is held to the rules of every other text input now.
      const texts = { title, summary: fields.summary, version_name: versionName, description: fields.description, changelog: fields.changelog }
      for (const [field, text] of Object.entries(texts)) {
        const fault = fieldTextFault(field, text)
        if (fault) throw new BadRequest(`cannot publish the draft: its ${field} ${fault}`)
      }
      packId = slugify(title)
      if (packId === '') throw new BadRequest('title must contain a letter or digit (the pack id is made from it)')
      if (await packExists(trx, namespace, packId)) throw new Conflict(`a pack "${namespace}:${packId}" already exists`)
      const heldUntil = await packIdHeldUntil(trx, namespace, packId, nowIso((deps.clock ?? Date.now)()))
      if (heldUntil !== undefined) {
        throw new Conflict(`"${namespace}:${packId}" belonged to a deleted pack and is held until ${heldUntil}, so no player's `
          + 'mod receives a different pack under that name; choose another title')
      }

      const version = versions[0]!
      const thumbnail = thumbnails.at(-1)
      // Category keys are lower case (the admin CLI enforces it).
      const categoryKey = fields.category.trim().toLowerCase()
      const now = nowIso()
      const packRowId = randomUUID()
      await insertPack(trx, {
        id: packRowId,
        namespace,
        pack_id: packId,
        owner_id: user.id,
        title,
        summary: fields.summary.trim(),
        description: fields.description,
        category_id: categoryKey === '' ? null : (await findCategoryIdByKey(trx, categoryKey)) ?? null,
        thumbnail_file_id: thumbnail?.fileId ?? null,
        created_at: now,
        updated_at: now,
      })
      await insertPackTags(trx, packRowId, await findTagIdsByNames(trx, fields.tags))
      await insertPackMedia(trx, packRowId, media.map((m) => m.fileId))
      await insertVersion(trx, {
        id: randomUUID(),
        pack_id: packRowId,
        name: versionName,
        changelog: fields.changelog,
        pack_format: version.packFormat,
        file_id: version.fileId,
        created_at: now,
      })
      // The archive's bytes become this pack's, unless another owner's pack has them (a 409 undoes the publish).
      await claimArchive(trx, { fileId: version.fileId, packRowId, ownerId: user.id, now: (deps.clock ?? Date.now)() })
      // The uploads stop being pending: the pack now refers to their files.
      await deleteUploadRows(trx, uploads.map((u) => u.id))
      const extras = thumbnails.slice(0, -1)
      await deleteFileRows(trx, extras.map((u) => u.fileId))
      await deleteDraftRow(trx, draftId)
      await recordAudit(trx, user, 'pack.publish', packTarget(namespace, packId), { title, version: versionName })
      return extras.map((u) => u.storageKey)
    })
  } catch (error) {
    // Two publishes racing for one pack id: the unique index decides, and the loser hears 409.
    if (!(error instanceof DomainError) && packId !== undefined && (await packExists(db, namespace, packId))) {
      throw new Conflict(`a pack "${namespace}:${packId}" already exists`)
    }
    throw error
  }
  // After the commit: a crash before this line leaves unreferenced bytes, never a row without its file.
  await deleteStoredFiles(deps.store, extraStorageKeys)
  // The update-check may hold a "not found" for this id from before it existed.
  await packChanged(deps.updateCheckCache, namespace, packId!)
  return getPack(db, namespace, packId!, user)
}

function checkLength(field: string, value: string, max: number): void {
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
