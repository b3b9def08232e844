// Moving a whole site between backends (`packs export <dir>` / `packs import
// <dir>`): every row of every table and every stored file, with a manifest of
// row counts and each file's SHA-256. The export format knows nothing of the
// engine or the store, so SQLite + disk and PostgreSQL + S3 read and write the
// same directory. Ids, hashes and the site secret travel unchanged, so
// passwords, API tokens, sessions and the gate cookie keep working.
import fs from 'node:fs'
import path from 'node:path'
import type { Db } from '../db/index.js'
import { clearImportMarker, writeImportMarker } from './doctor-repository.js'
import type { Database } from '../db/schema.js'
import { nowIso } from '../db/time.js'
import type { FileStore } from '../storage/index.js'
import { BadRequest, Conflict } from '../errors.js'
import { fillMissingShortIds } from '../db/short-ids.js'
import { recountTagUses } from '../packs/tags-repository.js'
import { claimUnclaimedArchives } from '../packs/archive-claims.js'
import { indexMissingPacks } from '../packs/search-service.js'
import { deleteAllSettings, firstTableWithRows, insertRows, selectAllRows, TABLES, TABLES_SINCE_VERSION_2, TABLES_SINCE_VERSION_3, TABLES_SINCE_VERSION_4, TABLES_SINCE_VERSION_5, TABLES_SINCE_VERSION_6, type Table } from './transfer-repository.js'
import { copyToPrivateFile, privateDir, readHashed, readManifestJson, writePrivateFile, type Digest } from './private-files.js'

export const EXPORT_FORMAT = 'packs-site-export'
/**
 * 2: the tables and columns of managing published packs (hidden packs, yanked versions,
 * disabled accounts, token reach, pack id holds, the audit log, download
 * counts). Exports of version 1 still import: they lack those tables (empty
 * here) and columns (their defaults: nothing hidden, yanked or disabled,
 * every token full access, no downloads counted).
 */
/**
 * 3: archive claims and staff's permits (whose bytes each archive is). An
 * export of version 1 or 2 has none: on import each archive is claimed by the
 * pack of the first version that published it, as the migration does.
 *
 * 4: packs' teams (pack_members, invitations among them) and ownership offers
 * (pack_transfers). An older export imports with every pack's team empty: its
 * owner alone, as packs were before teams.
 *
 * 5: downloads per pack and day (pack_daily_downloads), what the search's
 * trending sort adds up. An older export imports with no such history:
 * trending starts from the downloads counted after the move.
 *
 * 6: follows (pack_follows, and packs.followers counting them), notifications, feed tokens, and webhooks with
 * their outbox and delivery log. An older export imports with none: nobody follows anything, and packs have
 * no webhooks until their owners add them.
 *
 * The search index is never exported: an import builds it from the rows.
 */
export const EXPORT_VERSION = 6
/** The export versions this release imports. */
const IMPORTABLE_VERSIONS: readonly number[] = [1, 2, 3, 4, 5, 6]

export interface ExportManifest {
  format: typeof EXPORT_FORMAT
  version: number
  exported_at: string
  /** Rows per table. */
  tables: Record<Table, number>
  /** Stored files by id: the bytes' SHA-256 (hex) and size. */
  files: Record<string, Digest>
}

export interface TransferReport {
  rows: number
  files: number
  bytes: number
}

/** An export's rows, table by table, as its JSON lines hold them (checked against the manifest's counts). */
type ExportRows = { [T in Table]: Database[T][] }

/**
 * Writes the site into `dir` (which must be empty or missing): tables/<table>.jsonl,
 * files/<id>, manifest.json last. The directories are 0700 and the files 0600: an export is a secret.
 */
export async function exportSite(db: Db, store: FileStore, dir: string): Promise<TransferReport> {
  if (fs.existsSync(dir) && fs.readdirSync(dir).length > 0) throw new Conflict(`${dir} is not empty; export into a new directory`)
  privateDir(dir)
  privateDir(path.join(dir, 'tables'))
  privateDir(path.join(dir, 'files'))
  const manifest: ExportManifest = {
    format: EXPORT_FORMAT,
    version: EXPORT_VERSION,
    exported_at: new Date().toISOString(),
    tables: {} as Record<Table, number>,
    files: {},
  }
  let rows = 0
  let bytes = 0
  // One read transaction, so the rows are one consistent picture even while the site is running.
  await db.transaction().execute(async (trx) => {
    for (const table of TABLES) {
      const all = await selectAllRows(trx, table)
      writePrivateFile(path.join(dir, 'tables', `${table}.jsonl`), all.map((row) => JSON.stringify(row)).join('\n') + (all.length ? '\n' : ''))
      manifest.tables[table] = all.length
      rows += all.length
      if (table === 'files') {
        for (const file of all as { id: string; storage_key: string }[]) {
          const copied = await copyToPrivateFile(await store.get(file.storage_key), path.join(dir, 'files', file.id))
          manifest.files[file.id] = copied
          bytes += copied.size
        }
      }
    }
  })
  // Written last: a directory without a manifest is an export that did not finish.
  writePrivateFile(path.join(dir, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n')
  return { rows, files: Object.keys(manifest.files).length, bytes }
}

export function readManifest(dir: string): ExportManifest {
  const manifest = readManifestJson(dir, 'packs export') as ExportManifest
  if (typeof manifest !== 'object' || manifest === null || manifest.format !== EXPORT_FORMAT
    || typeof manifest.files !== 'object' || manifest.files === null || typeof manifest.tables !== 'object' || manifest.tables === null) {
    throw new BadRequest(`${dir} is not a packs export`)
  }
  if (!IMPORTABLE_VERSIONS.includes(manifest.version)) {
    throw new BadRequest(`${dir} is a packs export of version ${String(manifest.version).slice(0, 20)}; this release imports versions ${IMPORTABLE_VERSIONS.join(', ')} (a newer export needs a newer release)`)
  }
  return manifest
}

/** The tables an export of `version` holds: a version-1 export predates version 2's tables. */
function tablesOf(version: number): readonly Table[] {
  const later: readonly Table[] = [
    ...(version < 2 ? TABLES_SINCE_VERSION_2 : []), ...(version < 3 ? TABLES_SINCE_VERSION_3 : []), ...(version < 4 ? TABLES_SINCE_VERSION_4 : []),
    ...(version < 5 ? TABLES_SINCE_VERSION_5 : []), ...(version < 6 ? TABLES_SINCE_VERSION_6 : []),
  ]
  return TABLES.filter((table) => !later.includes(table))
}

function readRows(dir: string, table: Table): Record<string, unknown>[] {
  const file = path.join(dir, 'tables', `${table}.jsonl`)
  if (!fs.existsSync(file)) throw new BadRequest(`${dir} has no tables/${table}.jsonl: the export is incomplete`)
  const lines = fs.readFileSync(file, 'utf8').split('\n').filter((line) => line !== '')
  return lines.map((line, index) => {
    try {
      return JSON.parse(line) as Record<string, unknown>
    } catch {
      throw new BadRequest(`tables/${table}.jsonl line ${index + 1} is not valid JSON: the export is damaged`)
    }
  })
}

/** Every file the rows name must be in the export before anything is written. */
function checkExportFiles(dir: string, manifest: ExportManifest, files: readonly { id: string }[]): void {
  for (const file of files) {
    const expected = manifest.files[file.id]
    if (!expected) throw new BadRequest(`file ${file.id} is not in the manifest`)
    let stats: fs.Stats | undefined
    try {
      stats = fs.statSync(path.join(dir, 'files', file.id))
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
    }
    // A changed file is caught by its SHA-256 on its way in (and what was written is removed again).
    if (!stats?.isFile()) throw new BadRequest(`${dir} lacks files/${file.id} (${expected.size} bytes in the manifest): the export is incomplete, nothing was imported`)
  }
}

/**
 * Every row that names a file (the foreign keys to files.id) must find it
 * among the export's files before anything is written: the engine would
 * refuse the rows only after every file was copied, naming no file.
 */
function checkFileReferences(dir: string, rows: ExportRows): void {
  const files = new Set(rows.files.map((file) => file.id))
  const packs = new Map(rows.packs.map((pack) => [pack.id, `${pack.namespace}:${pack.pack_id}`]))
  const pack = (id: string) => packs.get(id) ?? `pack ${id}`
  const references: [fileId: string | null, user: string][] = [
    ...rows.versions.map((v): [string, string] => [v.file_id, `version ${v.name} of ${pack(v.pack_id)}`]),
    ...rows.packs.map((p): [string | null, string] => [p.thumbnail_file_id, `the thumbnail of ${pack(p.id)}`]),
    ...rows.pack_media.map((m): [string, string] => [m.file_id, `a gallery item of ${pack(m.pack_id)}`]),
    ...rows.uploads.map((u): [string, string] => [u.file_id, `pending upload ${u.id}`]),
  ]
  for (const [fileId, user] of references) {
    if (fileId !== null && !files.has(fileId)) {
      throw new BadRequest(`${dir} lacks file ${fileId}, which ${user} uses: the export is incomplete, nothing was imported`)
    }
  }
}

/** Unfinished writes an interrupted run of this import left for its own keys (each key is a file id of the export). */
async function discardEarlierAttempt(store: FileStore, keys: ReadonlySet<string>): Promise<void> {
  for await (const write of store.listUnfinished()) {
    if (keys.has(write.key)) await store.discardUnfinished(write)
  }
}

/**
 * Loads an export into an empty site (migrated, no users and no files).
 * Every file's bytes are checked against the manifest's SHA-256 on the way
 * into the store; the rows go in one transaction, after the files, so a
 * failure leaves no row naming a file that is not there.
 *
 * Killed midway, it leaves files without rows: a marker in the settings table
 * (written before the first file, gone with the transaction that adds the
 * rows) keeps the server's consistency check from deleting them while it
 * runs, and tells `packs doctor` an import was interrupted. Running it again
 * writes over those files and drops its own unfinished writes;
 * `packs doctor --repair` removes them instead.
 */
export async function importSite(db: Db, store: FileStore, dir: string): Promise<TransferReport> {
  const manifest = readManifest(dir)
  const occupied = await firstTableWithRows(db, ['users', 'files', 'packs'])
  if (occupied) throw new Conflict(`the target site is not empty (${occupied} has rows); import into a new database and store`)
  // A table the export's version did not have is empty here; its rows' missing columns take their defaults.
  const exported = tablesOf(manifest.version)
  const tables = Object.fromEntries(TABLES.map((table) => [table, exported.includes(table) ? readRows(dir, table) : []])) as unknown as ExportRows
  for (const table of exported) {
    if (tables[table].length !== manifest.tables[table]) {
      throw new BadRequest(`${table}.jsonl has ${tables[table].length} rows but the manifest says ${manifest.tables[table]}`)
    }
  }

  const files = tables.files
  checkExportFiles(dir, manifest, files)
  checkFileReferences(dir, tables)

  let bytes = 0
  const written: string[] = []
  await writeImportMarker(db, { started_at: nowIso(), dir: path.resolve(dir) })
  try {
    await discardEarlierAttempt(store, new Set(files.map((file) => file.storage_key)))
    for (const file of files) {
      const expected = manifest.files[file.id]!
      const source = readHashed(path.join(dir, 'files', file.id))
      await store.put(file.storage_key, source.stream)
      written.push(file.storage_key)
      const actual = source.digest()
      if (actual.sha256 !== expected.sha256 || actual.size !== expected.size) {
        throw new BadRequest(`file ${file.id}: SHA-256 ${actual.sha256} (${actual.size} bytes) does not match the manifest's ${expected.sha256} (${expected.size} bytes)`)
      }
      bytes += actual.size
    }
    await db.transaction().execute(async (trx) => {
      // A target that was started once holds its own site secret (and perhaps a generated gate
      // password); the exported site's replace them, so its cookies and passwords keep working.
      await deleteAllSettings(trx)
      for (const table of TABLES) await insertRows(trx, table, tables[table])
      // An export made before short ids (migration 0004) has none: its packs and versions get theirs here.
      await fillMissingShortIds(trx)
      // An export made before archive claims has none: the first pack to publish each archive claims it.
      await claimUnclaimedArchives(trx)
      // Tag counts: the triggers counted every imported pack tag on top of the counts the tag rows carried.
      await recountTagUses(trx)
      // Gone with the deleted settings already, unless the export itself carried one.
      await clearImportMarker(trx)
    })
  } catch (error) {
    // Leave the target as it was: no stored bytes without rows.
    await Promise.all(written.map((key) => store.delete(key).catch(() => {})))
    await clearImportMarker(db).catch(() => {})
    throw error
  }
  // The search index, built from the rows now, so the site is searchable as soon as it starts (the server's
  // sweep would index what is missing too, a little after it starts).
  await indexMissingPacks(db)
  const rows = TABLES.reduce((sum, table) => sum + tables[table].length, 0)
  return { rows, files: written.length, bytes }
}
