// Editing a published pack's page: title, summary,
// description, category, tags, thumbnail and gallery. Owner and staff; anyone
// else hears NotFound, as for a missing pack. The pack_id never changes: it is
// what every player's mod asks for.
//
// Each edit names the revision it started from. The edit is one transaction
// whose first statement takes the pack's row only if it is still at that
// revision, so of two edits made from the same page state (two tabs, two
// people) one wins and the other hears 409, never a silent overwrite.
//
// updated_at is left alone: on the pages and in the listing's default order it
// means "has new content" (a new version), as Modrinth's "updated" does; a
// typo fixed in a title must not lift a pack to the top of the listing.
import { MAX_DESCRIPTION_LENGTH, MAX_SUMMARY_LENGTH } from '../api/packs.js'
import { isUuid } from '../api/constants.js'
import { BadRequest, Conflict, NotFound } from '../errors.js'
import { packTarget, recordAudit, type Actor } from '../audit/service.js'
import { recordPackEvent } from '../events/record.js'
import { deleteFileRows, filesNotInUse } from '../files/repository.js'
import { deleteStoredFiles, type PurgeLog } from '../storage/delete.js'
import { deleteUploadRows } from '../uploads/repository.js'
import { packChanged } from '../update-check/service.js'
import { MAX_TITLE_LENGTH, actorOf, getPack, packFor, type PackChanger, type PackDetail, type PacksDeps } from './service.js'
import {
  findCategoryByKey, findOwnedUploads, findTagsNamed, loadEditableState, lockPackAtRevision, packRevision, replacePackMedia,
  replacePackTags, updatePackFields, type ConsumableUpload, type EditableState,
} from './edit-repository.js'
import { reindexPack } from './search-service.js'

/** An edit as the API takes it (EditPackBody): fields left out stay as they are. */
export interface PackEdit {
  revision: number
  title?: string | undefined
  summary?: string | undefined
  description?: string | undefined
  /** A category key; null or '' for none. */
  category?: string | null | undefined
  tags?: readonly string[] | undefined
  /** A pending thumbnail upload's id (or the current thumbnail's file id: no change); null for none. */
  thumbnail?: string | null | undefined
  /** The whole gallery in order: the pack's media file ids and pending media upload ids. */
  media?: readonly string[] | undefined
}

/** How many offending names or ids a 400 lists: enough to fix them, never an echo of the whole body. */
const NAMES_SHOWN = 5
const NAME_SHOWN_LENGTH = 60

/**
 * Input checks that need no database: trimmed text within its limits. A
 * value equal to the pack's current one passes as it is: a pack published
 * before a limit existed can still be edited without retyping what it says.
 */
function checkText(edit: PackEdit, pack: Pick<PackDetail, 'title' | 'summary' | 'description'>): { title?: string; summary?: string; description?: string } {
  const out: { title?: string; summary?: string; description?: string } = {}
  if (edit.title !== undefined) {
    const title = edit.title.trim()
    if (title === '') throw new BadRequest('title must not be empty')
    if (title.length > MAX_TITLE_LENGTH && title !== pack.title) throw new BadRequest(`title is longer than ${MAX_TITLE_LENGTH} characters`)
    out.title = title
  }
  if (edit.summary !== undefined) {
    const summary = edit.summary.trim()
    if (summary.length > MAX_SUMMARY_LENGTH && summary !== pack.summary) {
      throw new BadRequest(`summary is longer than ${MAX_SUMMARY_LENGTH} characters`)
    }
    out.summary = summary
  }
  if (edit.description !== undefined) {
    if (edit.description.length > MAX_DESCRIPTION_LENGTH && edit.description !== pack.description) {
      throw new BadRequest(`description is longer than ${MAX_DESCRIPTION_LENGTH} characters`)
    }
    out.description = edit.description
  }
  return out
}

/** "a", "b", "c" and 2 more: client text quoted, each cut short. */
function listNames(names: readonly string[]): string {
  const shown = names.slice(0, NAMES_SHOWN).map((n) => JSON.stringify(n.length > NAME_SHOWN_LENGTH ? `${n.slice(0, NAME_SHOWN_LENGTH)}…` : n))
  return names.length > NAMES_SHOWN ? `${shown.join(', ')} and ${names.length - NAMES_SHOWN} more` : shown.join(', ')
}

/** Ids as stored (lower case); text that is no UUID names nothing and is reported as it was sent. */
function normalId(id: string): string {
  return isUuid(id) ? id.toLowerCase() : id
}

interface Plan {
  fields: { title?: string; summary?: string; description?: string; category_id?: string | null; thumbnail_file_id?: string | null }
  tagIds?: string[]
  mediaFileIds?: string[]
  /** Pending uploads the edit takes; their rows go, their files stay (the pack now refers to them). */
  consumed: ConsumableUpload[]
  /** Files the pack no longer refers to (old thumbnail, removed media); deleted if nothing else uses them. */
  released: string[]
  audit: Record<string, unknown>
}

/**
 * Works out what the edit changes against the pack's current state, checking
 * every name and id against the database (inside the edit's transaction, so
 * what it checks is what it writes).
 */
async function plan(
  trx: PacksDeps['db'], actor: Actor, state: EditableState, edit: PackEdit, text: ReturnType<typeof checkText>,
): Promise<Plan> {
  const result: Plan = { fields: {}, consumed: [], released: [], audit: {} }
  if (text.title !== undefined && text.title !== state.title) {
    result.fields.title = text.title
    result.audit.title = { from: state.title, to: text.title }
  }
  if (text.summary !== undefined && text.summary !== state.summary) {
    result.fields.summary = text.summary
    result.audit.summary = { from: state.summary, to: text.summary }
  }
  if (text.description !== undefined && text.description !== state.description) {
    result.fields.description = text.description
    result.audit.description = 'changed'
  }

  if (edit.category !== undefined) {
    // Category keys are lower case (the admin CLI enforces it).
    const key = (edit.category ?? '').trim().toLowerCase()
    let category: { id: string; key: string } | null = null
    if (key !== '') {
      category = (await findCategoryByKey(trx, key)) ?? null
      if (!category) throw new BadRequest(`unknown category ${listNames([edit.category!.trim()])}: use the key of one of the site's categories`)
    }
    if ((category?.id ?? null) !== state.categoryId) {
      result.fields.category_id = category?.id ?? null
      result.audit.category = { from: state.categoryKey, to: category?.key ?? null }
    }
  }

  if (edit.tags !== undefined) {
    const wanted = edit.tags.map((t) => t.trim()).filter((t) => t !== '')
    const found = await findTagsNamed(trx, wanted)
    const byLower = new Map(found.map((t) => [t.nameLower, t]))
    // Each unknown name once, as first spelled.
    const unknown = new Map<string, string>()
    for (const name of wanted) {
      const lower = name.toLowerCase()
      if (!byLower.has(lower) && !unknown.has(lower)) unknown.set(lower, name)
    }
    if (unknown.size > 0) {
      throw new BadRequest(`${unknown.size === 1 ? 'unknown tag' : 'unknown tags'} ${listNames([...unknown.values()])}: only the site's tags can be used`)
    }
    const tags = [...new Map(wanted.map((n) => byLower.get(n.toLowerCase())!).map((t) => [t.id, t])).values()]
    const before = new Set(state.tags.map((t) => t.id))
    if (tags.length !== before.size || tags.some((t) => !before.has(t.id))) {
      result.tagIds = tags.map((t) => t.id)
      const byName = (a: string, b: string) => (a.toLowerCase() < b.toLowerCase() ? -1 : a.toLowerCase() > b.toLowerCase() ? 1 : 0)
      result.audit.tags = { from: state.tags.map((t) => t.name), to: tags.map((t) => t.name).sort(byName) }
    }
  }

  // Uploads named by the thumbnail and the gallery, in one lookup; only the caller's own pending uploads count.
  const thumbnailId = typeof edit.thumbnail === 'string' ? normalId(edit.thumbnail) : null
  const mediaIds = edit.media?.map(normalId)
  const current = new Set(state.mediaFileIds)
  const uploadIds = [
    ...(thumbnailId !== null && thumbnailId !== state.thumbnailFileId && isUuid(thumbnailId) ? [thumbnailId] : []),
    ...(mediaIds ?? []).filter((id) => !current.has(id) && isUuid(id)),
  ]
  const uploads = actor.id === null || uploadIds.length === 0 ? new Map<string, ConsumableUpload>()
    : new Map((await findOwnedUploads(trx, actor.id, uploadIds)).map((u) => [u.id, u]))

  if (edit.thumbnail !== undefined) {
    if (thumbnailId === null) {
      if (state.thumbnailFileId !== null) {
        result.fields.thumbnail_file_id = null
        result.released.push(state.thumbnailFileId)
        result.audit.thumbnail = 'removed'
      }
    } else if (thumbnailId !== state.thumbnailFileId) {
      const upload = uploads.get(thumbnailId)
      if (!upload || upload.kind !== 'thumbnail') {
        throw new BadRequest(`thumbnail ${listNames([edit.thumbnail!])} is not a pending thumbnail upload of yours `
          + '(upload it with POST /api/uploads/, kind thumbnail)')
      }
      result.fields.thumbnail_file_id = upload.fileId
      result.consumed.push(upload)
      if (state.thumbnailFileId !== null) result.released.push(state.thumbnailFileId)
      result.audit.thumbnail = state.thumbnailFileId === null ? 'added' : 'replaced'
    }
  }

  if (mediaIds !== undefined) {
    const seen = new Set<string>()
    const repeated = new Set<string>()
    for (const id of mediaIds) (seen.has(id) ? repeated : seen).add(id)
    if (repeated.size > 0) throw new BadRequest(`media names ${listNames([...repeated])} more than once`)
    const fileIds: string[] = []
    const unknown: string[] = []
    let added = 0
    for (const [i, id] of mediaIds.entries()) {
      if (current.has(id)) {
        fileIds.push(id)
        continue
      }
      const upload = uploads.get(id)
      if (upload && upload.kind === 'media') {
        fileIds.push(upload.fileId)
        result.consumed.push(upload)
        added++
      } else {
        unknown.push(edit.media![i]!)
      }
    }
    if (unknown.length > 0) {
      throw new BadRequest(`media ${listNames(unknown)} ${unknown.length === 1 ? 'is' : 'are'} neither in this pack's gallery nor a `
        + 'pending media upload of yours (upload with POST /api/uploads/, kind media)')
    }
    const kept = new Set(fileIds)
    const removed = state.mediaFileIds.filter((id) => !kept.has(id))
    const keptInOrder = state.mediaFileIds.filter((id) => kept.has(id))
    const reordered = fileIds.filter((id) => current.has(id)).some((id, i) => id !== keptInOrder[i])
    if (added > 0 || removed.length > 0 || reordered) {
      result.mediaFileIds = fileIds
      result.released.push(...removed)
      result.audit.media = { added, removed: removed.length, reordered }
    }
  }
  return result
}

function changesSomething(p: Plan): boolean {
  return Object.keys(p.fields).length > 0 || p.tagIds !== undefined || p.mediaFileIds !== undefined
}

/**
 * Applies `edit` to the pack (who may: src/packs/policy.ts; anyone else outside its team: NotFound) and
 * returns the pack as it now is. An edit from a revision that is no longer
 * current is a Conflict and changes nothing. An edit that changes nothing
 * leaves the revision as it is and records nothing.
 */
export async function editPack(
  deps: PacksDeps,
  actor: PackChanger,
  namespace: string,
  packId: string,
  edit: PackEdit,
  log?: PurgeLog,
): Promise<PackDetail> {
  const pack = await packFor(deps.db, namespace, packId, actorOf(actor), 'edit')
  const text = checkText(edit, pack)
  const outcome = await deps.db.transaction().execute(async (trx) => {
    if (!(await lockPackAtRevision(trx, pack.id, edit.revision))) {
      const current = await packRevision(trx, pack.id)
      if (current === undefined) throw new NotFound('pack not found')
      throw new Conflict(`the pack was changed elsewhere since this edit began (it is at revision ${current}, the edit started `
        + `from revision ${edit.revision}): reload it and make the changes again`)
    }
    const state = await loadEditableState(trx, pack.id)
    if (!state) throw new NotFound('pack not found')
    const p = await plan(trx, actor, state, edit, text)
    if (!changesSomething(p)) return { storageKeys: [], titleChanged: false }
    if (!(await updatePackFields(trx, pack.id, edit.revision, p.fields))) throw new NotFound('pack not found')
    if (p.tagIds !== undefined) await replacePackTags(trx, pack.id, p.tagIds)
    if (p.mediaFileIds !== undefined) await replacePackMedia(trx, pack.id, p.mediaFileIds)
    await deleteUploadRows(trx, p.consumed.map((u) => u.id))
    // Files no record uses any more (checked after the pack stopped referring to them, in this transaction).
    const unused = await filesNotInUse(trx, p.released)
    await deleteFileRows(trx, unused.map((f) => f.id))
    await recordAudit(trx, actor, 'pack.edit', packTarget(pack.namespace, pack.packId), p.audit)
    await reindexPack(trx, pack.id)
    await recordPackEvent(trx, { type: 'pack.edited', packRowId: pack.id, actor, changes: Object.keys(p.audit) })
    return { storageKeys: unused.map((f) => f.storage_key), titleChanged: p.fields.title !== undefined }
  })
  // After the commit: a crash before this line leaves unreferenced bytes (the doctor removes them), never a row without its file.
  await deleteStoredFiles(deps.store, outcome.storageKeys, log)
  // The update-check answer carries the title as `name`: every instance must drop what it cached.
  if (outcome.titleChanged) await packChanged(deps.updateCheckCache, pack.namespace, pack.packId)
  return getPack(deps.db, pack.namespace, pack.packId, actor)
}
