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
import { PRIVATE_DIR, isPrivate, isSharedWithGroup, openPrivateFile, privateDir, shareWithGroup, tightenMode } from '../config/file-modes.js'
import type { Config, FileDelivery } from '../config/index.js'
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

/** What makeSiteFilesPrivate reads of the configuration; `fileDelivery` only for PACKS_ACCEL_REDIRECT. */
export type SiteFilesConfig = Pick<Config, 'dataDir' | 'databaseUrl' | 'storageUrl'> & { fileDelivery?: Pick<FileDelivery, 'accelRedirect'> }

/** With PACKS_ACCEL_REDIRECT on a local store, nginx sends its files and so reads them through their group. */
function storeSharedWithNginx(config: SiteFilesConfig): boolean {
  return config.fileDelivery?.accelRedirect != null && config.storageUrl.startsWith('file:')
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
 *
 * With PACKS_ACCEL_REDIRECT nginx sends the stored files: everything under the
 * store is given the store directory's group instead, which may pass through
 * the directories (0710) and read the files (0640), and the directories above
 * the store inside the data directory let that group pass. The store is made
 * here if it is missing, so nginx reaches it from the first start. Switched
 * off again, the store is made private again.
 */
export function makeSiteFilesPrivate(config: SiteFilesConfig): SiteFilesTightened {
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

  const shared = storeSharedWithNginx(config)
  const storeDir = config.storageUrl.startsWith('file:') ? path.resolve(config.storageUrl.slice('file:'.length)) : undefined
  if (shared && storeDir !== undefined) {
    try {
      fs.mkdirSync(storeDir, { recursive: true, mode: PRIVATE_DIR })
    } catch (error) {
      fail(storeDir, error)
    }
  }

  const dataDir = existing(config.dataDir)
  const storeRoot = storeDir === undefined ? undefined : existing(storeDir)
  // A store inside the data directory is reached through it: nginx passes through the data directory and
  // whatever lies between it and the store (their group may pass, not list; the files in them stay 0600).
  const relative = shared && dataDir !== undefined && storeRoot !== undefined ? path.relative(dataDir, storeRoot) : ''
  const storeInside = relative !== '' && !relative.startsWith('..') && !path.isAbsolute(relative)
  const between = storeInside ? path.dirname(relative).split(path.sep).filter((part) => part !== '.') : []
  const letGroupPass = (dir: string, part: 'dataDir' | 'files') => {
    try {
      const stats = fs.lstatSync(dir)
      if (!shareWithGroup(dir, stats.gid, stats)) return
      result[part]++
      result.total++
    } catch (error) {
      fail(dir, error)
    }
  }
  if (dataDir !== undefined) {
    if (storeInside) letGroupPass(dataDir, 'dataDir')
    else tighten(dataDir, 'dataDir')
  }
  between.forEach((_, i) => letGroupPass(path.join(dataDir!, ...between.slice(0, i + 1)), 'files'))

  const sqliteFile = config.databaseUrl.startsWith('sqlite:') ? config.databaseUrl.slice('sqlite:'.length) : undefined
  if (sqliteFile !== undefined && sqliteFile !== ':memory:') {
    // SQLite follows a link to the database and keeps its journals beside the file it points at.
    const database = existing(path.resolve(sqliteFile))
    if (database !== undefined) for (const suffix of ['', '-wal', '-shm', '-journal']) tighten(`${database}${suffix}`, 'database')
  }

  // Nothing under a private directory can be reached by other users, whatever its own modes, and the
  // directory is made private only once everything under it was walked (below): a store whose directory is
  // private was made by this release or tightened at an earlier start, and a large one is not read again at
  // every start (a million files is a million lstat calls: seconds when cached, minutes from a cold disk).
  const rootStats = storeRoot === undefined ? undefined : fs.lstatSync(storeRoot, { throwIfNoEntry: false })
  // Shared with nginx, everything goes to the store directory's group; its directory, shared last, marks a store walked.
  const group = rootStats?.gid ?? -1
  const settle = (file: string, stats?: fs.Stats) => {
    if (!shared) return tighten(file, 'files', stats)
    try {
      if (!shareWithGroup(file, group, stats)) return
      result.files++
      result.total++
    } catch (error) {
      fail(file, error)
    }
  }
  const settled = (stats: fs.Stats) => (shared ? isSharedWithGroup(stats, group) : isPrivate(stats))
  if (storeRoot !== undefined && rootStats?.isDirectory() && !settled(rootStats)) {
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
        settle(file, stats)
        // Never through a symbolic link: what it points at is not the store's.
        if (stats.isDirectory()) dirs.push(file)
      }
    }
    // Last: a start interrupted before this walks the store again at the next one.
    settle(storeRoot, rootStats)
  }
  return result
}

/**
 * The start-up's line about what makeSiteFilesPrivate did: `info` when it
 * changed anything (null when nothing needed it), `warning` when some paths
 * could not be changed.
 */
export function describeSiteFilesTightened(result: SiteFilesTightened, config: SiteFilesConfig): {
  info: { fields: Record<string, number>; message: string } | null
  warning: string | null
} {
  const parts: string[] = []
  if (result.dataDir > 0) parts.push(`the data directory ${config.dataDir}`)
  if (result.database > 0) parts.push(`${result.database} of the SQLite database ${config.databaseUrl.slice('sqlite:'.length)} and its journals`)
  if (result.files > 0) parts.push(`${result.files} in the stored files ${config.storageUrl.slice('file:'.length)}`)
  const info = result.total === 0 ? null : {
    fields: { tightened: result.total, dataDir: result.dataDir, database: result.database, files: result.files },
    message: storeSharedWithNginx(config)
      ? `packs: set ${result.total} path${result.total === 1 ? '' : 's'} as PACKS_ACCEL_REDIRECT needs them (nginx sends the stored files): `
        + `the store's group may pass through its directories (0710) and read its files (0640), and nothing else of the site `
        + `(0700 directories, 0600 files, the data directory 0710 when the store is inside it): ${parts.join(', ')}`
      : `packs: made ${result.total} path${result.total === 1 ? '' : 's'} private that other users of this machine could read `
        + `(now 0700 directories, 0600 files): ${parts.join(', ')}`,
  }
  const more = result.failedCount > result.failed.length ? ` and ${result.failedCount - result.failed.length} more` : ''
  const warning = result.failedCount === 0 ? null
    : `packs: could not make ${result.failedCount} path${result.failedCount === 1 ? '' : 's'} private, so other users of this machine may read `
      + `${result.failedCount === 1 ? 'it' : 'them'}: ${result.failed.join(', ')}${more}; give them to the user the server runs as, or make them 0700 (directories) and 0600 (files)`
  return { info, warning }
}
