// The SQL of archive claims (./archive-claims.ts): which pack first published
// an archive's bytes, and staff's exceptions. The caller opens the transaction
// and passes it as `db`.
import { sql } from 'kysely'
import type { Db } from '../db/index.js'

export interface ClaimRecord {
  sha256: string
  packRowId: string
  /** The claiming pack's owner now, or, once the pack is gone, its owner when it claimed the archive. */
  ownerId: string
  heldUntil: string | null
  /** The claiming pack, while it exists; `listed` when anyone may see it (not hidden, owner not disabled). */
  pack: { namespace: string; packId: string; listed: boolean } | null
}

export async function fileHashes(db: Db, fileId: string): Promise<{ sha256: string; sha1: string | null } | undefined> {
  return db.selectFrom('files').select(['sha256', 'sha1']).where('id', '=', fileId).executeTakeFirst()
}

/** Whether a published version's archive has this SHA-1 but other bytes (another SHA-256): a SHA-1 collision. */
export async function sha1CollisionExists(db: Db, sha1: string, sha256: string): Promise<boolean> {
  const row = await db
    .selectFrom('files')
    .innerJoin('versions', 'versions.file_id', 'files.id')
    .select('files.id')
    .where('files.sha1', '=', sha1)
    .where('files.sha256', '<>', sha256)
    .executeTakeFirst()
  return row !== undefined
}

/** Claims the archive for the pack if nobody has; true when this call made the claim. */
export async function insertClaimIfNew(db: Db, claim: { sha256: string; packRowId: string; ownerId: string; now: string }): Promise<boolean> {
  const result = await db
    .insertInto('archive_claims')
    .values({ sha256: claim.sha256, pack_row_id: claim.packRowId, owner_id: claim.ownerId, claimed_at: claim.now, held_until: null })
    .onConflict((oc) => oc.column('sha256').doNothing())
    .executeTakeFirst()
  return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0
}

/**
 * Moves a released claim (its pack no longer has the bytes) to this pack, when
 * its hold has run out, or the claim was this owner's or this pack's anyway.
 * One statement, so two publishers cannot both take it.
 */
export async function takeReleasedClaim(db: Db, claim: { sha256: string; packRowId: string; ownerId: string; now: string }): Promise<boolean> {
  const result = await db
    .updateTable('archive_claims')
    .set({ pack_row_id: claim.packRowId, owner_id: claim.ownerId, claimed_at: claim.now, held_until: null })
    .where('sha256', '=', claim.sha256)
    .where('held_until', 'is not', null)
    .where((eb) => eb.or([
      eb('held_until', '<=', claim.now),
      eb('owner_id', '=', claim.ownerId),
      eb('pack_row_id', '=', claim.packRowId),
    ]))
    .executeTakeFirst()
  return Number(result.numUpdatedRows) > 0
}

export async function findClaim(db: Db, sha256: string): Promise<ClaimRecord | undefined> {
  const row = await db
    .selectFrom('archive_claims')
    .leftJoin('packs', 'packs.id', 'archive_claims.pack_row_id')
    .select([
      'archive_claims.sha256', 'archive_claims.pack_row_id', 'archive_claims.owner_id', 'archive_claims.held_until',
      'packs.namespace', 'packs.pack_id', 'packs.owner_id as pack_owner_id', 'packs.hidden_at', 'packs.owner_disabled',
    ])
    .where('archive_claims.sha256', '=', sha256)
    .executeTakeFirst()
  if (!row) return undefined
  return {
    sha256: row.sha256,
    packRowId: row.pack_row_id,
    ownerId: row.pack_owner_id ?? row.owner_id,
    heldUntil: row.held_until,
    pack: row.namespace === null || row.pack_id === null
      ? null
      : { namespace: row.namespace, packId: row.pack_id, listed: row.hidden_at === null && Number(row.owner_disabled) === 0 },
  }
}

/** Gives a claim to a pack outright (staff, `packs archive transfer`). */
export async function setClaim(db: Db, claim: { sha256: string; packRowId: string; ownerId: string; now: string }): Promise<void> {
  await db
    .insertInto('archive_claims')
    .values({ sha256: claim.sha256, pack_row_id: claim.packRowId, owner_id: claim.ownerId, claimed_at: claim.now, held_until: null })
    .onConflict((oc) => oc.column('sha256').doUpdateSet({ pack_row_id: claim.packRowId, owner_id: claim.ownerId, claimed_at: claim.now, held_until: null }))
    .execute()
}

export async function hasPermit(db: Db, sha256: string, userId: string): Promise<boolean> {
  const row = await db.selectFrom('archive_permits').select('sha256').where('sha256', '=', sha256).where('user_id', '=', userId).executeTakeFirst()
  return row !== undefined
}

export async function insertPermit(db: Db, sha256: string, userId: string, now: string): Promise<void> {
  await db.insertInto('archive_permits').values({ sha256, user_id: userId, created_at: now })
    .onConflict((oc) => oc.columns(['sha256', 'user_id']).doNothing()).execute()
}

/**
 * Starts the hold on the pack's claims whose bytes none of its versions has
 * any more (after a version or the pack itself was deleted).
 */
export async function releaseUnusedClaims(db: Db, packRowId: string, heldUntil: string): Promise<void> {
  await db
    .updateTable('archive_claims')
    .set({ held_until: heldUntil })
    .where('pack_row_id', '=', packRowId)
    .where('held_until', 'is', null)
    .where((eb) => eb.not(eb.exists(
      eb.selectFrom('versions')
        .innerJoin('files', 'files.id', 'versions.file_id')
        .select('versions.id')
        .where('versions.pack_id', '=', packRowId)
        .whereRef('files.sha256', '=', 'archive_claims.sha256'),
    )))
    .execute()
}

/** Claims every archive no pack claims yet for the pack of the first version that published it (an import of an older export). */
export async function insertMissingClaims(db: Db): Promise<void> {
  await sql`
    insert into archive_claims (sha256, pack_row_id, owner_id, claimed_at, held_until)
    select sha256, pack_id, owner_id, created_at, null from (
      select files.sha256, versions.pack_id, packs.owner_id, versions.created_at,
             row_number() over (partition by files.sha256 order by versions.created_at, versions.id) as rank
      from versions
      join files on files.id = versions.file_id
      join packs on packs.id = versions.pack_id
      where not exists (select 1 from archive_claims where archive_claims.sha256 = files.sha256)
    ) as ranked
    where rank = 1`.execute(db)
}
