// Whose bytes an archive is. Players' updaters find out which pack an archive
// on disk is by its hash alone (the by-hash lookups, and Modrinth's
// version_file routes), so whoever could publish the same bytes in a pack of
// their own could take over every player who holds them. As Modrinth refuses
// a file hash another project already uses, the bytes of an archive belong to
// the pack that first published them (docs/decisions.md, "Whose bytes an
// archive is"):
//
// - publishing a pack, or adding a version, whose archive another owner's pack
//   claims is a 409 that says so; the same owner may re-use an archive across
//   their own packs (the claim stays with the first pack); staff may allow one
//   user a copy from the CLI (`packs archive allow`), recorded in the audit log;
// - the by-hash lookups only ever name the claiming pack: when it is hidden,
//   disabled or gone, the answer is "not found", never another pack;
// - when the claiming pack no longer has the bytes (the version or the pack
//   was deleted), the claim is held for PACK_ID_HOLD_DAYS, as a deleted pack's
//   id is: only that owner (or that pack) may publish them meanwhile.
import { PACK_ID_HOLD_DAYS } from '../api/constants.js'
import type { Db } from '../db/index.js'
import { nowIso } from '../db/time.js'
import { BadRequest, Conflict, NotFound } from '../errors.js'
import { findUserRowByUsername } from '../accounts/users-repository.js'
import { archiveTarget, CLI_ACTOR, recordAudit, type Actor } from '../audit/service.js'
import { findPackRowId } from './repository.js'
import {
  fileHashes, findClaim, hasPermit, insertClaimIfNew, insertMissingClaims, insertPermit, releaseUnusedClaims, setClaim, sha1CollisionExists, takeReleasedClaim, type ClaimRecord,
} from './archive-claims-repository.js'

export type { ClaimRecord }

const DAY_MS = 86_400_000

/** When a claim released at `now` stops being held. */
export function claimHeldUntil(now: number): string {
  return nowIso(now + PACK_ID_HOLD_DAYS * DAY_MS)
}

/**
 * Claims the archive stored as `fileId` for the pack, or refuses with a 409
 * when another owner's pack holds it. Call it in the transaction that records
 * the version: the claim and the version commit together or not at all.
 */
export async function claimArchive(db: Db, input: { fileId: string; packRowId: string; ownerId: string; now: number }): Promise<void> {
  const hashes = await fileHashes(db, input.fileId)
  if (hashes === undefined) throw new NotFound('the version\'s archive is gone')
  const { sha256, sha1 } = hashes
  // Updaters (Modrinth's clients first) look archives up by SHA-1 too, and SHA-1 collisions can be made: two
  // archives with one SHA-1 would make that lookup name either pack, so the second one is refused.
  if (sha1 !== null && (await sha1CollisionExists(db, sha1, sha256))) {
    throw new Conflict(`this archive's SHA-1 (${sha1}) is the same as that of another published archive with different bytes `
      + '(a SHA-1 collision); it is refused so that a lookup by SHA-1 names one archive only')
  }
  const claim = { sha256, packRowId: input.packRowId, ownerId: input.ownerId, now: nowIso(input.now) }
  if (await insertClaimIfNew(db, claim)) return
  if (await takeReleasedClaim(db, claim)) return
  const held = await findClaim(db, sha256)
  // Gone between the two statements (an import replacing everything): claim it now.
  if (held === undefined) return void (await setClaim(db, claim))
  if (held.packRowId === input.packRowId || held.ownerId === input.ownerId) return
  if (await hasPermit(db, sha256, input.ownerId)) return
  throw new Conflict(refusal(held))
}

function refusal(held: ClaimRecord): string {
  const copy = `this archive (SHA-256 ${held.sha256}) `
  const advice = 'so players who have it are never moved to another pack. Publish your own build (any change to the '
    + 'archive makes it a different one), or ask the site\'s staff to allow this copy'
  if (held.heldUntil !== null) {
    return `${copy}belonged to another owner's pack that no longer offers it, and is held for that owner until ${held.heldUntil}, ${advice}`
  }
  // A hidden pack's name is not told to others.
  const whose = held.pack?.listed === true ? `another owner's pack ${held.pack.namespace}:${held.pack.packId}` : 'another owner\'s pack'
  return `${copy}was first published by ${whose}, ${advice}`
}

/** After versions (or the whole pack) were deleted in this transaction: holds the claims whose bytes the pack no longer has. */
export async function releaseClaims(db: Db, packRowId: string, now: number): Promise<void> {
  await releaseUnusedClaims(db, packRowId, claimHeldUntil(now))
}

function checkSha256(sha256: string): string {
  const hex = sha256.toLowerCase()
  if (!/^[0-9a-f]{64}$/.test(hex)) throw new BadRequest('give the archive\'s SHA-256 as 64 hex digits')
  return hex
}

/** Staff's exception: `username` may publish this archive in their packs although another owner's pack claims it. */
export async function allowArchiveCopy(db: Db, sha256: string, username: string, reason: string | undefined, actor: Actor = CLI_ACTOR, now: number = Date.now()): Promise<{ claim: ClaimRecord | undefined }> {
  const hex = checkSha256(sha256)
  return db.transaction().execute(async (trx) => {
    const user = await findUserRowByUsername(trx, username)
    if (!user) throw new NotFound(`no user "${username}"`)
    await insertPermit(trx, hex, user.id, nowIso(now))
    const claim = await findClaim(trx, hex)
    await recordAudit(trx, actor, 'archive.allow-copy', archiveTarget(hex), {
      user: user.username,
      claimed_by: claim?.pack ? `${claim.pack.namespace}:${claim.pack.packId}` : null,
      ...(reason?.trim() ? { reason: reason.trim() } : {}),
    })
    return { claim }
  })
}

/**
 * Staff give an archive's claim to another pack (the original author asks
 * that a pack which moved be the one players follow). From then on the
 * by-hash lookups name that pack.
 */
export async function transferArchiveClaim(db: Db, sha256: string, namespace: string, packId: string, reason: string | undefined, actor: Actor = CLI_ACTOR, now: number = Date.now()): Promise<void> {
  const hex = checkSha256(sha256)
  await db.transaction().execute(async (trx) => {
    const pack = await findPackRowId(trx, namespace.toLowerCase(), packId.toLowerCase())
    if (!pack) throw new NotFound(`no pack ${namespace}:${packId}`)
    const before = await findClaim(trx, hex)
    await setClaim(trx, { sha256: hex, packRowId: pack.id, ownerId: pack.ownerId, now: nowIso(now) })
    await recordAudit(trx, actor, 'archive.transfer', archiveTarget(hex), {
      from: before?.pack ? `${before.pack.namespace}:${before.pack.packId}` : null,
      to: `${namespace.toLowerCase()}:${packId.toLowerCase()}`,
      ...(reason?.trim() ? { reason: reason.trim() } : {}),
    })
  })
}

/** The claim on an archive, for `packs archive show`. */
export async function showArchiveClaim(db: Db, sha256: string): Promise<ClaimRecord | undefined> {
  return findClaim(db, checkSha256(sha256))
}

/** Claims each archive no pack claims yet for the pack that first published it (importing an export made before claims). */
export async function claimUnclaimedArchives(db: Db): Promise<void> {
  await insertMissingClaims(db)
}
