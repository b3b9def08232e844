// Publishing a draft (docs/decisions.md#publishing): the create page's draft becomes a pack with its first
// version in one transaction, so a failure anywhere leaves the draft, its uploads and the pack as they were.
import { randomUUID } from 'node:crypto'
import { nowIso } from '../db/time.js'
import { BadRequest, Conflict, DomainError, NotFound } from '../errors.js'
import { fieldTextFault } from '../http/text-input.js'
import type { User } from '../auth/user.js'
import { namespaceOf } from '../accounts/usernames.js'
import { draftIdOf, readDraftFields } from '../drafts/data.js'
import { deleteDraftRow, findOwnedDraft } from '../drafts/repository.js'
import { deleteFileRows } from '../files/repository.js'
import { deleteStoredFiles } from '../storage/delete.js'
import { deleteUploadRows, listDraftUploads } from '../uploads/repository.js'
import { packChanged } from '../update-check/service.js'
import { packTarget, recordAudit } from '../audit/service.js'
import { notifyUser } from '../notifications/service.js'
import { claimArchive } from './archive-claims.js'
import { findCategoryIdByKey, findTagIdsByNames, insertPack, insertPackMedia, insertPackTags, insertVersion, packExists, type PackDetail } from './repository.js'
import { MAX_TITLE_LENGTH, MAX_VERSION_NAME_LENGTH, checkLength, getPack, type PacksDeps } from './service.js'
import { slugify } from './slugs.js'
import { insertInvitation } from './team-repository.js'
import { INVITATION_DAYS } from './team-service.js'
import { findUserRowByUsername } from '../accounts/users-repository.js'
import type { Db } from '../db/index.js'
import { packIdHeldUntil } from './versions-repository.js'
import { reindexPack } from './search-service.js'

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
      await inviteCoAuthors(trx, user, { id: packRowId, namespace, packId, title }, fields.team, (deps.clock ?? Date.now)())
      await reindexPack(trx, packRowId)
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

/**
 * The co-authors the draft names, invited into the new pack's team in the publish's transaction (so a refusal
 * publishes nothing). A name that is no account, a disabled account or the publisher is a 400 naming it: the
 * create page offers only existing names, so this is a draft saved elsewhere or an account changed since.
 */
async function inviteCoAuthors(
  db: Db, user: User, pack: { id: string; namespace: string; packId: string; title: string }, team: ReadonlyArray<{ username: string; role: 'maintainer' | 'uploader' }>, now: number,
): Promise<void> {
  const problems: string[] = []
  const invitees: Array<{ id: string; username: string; role: 'maintainer' | 'uploader' }> = []
  for (const member of team) {
    const row = await findUserRowByUsername(db, member.username)
    if (!row) problems.push(`no account is named "${member.username}"`)
    else if (row.id === user.id) problems.push('you cannot invite yourself')
    else if (row.disabled_at !== null) problems.push(`the account "${row.username}" is disabled`)
    else invitees.push({ id: row.id, username: row.username, role: member.role })
  }
  if (problems.length > 0) throw new BadRequest(`cannot publish the draft: of its co-authors, ${problems.join('; ')}`)
  for (const invitee of invitees) {
    // A fresh pack: nobody can be in its team already, so the insert cannot be refused.
    await insertInvitation(db, {
      packRowId: pack.id, userId: invitee.id, role: invitee.role, invitedBy: user.id, now: nowIso(now), expiresAt: nowIso(now + INVITATION_DAYS * 86_400_000),
    })
    await recordAudit(db, user, 'team.invite', packTarget(pack.namespace, pack.packId), { user: invitee.username, role: invitee.role })
    await notifyUser(db, invitee.id, 'team.invited', pack.id, { namespace: pack.namespace, pack_id: pack.packId, title: pack.title, role: invitee.role, by: user.username }, now)
  }
}
