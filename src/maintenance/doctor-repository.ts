// The SQL of the consistency check (src/maintenance/doctor.ts) and of the marker a
// running `packs import` leaves in the settings table.
//
// Every column that refers to a stored file is listed in FILE_USES below: a
// new table that keeps files must be added there, or the check would take its
// files for unreferenced ones.
import type { Db } from '../db/index.js'
import { getSetting, putSetting } from '../auth/credentials-repository.js'

export interface FileRowSummary {
  id: string
  storageKey: string
  size: number
  createdAt: string
}

/** File rows in storage-key order (the order FileStore.list() uses), after `after`. */
export async function listFilesByStorageKey(db: Db, after: string, limit: number): Promise<FileRowSummary[]> {
  const rows = await db
    .selectFrom('files')
    .select(['id', 'storage_key', 'size', 'created_at'])
    .where('storage_key', '>', after)
    .orderBy('storage_key')
    .limit(limit)
    .execute()
  return rows.map((row) => ({ id: row.id, storageKey: row.storage_key, size: Number(row.size), createdAt: row.created_at }))
}

/** Which of `keys` some file row stores its bytes under. */
export async function storageKeysInUse(db: Db, keys: readonly string[]): Promise<Set<string>> {
  if (keys.length === 0) return new Set()
  const rows = await db.selectFrom('files').select('storage_key').where('storage_key', 'in', keys).execute()
  return new Set(rows.map((row) => row.storage_key))
}

export async function findFileSummary(db: Db, id: string): Promise<FileRowSummary | undefined> {
  const row = await db.selectFrom('files').select(['id', 'storage_key', 'size', 'created_at']).where('id', '=', id).executeTakeFirst()
  return row && { id: row.id, storageKey: row.storage_key, size: Number(row.size), createdAt: row.created_at }
}

/** A pack as people name it, `namespace:pack_id`. */
export type PackName = string

export interface FileUses {
  /** Published versions whose archive this is: `namespace:pack_id version`. */
  versions: string[]
  /** Packs whose thumbnail or gallery item this is. */
  packs: PackName[]
  /** Pending uploads (ids) of this file. */
  uploads: string[]
}

export async function findFileUses(db: Db, fileId: string): Promise<FileUses> {
  const versions = await db
    .selectFrom('versions')
    .innerJoin('packs', 'packs.id', 'versions.pack_id')
    .select(['packs.namespace', 'packs.pack_id', 'versions.name'])
    .where('versions.file_id', '=', fileId)
    .execute()
  const thumbnails = await db.selectFrom('packs').select(['namespace', 'pack_id']).where('thumbnail_file_id', '=', fileId).execute()
  const media = await db
    .selectFrom('pack_media')
    .innerJoin('packs', 'packs.id', 'pack_media.pack_id')
    .select(['packs.namespace', 'packs.pack_id'])
    .where('pack_media.file_id', '=', fileId)
    .execute()
  const uploads = await db.selectFrom('uploads').select('id').where('file_id', '=', fileId).execute()
  return {
    versions: versions.map((v) => `${v.namespace}:${v.pack_id} ${v.name}`),
    packs: [...thumbnails, ...media].map((p) => `${p.namespace}:${p.pack_id}`),
    uploads: uploads.map((u) => u.id),
  }
}

/** The last id among the next `window` rows of `table` in id order after `after`; null when there are none. */
async function windowEnd(db: Db, table: 'files' | 'packs' | 'versions', after: string, window: number): Promise<string | null> {
  const last = await db
    .selectFrom(db.selectFrom(table).select('id').where('id', '>', after).orderBy('id').limit(window).as('w'))
    .select((eb) => eb.fn.max('w.id').as('id'))
    .executeTakeFirst()
  return last?.id ?? null
}

/**
 * Of the next `window` file rows in id order after `after`, those nothing
 * refers to and created before `createdBefore`; and the last id looked at
 * (null when there was none), where the next call goes on. Each row is tested
 * by four indexed probes (versions, uploads, pack thumbnails, pack media by
 * file id: migrations 0002 and 0005), so a call costs `window` rows whatever
 * the size of the site, and the caller can let requests in between calls.
 */
export async function listUnreferencedFiles(
  db: Db, createdBefore: string, after: string, window: number,
): Promise<{ files: FileRowSummary[]; scannedThrough: string | null }> {
  const through = await windowEnd(db, 'files', after, window)
  if (through === null) return { files: [], scannedThrough: null }
  const rows = await db
    .selectFrom('files')
    .select(['files.id', 'files.storage_key', 'files.size', 'files.created_at'])
    .where('files.id', '>', after)
    .where('files.id', '<=', through)
    .where('files.created_at', '<', createdBefore)
    .where((eb) => eb.and([
      eb.not(eb.exists(eb.selectFrom('versions').select('versions.id').whereRef('versions.file_id', '=', 'files.id'))),
      eb.not(eb.exists(eb.selectFrom('uploads').select('uploads.id').whereRef('uploads.file_id', '=', 'files.id'))),
      eb.not(eb.exists(eb.selectFrom('packs').select('packs.id').whereRef('packs.thumbnail_file_id', '=', 'files.id'))),
      eb.not(eb.exists(eb.selectFrom('pack_media').select('pack_media.pack_id').whereRef('pack_media.file_id', '=', 'files.id'))),
    ]))
    .orderBy('files.id')
    .execute()
  return { files: rows.map((row) => ({ id: row.id, storageKey: row.storage_key, size: Number(row.size), createdAt: row.created_at })), scannedThrough: through }
}

export interface PackRef {
  id: string
  name: PackName
}

/**
 * Of the next `window` packs in id order after `after`, those with no version
 * at all (publishing makes both in one transaction); and the last id looked at
 * (null: none left). One indexed probe a pack, `window` packs a call.
 */
export async function listPacksWithoutVersions(db: Db, after: string, window: number): Promise<{ packs: PackRef[]; scannedThrough: string | null }> {
  const through = await windowEnd(db, 'packs', after, window)
  if (through === null) return { packs: [], scannedThrough: null }
  const rows = await db
    .selectFrom('packs')
    .select(['packs.id', 'packs.namespace', 'packs.pack_id'])
    .where('packs.id', '>', after)
    .where('packs.id', '<=', through)
    .where((eb) => eb.not(eb.exists(eb.selectFrom('versions').select('versions.id').whereRef('versions.pack_id', '=', 'packs.id'))))
    .orderBy('packs.id')
    .execute()
  return { packs: rows.map((row) => ({ id: row.id, name: `${row.namespace}:${row.pack_id}` })), scannedThrough: through }
}

export interface DanglingReference {
  /** Which row: `version`, `thumbnail`, `media` or `upload`. */
  kind: 'version' | 'thumbnail' | 'media' | 'upload'
  /** The referring row's id (for media: the pack's id). */
  rowId: string
  fileId: string
  /** Who it belongs to, for the report: `namespace:pack_id [version]`, or the upload's user id. */
  owner: string
}

/**
 * Of the next `window` versions in id order after `after`, those naming a file
 * row that does not exist; and the last id looked at (null: none left).
 * Versions are the large table, so they are walked in windows.
 */
export async function listVersionsWithoutFile(db: Db, after: string, window: number): Promise<{ references: DanglingReference[]; scannedThrough: string | null }> {
  const through = await windowEnd(db, 'versions', after, window)
  if (through === null) return { references: [], scannedThrough: null }
  const rows = await db
    .selectFrom('versions')
    .innerJoin('packs', 'packs.id', 'versions.pack_id')
    .select(['versions.id', 'versions.file_id', 'versions.name', 'packs.namespace', 'packs.pack_id'])
    .where('versions.id', '>', after)
    .where('versions.id', '<=', through)
    .where((eb) => eb.not(eb.exists(eb.selectFrom('files').select('files.id').whereRef('files.id', '=', 'versions.file_id'))))
    .orderBy('versions.id')
    .execute()
  return {
    references: rows.map((v) => ({ kind: 'version' as const, rowId: v.id, fileId: v.file_id, owner: `${v.namespace}:${v.pack_id} ${v.name}` })),
    scannedThrough: through,
  }
}

/**
 * Of the next `window` packs in id order after `after`, thumbnails and gallery
 * items naming a file row that does not exist (versions:
 * listVersionsWithoutFile); and the last pack id looked at (null when there
 * was none). The foreign keys forbid them; a partial restore, a manual edit
 * or a database without enforced keys does not. In windows like the other
 * whole-table checks: one query over every pack held SQLite (and so the event
 * loop) about 50 ms at 100,000 packs.
 */
export async function listDanglingPackFiles(db: Db, after: string, window: number): Promise<{ references: DanglingReference[]; scannedThrough: string | null }> {
  const through = await windowEnd(db, 'packs', after, window)
  if (through === null) return { references: [], scannedThrough: null }
  const thumbnails = await db
    .selectFrom('packs')
    .select(['packs.id', 'packs.thumbnail_file_id', 'packs.namespace', 'packs.pack_id'])
    .where('packs.id', '>', after)
    .where('packs.id', '<=', through)
    .where('packs.thumbnail_file_id', 'is not', null)
    .where((eb) => eb.not(eb.exists(eb.selectFrom('files').select('files.id').whereRef('files.id', '=', 'packs.thumbnail_file_id'))))
    .orderBy('packs.id')
    .execute()
  const media = await db
    .selectFrom('pack_media')
    .innerJoin('packs', 'packs.id', 'pack_media.pack_id')
    .select(['pack_media.pack_id', 'pack_media.file_id', 'packs.namespace', 'packs.pack_id as slug'])
    .where('pack_media.pack_id', '>', after)
    .where('pack_media.pack_id', '<=', through)
    .where((eb) => eb.not(eb.exists(eb.selectFrom('files').select('files.id').whereRef('files.id', '=', 'pack_media.file_id'))))
    .orderBy('pack_media.pack_id')
    .execute()
  return {
    references: [
      ...thumbnails.map((p) => ({ kind: 'thumbnail' as const, rowId: p.id, fileId: p.thumbnail_file_id!, owner: `${p.namespace}:${p.pack_id}` })),
      ...media.map((m) => ({ kind: 'media' as const, rowId: m.pack_id, fileId: m.file_id, owner: `${m.namespace}:${m.slug}` })),
    ],
    scannedThrough: through,
  }
}

/** Pending uploads naming a file row that does not exist (the uploads table holds only uploads in progress). */
export async function listDanglingUploads(db: Db, limit: number): Promise<DanglingReference[]> {
  const uploads = await db
    .selectFrom('uploads')
    .leftJoin('files', 'files.id', 'uploads.file_id')
    .select(['uploads.id', 'uploads.file_id', 'uploads.user_id'])
    .where('files.id', 'is', null)
    .orderBy('uploads.id')
    .limit(limit)
    .execute()
  return uploads.map((u) => ({ kind: 'upload' as const, rowId: u.id, fileId: u.file_id, owner: `user ${u.user_id}` }))
}

export interface StaleUpload {
  id: string
  fileId: string
  /** The pack that published the file. */
  pack: PackName
}

/**
 * Pending uploads whose file a pack already uses: publishing deletes the
 * upload rows in the transaction that makes the pack, so one left over is a
 * half-finished publish, and the sweep would delete a published file with it.
 */
export async function listUploadsOfPublishedFiles(db: Db, limit: number): Promise<StaleUpload[]> {
  const published = db
    .selectFrom('versions').innerJoin('packs', 'packs.id', 'versions.pack_id').select(['versions.file_id', 'packs.namespace', 'packs.pack_id'])
    .union(db.selectFrom('packs').select((eb) => [eb.ref('thumbnail_file_id').$notNull().as('file_id'), 'namespace', 'pack_id']).where('thumbnail_file_id', 'is not', null))
    .union(db.selectFrom('pack_media').innerJoin('packs', 'packs.id', 'pack_media.pack_id').select(['pack_media.file_id', 'packs.namespace', 'packs.pack_id']))
  const rows = await db
    .selectFrom('uploads')
    .innerJoin(published.as('published'), 'published.file_id', 'uploads.file_id')
    .select(['uploads.id', 'uploads.file_id', 'published.namespace', 'published.pack_id'])
    .orderBy('uploads.id')
    .limit(limit)
    .execute()
  return rows.map((row) => ({ id: row.id, fileId: row.file_id, pack: `${row.namespace}:${row.pack_id}` }))
}

export async function deleteUploadRowsOnly(db: Db, ids: readonly string[]): Promise<void> {
  if (ids.length > 0) await db.deleteFrom('uploads').where('id', 'in', ids).execute()
}

/** The settings key a running `packs import` holds until its rows are in. */
const IMPORT_MARKER = 'import_in_progress'

export interface ImportMarker {
  started_at: string
  /** The export directory being imported, for the operator reading the report. */
  dir: string
}

export async function readImportMarker(db: Db): Promise<ImportMarker | undefined> {
  const value = await getSetting(db, IMPORT_MARKER)
  if (value === undefined) return undefined
  try {
    return JSON.parse(value) as ImportMarker
  } catch {
    return { started_at: 'unknown', dir: 'unknown' }
  }
}

export async function writeImportMarker(db: Db, marker: ImportMarker): Promise<void> {
  await putSetting(db, IMPORT_MARKER, JSON.stringify(marker))
}

export async function clearImportMarker(db: Db): Promise<void> {
  await db.deleteFrom('settings').where('key', '=', IMPORT_MARKER).execute()
}

/** A row of a pack's team (or an ownership offer) that should not be there; see listTeamProblems. */
export interface TeamProblem {
  kind: 'owner-in-team' | 'lapsed-invitation' | 'stray-offer' | 'dangling-member'
  pack: PackName
  packRowId: string
  /** The member, invitee or offer's recipient. */
  userId: string
  username: string
  /** For a lapsed invitation or offer: when it lapsed. */
  expiresAt: string | null
  /** Which row: a member's (or invitation's) or an offer of ownership. */
  what: 'member' | 'invitation' | 'offer'
}

/**
 * The team rows that contradict each other or have outlived their use:
 * - a member row for the pack's own owner (ownership changes remove it; a bad restore or a hand edit may not);
 * - invitations and offers that lapsed (they grant nothing; the sweep removes them);
 * - an offer of ownership to someone who is not an accepted member of the pack's team, or to its owner
 *   (accepting one hands the pack to a stranger; the offer's routes never make one).
 * - a member row or offer whose user or pack row is gone: both tables' columns are foreign keys with cascade,
 *   so only a restore or an edit with the keys off leaves one (it grants nothing: the team's queries join users).
 */
export async function listTeamProblems(db: Db, now: string, limit: number): Promise<TeamProblem[]> {
  const ownerRows = await db
    .selectFrom('pack_members')
    .innerJoin('packs', 'packs.id', 'pack_members.pack_row_id')
    .innerJoin('users', 'users.id', 'pack_members.user_id')
    .select(['packs.id', 'packs.namespace', 'packs.pack_id', 'users.id as user_id', 'users.username'])
    .whereRef('pack_members.user_id', '=', 'packs.owner_id')
    .orderBy('packs.id')
    .limit(limit)
    .execute()
  const lapsedInvitations = await db
    .selectFrom('pack_members')
    .innerJoin('packs', 'packs.id', 'pack_members.pack_row_id')
    .innerJoin('users', 'users.id', 'pack_members.user_id')
    .select(['packs.id', 'packs.namespace', 'packs.pack_id', 'users.id as user_id', 'users.username', 'pack_members.expires_at'])
    .where('pack_members.accepted_at', 'is', null)
    .where('pack_members.expires_at', '<=', now)
    .orderBy('packs.id')
    .orderBy('users.id')
    .limit(limit)
    .execute()
  const offers = await db
    .selectFrom('pack_transfers')
    .innerJoin('packs', 'packs.id', 'pack_transfers.pack_row_id')
    .innerJoin('users', 'users.id', 'pack_transfers.to_user_id')
    .leftJoin('pack_members', (join) => join
      .onRef('pack_members.pack_row_id', '=', 'pack_transfers.pack_row_id')
      .onRef('pack_members.user_id', '=', 'pack_transfers.to_user_id')
      .on('pack_members.accepted_at', 'is not', null))
    .select(['packs.id', 'packs.namespace', 'packs.pack_id', 'packs.owner_id', 'users.id as user_id', 'users.username',
      'pack_transfers.expires_at', 'pack_members.user_id as member'])
    .where((eb) => eb.or([
      eb('pack_transfers.expires_at', '<=', now),
      eb('pack_members.user_id', 'is', null),
      eb('pack_transfers.to_user_id', '=', eb.ref('packs.owner_id')),
    ]))
    .orderBy('packs.id')
    .limit(limit)
    .execute()
  const danglingMembers = await db
    .selectFrom('pack_members')
    .leftJoin('packs', 'packs.id', 'pack_members.pack_row_id')
    .leftJoin('users', 'users.id', 'pack_members.user_id')
    .select(['pack_members.pack_row_id', 'pack_members.user_id', 'packs.namespace', 'packs.pack_id', 'users.username'])
    .where((eb) => eb.or([eb('packs.id', 'is', null), eb('users.id', 'is', null)]))
    .orderBy('pack_members.pack_row_id')
    .limit(limit)
    .execute()
  const danglingOffers = await db
    .selectFrom('pack_transfers')
    .leftJoin('packs', 'packs.id', 'pack_transfers.pack_row_id')
    .leftJoin('users', 'users.id', 'pack_transfers.to_user_id')
    .select(['pack_transfers.pack_row_id', 'pack_transfers.to_user_id as user_id', 'packs.namespace', 'packs.pack_id', 'users.username'])
    .where((eb) => eb.or([eb('packs.id', 'is', null), eb('users.id', 'is', null)]))
    .orderBy('pack_transfers.pack_row_id')
    .limit(limit)
    .execute()
  const dangling = (what: 'member' | 'offer') => (r: { pack_row_id: string; user_id: string; namespace: string | null; pack_id: string | null; username: string | null }): TeamProblem => ({
    kind: 'dangling-member',
    pack: r.namespace !== null && r.pack_id !== null ? `${r.namespace}:${r.pack_id}` : `pack ${r.pack_row_id}`,
    packRowId: r.pack_row_id,
    userId: r.user_id,
    username: r.username ?? `user ${r.user_id}`,
    expiresAt: null,
    what,
  })
  const name = (row: { namespace: string; pack_id: string }) => `${row.namespace}:${row.pack_id}`
  return [
    ...ownerRows.map((r) => ({ kind: 'owner-in-team' as const, pack: name(r), packRowId: r.id, userId: r.user_id, username: r.username, expiresAt: null, what: 'member' as const })),
    ...lapsedInvitations.map((r) => ({ kind: 'lapsed-invitation' as const, pack: name(r), packRowId: r.id, userId: r.user_id, username: r.username, expiresAt: r.expires_at, what: 'invitation' as const })),
    ...offers.map((r) => {
      // A lapsed offer is only that, whoever it was to: it can never be accepted.
      const lapsed = r.expires_at <= now
      return { kind: lapsed ? 'lapsed-invitation' as const : 'stray-offer' as const, pack: name(r), packRowId: r.id, userId: r.user_id, username: r.username, expiresAt: lapsed ? r.expires_at : null, what: 'offer' as const }
    }),
    ...danglingMembers.map(dangling('member')),
    ...danglingOffers.map(dangling('offer')),
  ]
}

export async function deleteTeamRow(db: Db, problem: Pick<TeamProblem, 'packRowId' | 'userId' | 'what' | 'kind'>): Promise<void> {
  if (problem.what === 'offer') {
    await db.deleteFrom('pack_transfers').where('pack_row_id', '=', problem.packRowId).where('to_user_id', '=', problem.userId).execute()
  } else {
    let query = db.deleteFrom('pack_members').where('pack_row_id', '=', problem.packRowId).where('user_id', '=', problem.userId)
    // A lapsed invitation is removed only while it is still one: accepted meanwhile, it stays.
    if (problem.kind === 'lapsed-invitation') query = query.where('accepted_at', 'is', null)
    await query.execute()
  }
}
