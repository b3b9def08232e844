// Managing a pack's versions after publishing: edit a
// changelog, yank and un-yank, delete. Owner and staff; anyone else hears
// NotFound, as for a missing pack. A yanked version stays downloadable by its
// file URL (nothing already installed breaks) but is never "latest": the
// update-check, the listing and the pages skip it.
import { nowIso } from '../db/time.js'
import { BadRequest, NotFound } from '../errors.js'
import { isUuid } from '../api/constants.js'
import { recordAudit, versionTarget, type Actor } from '../audit/service.js'
import { recordPackEvent } from '../events/record.js'
import { deleteFileRows, filesNotInUse } from '../files/repository.js'
import { deleteStoredFiles } from '../storage/delete.js'
import { packChanged } from '../update-check/service.js'
import { actorOf, getPack, packFor, refusalOf, type PackChanger, type PackDetail, type PacksDeps } from './service.js'
import { may, type PackAction } from './policy.js'
import { releaseClaims } from './archive-claims.js'
import { deleteVersionRow, findPackVersion, touchPack, updateVersion, type ManagedVersion } from './versions-repository.js'
import { reindexPack } from './search-service.js'

/** The longest changelog kept (Markdown), as for a new version's form field. */
export const MAX_CHANGELOG_LENGTH = 20_000

export interface VersionChanges {
  changelog?: string | undefined
  yanked?: boolean | undefined
}

async function managedVersion(deps: PacksDeps, actor: PackChanger, namespace: string, packId: string, versionId: string, action: PackAction) {
  const pack = await packFor(deps.db, namespace, packId, actorOf(actor), action)
  // A malformed id names nothing (docs/decisions.md#paths-and-ids).
  const version = isUuid(versionId) ? await findPackVersion(deps.db, pack.id, versionId.toLowerCase()) : undefined
  if (!version) throw new NotFound('version not found')
  return { pack, version }
}

/**
 * Changes a version's changelog and/or yanks or un-yanks it; returns the
 * pack. The update-check's cached answers are dropped (on every instance)
 * when a yank may change which version is newest.
 */
export async function editVersion(
  deps: PacksDeps,
  actor: PackChanger,
  namespace: string,
  packId: string,
  versionId: string,
  changes: VersionChanges,
): Promise<PackDetail> {
  const { pack, version } = await managedVersion(deps, actor, namespace, packId, versionId, 'edit-changelog')
  const changelog = changes.changelog
  if (changelog !== undefined && changelog.length > MAX_CHANGELOG_LENGTH) {
    throw new BadRequest(`changelog is longer than ${MAX_CHANGELOG_LENGTH} characters`)
  }
  const yankChanges = changes.yanked !== undefined && changes.yanked !== version.yanked
  const changelogChanges = changelog !== undefined && changelog !== version.changelog
  // An uploader may edit changelogs; a yank is a maintainer's (src/packs/policy.ts).
  if (yankChanges && !may(actorOf(actor), 'manage-versions', pack)) throw refusalOf(actorOf(actor), pack, 'manage-versions')
  if (yankChanges || changelogChanges) {
    await deps.db.transaction().execute(async (trx) => {
      const now = nowIso()
      // The pack's row lock first (updated_at rewritten unchanged: a yank is no update of the pack), so a
      // yank and a new version of one pack queue up on PostgreSQL.
      if (!(await touchPack(trx, pack.id, pack.updatedAt))) throw new NotFound('pack not found')
      const current = await findPackVersion(trx, pack.id, version.id)
      if (!current) throw new NotFound('version not found')
      await updateVersion(trx, version.id, {
        ...(changelogChanges ? { changelog } : {}),
        ...(yankChanges ? { yanked_at: changes.yanked ? now : null } : {}),
      })
      const target = versionTarget(pack.namespace, pack.packId, version.name)
      if (changelogChanges) await recordAudit(trx, actor, 'version.edit', target, { changelog: 'changed' })
      if (yankChanges) await recordAudit(trx, actor, changes.yanked ? 'version.yank' : 'version.unyank', target, {})
      // What the search's filters read: the pack's public versions.
      if (yankChanges) await reindexPack(trx, pack.id)
      if (yankChanges && changes.yanked) await recordPackEvent(trx, { type: 'version.yanked', packRowId: pack.id, actor, version: version.name })
    })
    if (yankChanges) await packChanged(deps.updateCheckCache, pack.namespace, pack.packId)
  }
  return getPack(deps.db, pack.namespace, pack.packId, actor)
}

/**
 * Deletes a version and its archive, unless another record still uses the
 * file. Deleting the only (or the only unyanked) version leaves the pack with
 * no latest version: the update-check then answers 404 saying so.
 */
export async function deleteVersion(deps: PacksDeps, actor: PackChanger, namespace: string, packId: string, versionId: string): Promise<void> {
  const { pack, version } = await managedVersion(deps, actor, namespace, packId, versionId, 'manage-versions')
  const storageKeys = await deps.db.transaction().execute(async (trx) => {
    if (!(await touchPack(trx, pack.id, pack.updatedAt))) throw new NotFound('pack not found')
    const current: ManagedVersion | undefined = await findPackVersion(trx, pack.id, version.id)
    if (!current) throw new NotFound('version not found')
    await deleteVersionRow(trx, version.id)
    await releaseClaims(trx, pack.id, (deps.clock ?? Date.now)())
    const unused = await filesNotInUse(trx, [current.fileId])
    await deleteFileRows(trx, unused.map((f) => f.id))
    await recordAudit(trx, actor, 'version.delete', versionTarget(pack.namespace, pack.packId, current.name), { yanked: current.yanked })
    await reindexPack(trx, pack.id)
    await recordPackEvent(trx, { type: 'version.deleted', packRowId: pack.id, actor, deletedVersion: { name: current.name, yanked: current.yanked } })
    return unused.map((f) => f.storage_key)
  })
  // After the commit: a crash before this line leaves unreferenced bytes (the sweep's doctor removes them), never a row without its file.
  await deleteStoredFiles(deps.store, storageKeys)
  await packChanged(deps.updateCheckCache, pack.namespace, pack.packId)
}
