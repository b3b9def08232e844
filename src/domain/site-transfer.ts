// Moving a whole site between backends (`packs export <dir>` / `packs import
// <dir>`): every row of every table and every stored file, with a manifest of
// row counts and each file's SHA-256. The export format knows nothing of the
// engine or the store, so SQLite + disk and PostgreSQL + S3 read and write the
// same directory. Ids, hashes and the site secret travel unchanged, so
// passwords, API tokens, sessions and the gate cookie keep working.
import { createHash } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { Transform, type Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import type { Db } from '../db/index.js'
import type { Database } from '../db/schema.js'
import type { FileStore } from '../storage/index.js'
import { BadRequest, Conflict } from './errors.js'

export const EXPORT_FORMAT = 'packs-site-export'
export const EXPORT_VERSION = 1

/** Parents before children, so rows can be inserted in this order with foreign keys on. */
export const TABLES = [
  'users', 'api_tokens', 'sessions', 'settings', 'categories', 'tags', 'files',
  'drafts', 'uploads', 'packs', 'pack_tags', 'pack_media', 'versions',
] as const satisfies readonly (keyof Database)[]

type Table = (typeof TABLES)[number]

export interface ExportManifest {
  format: typeof EXPORT_FORMAT
  version: number
  exported_at: string
  /** Rows per table. */
  tables: Record<Table, number>
  /** Stored files by id: the bytes' SHA-256 (hex) and size. */
  files: Record<string, { sha256: string; size: number }>
}

export interface TransferReport {
  rows: number
  files: number
  bytes: number
}

const INSERT_BATCH = 200

function hashing(hash: ReturnType<typeof createHash>, counter: { bytes: number }): Transform {
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk)
      counter.bytes += chunk.length
      done(null, chunk)
    },
  })
}

/** Writes the site into `dir` (which must be empty or missing): tables/<table>.jsonl, files/<id>, manifest.json last. */
export async function exportSite(db: Db, store: FileStore, dir: string): Promise<TransferReport> {
  if (fs.existsSync(dir) && fs.readdirSync(dir).length > 0) throw new Conflict(`${dir} is not empty; export into a new directory`)
  fs.mkdirSync(path.join(dir, 'tables'), { recursive: true })
  fs.mkdirSync(path.join(dir, 'files'), { recursive: true })
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
      const all = await trx.selectFrom(table).selectAll().execute()
      fs.writeFileSync(path.join(dir, 'tables', `${table}.jsonl`), all.map((row) => JSON.stringify(row)).join('\n') + (all.length ? '\n' : ''))
      manifest.tables[table] = all.length
      rows += all.length
      if (table === 'files') {
        for (const file of all as { id: string; storage_key: string }[]) {
          const hash = createHash('sha256')
          const counter = { bytes: 0 }
          await pipeline(await store.get(file.storage_key), hashing(hash, counter), fs.createWriteStream(path.join(dir, 'files', file.id)))
          manifest.files[file.id] = { sha256: hash.digest('hex'), size: counter.bytes }
          bytes += counter.bytes
        }
      }
    }
  })
  // Written last: a directory without a manifest is an export that did not finish.
  fs.writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n')
  return { rows, files: Object.keys(manifest.files).length, bytes }
}

export function readManifest(dir: string): ExportManifest {
  const file = path.join(dir, 'manifest.json')
  if (!fs.existsSync(file)) throw new BadRequest(`${dir} has no manifest.json: not a finished packs export`)
  const manifest = JSON.parse(fs.readFileSync(file, 'utf8')) as ExportManifest
  if (manifest.format !== EXPORT_FORMAT || manifest.version !== EXPORT_VERSION) {
    throw new BadRequest(`${dir} is not a packs export of version ${EXPORT_VERSION}`)
  }
  return manifest
}

function readRows(dir: string, table: Table): Record<string, unknown>[] {
  const text = fs.readFileSync(path.join(dir, 'tables', `${table}.jsonl`), 'utf8')
  return text.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as Record<string, unknown>)
}

/**
 * Loads an export into an empty site (migrated, no users and no files).
 * Every file's bytes are checked against the manifest's SHA-256 on the way
 * into the store; the rows go in one transaction, after the files, so a
 * failure leaves no row naming a file that is not there.
 */
export async function importSite(db: Db, store: FileStore, dir: string): Promise<TransferReport> {
  const manifest = readManifest(dir)
  for (const table of ['users', 'files', 'packs'] as const) {
    const row = await db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()
    if (Number(row.n) > 0) throw new Conflict(`the target site is not empty (${table} has rows); import into a new database and store`)
  }
  const tables = Object.fromEntries(TABLES.map((table) => [table, readRows(dir, table)])) as Record<Table, Record<string, unknown>[]>
  for (const table of TABLES) {
    if (tables[table].length !== manifest.tables[table]) {
      throw new BadRequest(`${table}.jsonl has ${tables[table].length} rows but the manifest says ${manifest.tables[table]}`)
    }
  }

  let bytes = 0
  const written: string[] = []
  try {
    for (const file of tables.files as { id: string; storage_key: string }[]) {
      const expected = manifest.files[file.id]
      if (!expected) throw new BadRequest(`file ${file.id} is not in the manifest`)
      const hash = createHash('sha256')
      const counter = { bytes: 0 }
      const source: Readable = fs.createReadStream(path.join(dir, 'files', file.id)).pipe(hashing(hash, counter))
      await store.put(file.storage_key, source)
      written.push(file.storage_key)
      const actual = hash.digest('hex')
      if (actual !== expected.sha256 || counter.bytes !== expected.size) {
        throw new BadRequest(`file ${file.id}: SHA-256 ${actual} (${counter.bytes} bytes) does not match the manifest's ${expected.sha256} (${expected.size} bytes)`)
      }
      bytes += counter.bytes
    }
    await db.transaction().execute(async (trx) => {
      // A target that was started once holds its own site secret (and perhaps a generated gate
      // password); the exported site's replace them, so its cookies and passwords keep working.
      await trx.deleteFrom('settings').execute()
      for (const table of TABLES) {
        const rows = tables[table]
        for (let i = 0; i < rows.length; i += INSERT_BATCH) {
          // Rows come from our own export of the same schema version; the engine checks every constraint.
          await trx.insertInto(table).values(rows.slice(i, i + INSERT_BATCH) as never).execute()
        }
      }
    })
  } catch (error) {
    // Leave the target as it was: no stored bytes without rows.
    await Promise.all(written.map((key) => store.delete(key).catch(() => {})))
    throw error
  }
  const rows = TABLES.reduce((sum, table) => sum + tables[table].length, 0)
  return { rows, files: written.length, bytes }
}
