// How packs come to exist (CONTRACT §5): a draft becomes a pack with its first
// version, and the owner adds versions later. Each is one transaction, so a
// failure anywhere leaves the draft, its uploads and the pack as they were.
import { randomUUID } from 'node:crypto'
import type { Db } from '../db/index.js'
import { findOwnedDraft, deleteDraftRow } from '../drafts/repository.js'
import { deleteFileRows, insertFile } from '../files/repository.js'
import {
  findCategoryIdByKey, findTagIdsByNames, insertPack, insertPackMedia, insertPackTags, insertVersion, newestVersionCreatedAt,
  packExists, touchOwnedPack, versionNameTaken,
} from './repository.js'
import { nowIso } from '../db/time.js'
import { deleteUploadRows, listDraftUploads } from '../uploads/repository.js'
import type { User } from '../accounts/users-repository.js'
import type { FileStore } from '../storage/index.js'
import { BadRequest, Conflict, DomainError, NotFound } from '../errors.js'
import type { IngestedFile } from '../uploads/ingest.js'
import { deleteStoredFiles } from '../uploads/pending.js'
import { slugify } from './slugs.js'
import { namespaceOf } from '../accounts/usernames.js'

export const MAX_TITLE_LENGTH = 200
export const MAX_VERSION_NAME_LENGTH = 100

/** The form fields a draft stores (SPEC, DraftData) that are text. */
const TEXT_FIELDS = ['title', 'summary', 'category', 'description', 'version_name', 'changelog'] as const

/**
 * A loose check of an autosaved draft: the known fields, when present, have
 * the types the create page and publishing rely on (text or null; tags a list
 * of names or null). Anything else in the object is the page's business and
 * is kept untouched.
 */
export function checkDraftData(data: Record<string, unknown>): void {
  for (const field of TEXT_FIELDS) {
    const value = data[field]
    if (value !== undefined && value !== null && typeof value !== 'string') {
      throw new BadRequest(`data.${field} must be a string`)
    }
  }
  const tags = data.tags
  if (tags !== undefined && tags !== null && !(Array.isArray(tags) && tags.every((t) => typeof t === 'string'))) {
    throw new BadRequest('data.tags must be an array of strings')
  }
}

function text(data: Record<string, unknown>, field: string): string {
  const value = data[field]
  return typeof value === 'string' ? value.trim() : ''
}

export interface PackKey {
  namespace: string
  packId: string
}

/**
 * Turns the caller's draft into a pack and its first version, consuming the
 * draft and its pending uploads; their files now belong to the pack. Needs
 * title, version_name and exactly one version upload. Thumbnail: the newest
 * thumbnail upload (older ones are deleted). Media: in upload order. Tags are
 * matched to the site's tags by name, case-insensitively; names that are not
 * tags of the site are ignored. The category is matched by key, else none.
 */
export async function publishDraft(db: Db, store: FileStore, user: User, draftId: string): Promise<PackKey> {
  const namespace = namespaceOf(user.username)
  let packId: string | undefined
  let extraFileIds: string[]
  try {
    extraFileIds = await db.transaction().execute(async (trx) => {
      const draft = await findOwnedDraft(trx, user.id, draftId)
      if (!draft) throw new NotFound('draft not found')
      const parsed: unknown = JSON.parse(draft.data)
      const data = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? parsed as Record<string, unknown> : {}
      const uploads = await listDraftUploads(trx, user.id, draftId)
      const versions = uploads.filter((u) => u.kind === 'version')
      const thumbnails = uploads.filter((u) => u.kind === 'thumbnail')
      const media = uploads.filter((u) => u.kind === 'media')

      const title = text(data, 'title')
      const versionName = text(data, 'version_name')
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
      packId = slugify(title)
      if (packId === '') throw new BadRequest('title must contain a letter or digit (the pack id is made from it)')
      if (await packExists(trx, namespace, packId)) throw new Conflict(`a pack "${namespace}:${packId}" already exists`)

      const version = versions[0]!
      const thumbnail = thumbnails.at(-1)
      // Category keys are lower case (the admin CLI enforces it).
      const categoryKey = text(data, 'category').toLowerCase()
      const tagNames = Array.isArray(data.tags) ? data.tags.filter((t): t is string => typeof t === 'string') : []
      const now = nowIso()
      const packRowId = randomUUID()
      await insertPack(trx, {
        id: packRowId,
        namespace,
        pack_id: packId,
        owner_id: user.id,
        title,
        summary: text(data, 'summary'),
        description: typeof data.description === 'string' ? data.description : '',
        category_id: categoryKey === '' ? null : (await findCategoryIdByKey(trx, categoryKey)) ?? null,
        thumbnail_file_id: thumbnail?.fileId ?? null,
        created_at: now,
        updated_at: now,
      })
      await insertPackTags(trx, packRowId, await findTagIdsByNames(trx, tagNames))
      await insertPackMedia(trx, packRowId, media.map((m) => m.fileId))
      await insertVersion(trx, {
        id: randomUUID(),
        pack_id: packRowId,
        name: versionName,
        changelog: typeof data.changelog === 'string' ? data.changelog : '',
        pack_format: version.packFormat,
        file_id: version.fileId,
        created_at: now,
      })
      // The uploads stop being pending: the pack now refers to their files.
      await deleteUploadRows(trx, uploads.map((u) => u.id))
      const extras = thumbnails.slice(0, -1).map((u) => u.fileId)
      await deleteFileRows(trx, extras)
      await deleteDraftRow(trx, draftId)
      return extras
    })
  } catch (error) {
    // Two publishes racing for one pack id: the unique index decides, and the loser hears 409.
    if (!(error instanceof DomainError) && packId !== undefined && (await packExists(db, namespace, packId))) {
      throw new Conflict(`a pack "${namespace}:${packId}" already exists`)
    }
    throw error
  }
  // After the commit: a crash before this line leaves unreferenced bytes, never a row without its file.
  await deleteStoredFiles(store, extraFileIds)
  return { namespace, packId: packId! }
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

export interface NewVersion {
  ownerId: string
  packRowId: string
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
export async function addVersion(db: Db, store: FileStore, input: NewVersion): Promise<void> {
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
      await insertVersion(trx, {
        id: randomUUID(),
        pack_id: input.packRowId,
        name: versionName,
        changelog: input.changelog ?? '',
        pack_format: input.file.packFormat,
        file_id: input.file.id,
        created_at: nowIso(createdAt),
      })
    })
  } catch (error) {
    await store.delete(input.file.id)
    if (!(error instanceof DomainError) && name !== undefined && (await versionNameTaken(db, input.packRowId, name))) {
      throw new Conflict(`the pack already has a version named "${name}"`)
    }
    throw error
  }
}
