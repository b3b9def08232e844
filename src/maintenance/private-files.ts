// The directories and files `packs export` and `packs backup` write
// (src/maintenance/transfer.ts, backup.ts), the SHA-256 of every file they
// copy, write or read back, and the manifest.json they read back. Exports and backups hold the site secret (it
// signs sessions and gate cookies), the gate password's hash and every
// password and token hash: only their owner may read them, whatever the
// umask says. Also the start-up's tightening of a site's own files made
// before they were private (makeSiteFilesPrivate).
import { createHash } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { Transform, pipeline as pipe, type Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { isPrivate, openPrivateFile, privateDir, tightenMode } from '../config/file-modes.js'
import type { Config } from '../config/index.js'
import { BadRequest } from '../errors.js'

// Backups and exports make their directories and files as the site's own are made (src/config/file-modes.ts).
export { openPrivateFile, privateDir }

/** A file's bytes: their SHA-256 (hex) and how many there are. */
export interface Digest {
  sha256: string
  size: number
}

/** Writes `text` into a new private file; `fsync`: on the disk before this returns. */
export function writePrivateFile(file: string, text: string, options: { fsync?: boolean } = {}): void {
  const fd = openPrivateFile(file)
  try {
    fs.writeFileSync(fd, text)
    if (options.fsync) fs.fsyncSync(fd)
  } finally {
    fs.closeSync(fd)
  }
}

/** Passes the bytes through unchanged, hashing and counting them on the way. */
function hashing(): { transform: Transform; digest: () => Digest } {
  const hash = createHash('sha256')
  let size = 0
  const transform = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk)
      size += chunk.length
      done(null, chunk)
    },
  })
  return { transform, digest: () => ({ sha256: hash.digest('hex'), size }) }
}

/** Copies `source` into a new private file, and gives what it wrote. */
export async function copyToPrivateFile(source: Readable, file: string): Promise<Digest> {
  const { transform, digest } = hashing()
  const fd = openPrivateFile(file)
  await pipeline(source, transform, fs.createWriteStream('', { fd }))
  return digest()
}

/** The SHA-256 and size of a file on disk. */
export async function hashFile(file: string): Promise<Digest> {
  const { transform, digest } = hashing()
  await pipeline(fs.createReadStream(file), transform, async function* (source) {
    for await (const chunk of source) void chunk
  })
  return digest()
}

/**
 * A file's bytes as a stream, hashed as they are read: `digest()` is meant
 * for once the stream has been consumed (a store's put has returned).
 */
export function readHashed(file: string): { stream: Readable; digest: () => Digest } {
  const { transform, digest } = hashing()
  // stream.pipeline, not .pipe: a read error must fail the consumer, not escape as an uncaught exception.
  const stream: Readable = pipe(fs.createReadStream(file), transform, () => {})
  return { stream, digest }
}

/**
 * `dir`'s manifest.json, parsed but not checked (its reader checks the
 * fields it needs). `what`: what a finished one is, for the refusal.
 */
export function readManifestJson(dir: string, what: 'packs export' | 'packs backup'): unknown {
  const file = path.join(dir, 'manifest.json')
  if (!fs.existsSync(file)) throw new BadRequest(`${dir} has no manifest.json: not a finished ${what}`)
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'))
  } catch (error) {
    throw new BadRequest(`${file} cannot be read as JSON (${(error as Error).message.split('\n')[0]})`)
  }
}

/** Paths named in the warning about those that could not be made private (the rest are counted). */
const NAMED_FAILURES = 3

/** What makeSiteFilesPrivate changed, and what it could not. */
export interface SiteFilesTightened {
  /** Paths whose group and other permissions were taken away, by what they belong to. */
  dataDir: number
  database: number
  files: number
  total: number
  /** Paths that could not be changed (another owner's, say): the first few, each with why. */
  failed: string[]
  failedCount: number
}

/**
 * Takes other users' access away from a site's files made before they were
 * private (directories were 0755 and files 0644 under the usual umask): the
 * data directory itself, the SQLite database and its journals (-wal, -shm,
 * -journal) and the local store's directory and everything under it. Nothing
 * else outside the data directory is touched: not the parents of a database
 * or store configured elsewhere, and nothing a symbolic link under the store
 * points at. Meant for start-up, before the database and the store are
 * opened: it reads every entry under the store once (an lstat each; only a
 * path that needs it is changed), on the event loop, as nothing is served yet.
 */
export function makeSiteFilesPrivate(config: Pick<Config, 'dataDir' | 'databaseUrl' | 'storageUrl'>): SiteFilesTightened {
  const result: SiteFilesTightened = { dataDir: 0, database: 0, files: 0, total: 0, failed: [], failedCount: 0 }
  const fail = (file: string, error: unknown) => {
    result.failedCount++
    if (result.failed.length < NAMED_FAILURES) result.failed.push(`${file} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`)
  }
  const tighten = (file: string, part: 'dataDir' | 'database' | 'files', stats?: fs.Stats) => {
    try {
      if (!tightenMode(file, stats)) return
      result[part]++
      result.total++
    } catch (error) {
      fail(file, error)
    }
  }

  // The real path of a configured one (a link the operator made is followed); undefined when there is none.
  const existing = (file: string): string | undefined => {
    try {
      return fs.realpathSync(file)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') fail(file, error)
      return undefined
    }
  }

  const dataDir = existing(config.dataDir)
  if (dataDir !== undefined) tighten(dataDir, 'dataDir')

  const sqliteFile = config.databaseUrl.startsWith('sqlite:') ? config.databaseUrl.slice('sqlite:'.length) : undefined
  if (sqliteFile !== undefined && sqliteFile !== ':memory:') {
    // SQLite follows a link to the database and keeps its journals beside the file it points at.
    const database = existing(path.resolve(sqliteFile))
    if (database !== undefined) for (const suffix of ['', '-wal', '-shm', '-journal']) tighten(`${database}${suffix}`, 'database')
  }

  const storeRoot = config.storageUrl.startsWith('file:') ? existing(path.resolve(config.storageUrl.slice('file:'.length))) : undefined
  // Nothing under a private directory can be reached by other users, whatever its own modes, and the
  // directory is made private only once everything under it was walked (below): a store whose directory is
  // private was made by this release or tightened at an earlier start, and a large one is not read again at
  // every start (a million files is a million lstat calls: seconds when cached, minutes from a cold disk).
  const rootStats = storeRoot === undefined ? undefined : fs.lstatSync(storeRoot, { throwIfNoEntry: false })
  if (storeRoot !== undefined && rootStats?.isDirectory() && !isPrivate(rootStats)) {
    // Depth first: memory holds the names of one directory and the directories still to read, whatever the store's size.
    const dirs = [storeRoot]
    while (dirs.length > 0) {
      const dir = dirs.pop()!
      let names: string[]
      try {
        names = fs.readdirSync(dir)
      } catch (error) {
        // Gone since it was listed is nothing to do; unreadable (another owner's) is a path left as it was.
        const code = (error as NodeJS.ErrnoException).code
        if (code !== 'ENOENT' && code !== 'ENOTDIR') fail(dir, error)
        continue
      }
      for (const name of names) {
        const file = path.join(dir, name)
        let stats: fs.Stats | undefined
        try {
          stats = fs.lstatSync(file, { throwIfNoEntry: false })
        } catch (error) {
          fail(file, error)
        }
        if (stats === undefined) continue
        tighten(file, 'files', stats)
        // Never through a symbolic link: what it points at is not the store's.
        if (stats.isDirectory()) dirs.push(file)
      }
    }
    // Last: a start interrupted before this walks the store again at the next one.
    tighten(storeRoot, 'files', rootStats)
  }
  return result
}

/**
 * The start-up's line about what makeSiteFilesPrivate did: `info` when it
 * changed anything (null when nothing needed it), `warning` when some paths
 * could not be changed.
 */
export function describeSiteFilesTightened(result: SiteFilesTightened, config: Pick<Config, 'dataDir' | 'databaseUrl' | 'storageUrl'>): {
  info: { fields: Record<string, number>; message: string } | null
  warning: string | null
} {
  const parts: string[] = []
  if (result.dataDir > 0) parts.push(`the data directory ${config.dataDir}`)
  if (result.database > 0) parts.push(`${result.database} of the SQLite database ${config.databaseUrl.slice('sqlite:'.length)} and its journals`)
  if (result.files > 0) parts.push(`${result.files} in the stored files ${config.storageUrl.slice('file:'.length)}`)
  const info = result.total === 0 ? null : {
    fields: { tightened: result.total, dataDir: result.dataDir, database: result.database, files: result.files },
    message: `packs: made ${result.total} path${result.total === 1 ? '' : 's'} private that other users of this machine could read `
      + `(now 0700 directories, 0600 files): ${parts.join(', ')}`,
  }
  const more = result.failedCount > result.failed.length ? ` and ${result.failedCount - result.failed.length} more` : ''
  const warning = result.failedCount === 0 ? null
    : `packs: could not make ${result.failedCount} path${result.failedCount === 1 ? '' : 's'} private, so other users of this machine may read `
      + `${result.failedCount === 1 ? 'it' : 'them'}: ${result.failed.join(', ')}${more}; give them to the user the server runs as, or make them 0700 (directories) and 0600 (files)`
  return { info, warning }
}
