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
import { findUserRowByUsername } from '../accounts/users-repository.js'
import type { TokenReach } from '../auth/token-reach.js'
import { may, roleOf, type PackAction, type PackActor, type PackTeam } from './policy.js'
import { roleNow } from './team-repository.js'
import { insertFile } from '../files/repository.js'
import { claimArchive } from './archive-claims.js'
import { ingestFile, type IngestedFile } from '../uploads/ingest.js'
import type { UpdateCheckCache } from '../update-check/cache.js'
import { packChanged } from '../update-check/service.js'
import { recordAudit, versionTarget, type Actor } from '../audit/service.js'
import { recordPackEvent } from '../events/record.js'
import {
  insertVersion, listPacks, loadPackDetail, newestVersionCreatedAt, touchPackNow, versionNameTaken,
  type MediaRef, type PackDetail, type PackFilter, type PackRecord, type PackSort, type PackSummaryRecord, type VersionRecord, type Viewer,
} from './repository.js'
import { reindexPack } from './search-service.js'

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
  filter: PackFilter & { member?: string | undefined },
  page: number,
  perPage: number,
  sort: PackSort = 'updated',
): Promise<{ items: PackSummaryRecord[]; total: number; capped: boolean }> {
  const { member, ...rest } = filter
  if (member !== undefined) {
    // By a person's name: the packs they own or are in the team of; an unknown name has none.
    const user = await findUserRowByUsername(db, member)
    if (!user) return { items: [], total: 0, capped: false }
    rest.memberId = user.id
  }
  return listPacks(db, rest, { limit: perPage, offset: (page - 1) * perPage }, sort)
}

/**
 * May `viewer` see the pack? Hidden packs (by staff, or of a disabled account) only to their team and staff
 * (src/packs/policy.ts). A listing's record carries no team: there only the owner and staff see a hidden one.
 */
export function canSee(viewer: Viewer | null | undefined, pack: Pick<PackRecord, 'id' | 'hidden' | 'ownerDisabled' | 'ownerId'> & { team?: PackTeam['team'] }): boolean {
  if (!pack.hidden && !pack.ownerDisabled) return true
  if (viewer == null) return false
  return may({ userId: viewer.id, isStaff: viewer.isStaff }, 'see', { id: pack.id, ownerId: pack.ownerId, team: pack.team ?? [] })
}

const ACTION_WORDS: Record<PackAction, string> = {
  'see': 'see this pack',
  'see-pending': 'see its invitations',
  'publish-version': 'publish versions of this pack',
  'edit-changelog': 'edit its changelogs',
  'edit': 'edit this pack',
  'manage-versions': 'yank or delete its versions',
  'invite': 'invite people to its team',
  'manage-member': 'change that member',
  'delete': 'delete this pack',
  'transfer': 'hand this pack to someone else',
  'leave': 'leave its team',
  'manage-webhooks': 'manage its webhooks',
}

/**
 * The pack, when `actor` may do `action` to it (src/packs/policy.ts). Otherwise 404, as for a missing pack
 * (docs/decisions.md: a pack's private actions are 404 to whoever may not do them); to someone in its team, or
 * staff, who knows the pack is there, the detail says which role does not allow what.
 */
export async function packFor(db: Db, namespace: string, packId: string, actor: PackActor, action: PackAction): Promise<PackDetail> {
  const pack = await loadPackDetail(db, namespace.toLowerCase(), packId.toLowerCase())
  if (!pack || !canSee({ id: actor.userId, isStaff: actor.isStaff }, pack)) throw new NotFound('pack not found')
  if (!may(actor, action, pack)) throw refusalOf(actor, pack, action)
  return pack
}

/** Why `actor` may not do `action` (see packFor). */
export function refusalOf(actor: PackActor, pack: PackDetail, action: PackAction): DomainError {
  const role = roleOf(actor, pack)
  if (role === null && !actor.isStaff) return new NotFound('pack not found')
  if (actor.reach && actor.reach.scope !== 'full') return new NotFound(`pack not found for this token: it may not ${ACTION_WORDS[action]}`)
  return new NotFound(`pack not found for you: as ${role === null ? 'staff' : `its ${role}`} you may not ${ACTION_WORDS[action]}`)
}

/** Someone acting on a pack (a signed-in user, or the admin CLI), with the reach of the token they came with. */
export type PackChanger = Actor & { reach?: TokenReach | null }

/** A signed-in user or the CLI (and the reach of the token they came with) as the policy sees them. */
export function actorOf(actor: Pick<PackChanger, 'id' | 'isStaff' | 'reach'>, reach?: TokenReach | null): PackActor {
  return { userId: actor.id, isStaff: actor.isStaff, reach: reach ?? actor.reach ?? null }
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
  reach: TokenReach | null = null,
): Promise<PackDetail> {
  const lowerNamespace = namespace.toLowerCase()
  const lowerPackId = packId.toLowerCase()
  const pack = await packFor(deps.db, lowerNamespace, lowerPackId, actorOf(user, reach), 'publish-version')
  const packRowId = pack.id
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
    packRowId, file: form.file, versionName: form.versionName, changelog: form.changelog,
    actor: user, namespace: lowerNamespace, packId: lowerPackId,
  })
  await packChanged(deps.updateCheckCache, lowerNamespace, lowerPackId)
  return getPack(deps.db, lowerNamespace, lowerPackId, user)
}

interface NewVersion {
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
      // First statement: takes the pack's row lock, so concurrent versions of one pack queue up here, and a
      // removal from the team that committed meanwhile is seen (it takes effect at once).
      const owner = await touchPackNow(trx, input.packRowId, nowIso(now))
      if (owner === undefined) throw new NotFound('pack not found')
      if (input.actor.id !== null && !input.actor.isStaff && (await roleNow(trx, input.packRowId, owner, input.actor.id)) === null) {
        throw new NotFound('pack not found')
      }
      if (await versionNameTaken(trx, input.packRowId, versionName)) {
        throw new Conflict(`the pack already has a version named "${versionName}"`)
      }
      const newest = await newestVersionCreatedAt(trx, input.packRowId)
      const createdAt = newest === undefined ? now : Math.max(now, Date.parse(newest) + 1)
      if (createdAt !== now) await touchPackNow(trx, input.packRowId, nowIso(createdAt))
      await insertFile(trx, input.file)
      // The bytes become the pack's, and so its owner's, whoever in its team published them.
      await claimArchive(trx, { fileId: input.file.id, packRowId: input.packRowId, ownerId: owner, now })
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
      await reindexPack(trx, input.packRowId)
      await recordPackEvent(trx, { type: 'version.published', packRowId: input.packRowId, actor: input.actor, version: versionName, now: createdAt })
    })
  } catch (error) {
    await store.delete(input.file.storageKey)
    if (!(error instanceof DomainError) && name !== undefined && (await versionNameTaken(db, input.packRowId, name))) {
      throw new Conflict(`the pack already has a version named "${name}"`)
    }
    throw error
  }
}
