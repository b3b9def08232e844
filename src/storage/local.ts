import fs from 'node:fs'
import fsp from 'node:fs/promises'
import path from 'node:path'
import { randomUUID } from 'node:crypto'
import { once } from 'node:events'
import type { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { ConfigError } from '../config/index.js'
import { PRIVATE_DIR, PRIVATE_FILE, SHARED_STORE_DIR, SHARED_STORE_FILE } from '../config/file-modes.js'
import { StorageUnavailable } from '../errors.js'
import type { ByteRange, FileStore, PositionalReader, StoredObject, UnfinishedWrite } from './types.js'

/**
 * Bytes per read of a stored file being served (Node's default is 64 KiB). Measured on a 100 MiB download
 * with 4 connections: 64 KiB 0.9 GB/s, 256 KiB 1.3, 512 KiB 1.7 (steady), 1 MiB 1.75 for the first seconds
 * and then 0.78, once the garbage collector starts chasing the 1 MiB buffers.
 */
const READ_CHUNK = 512 * 1024

const SAFE_KEY = /^[A-Za-z0-9][A-Za-z0-9._-]*$/
const PARTIAL_SUFFIX = '.partial'
/**
 * How much put() lets wait for the disk. Node's default (16 KiB) is less than
 * one read from the socket (64 KiB), so every chunk waited for its write to
 * finish before the next was read and hashed: the disk and the main thread
 * took turns. With room for several chunks they work at once. A 400 MiB
 * upload with curl, three each way, twice, in one sitting: 327-346 MiB/s with
 * 16 KiB, 345-400 with 512 KiB (the Meter's buffer in src/uploads/ingest.ts
 * raised the same way). 256 KiB and 1 MiB did no better. Resident memory grew
 * by 31.5-32.5 MiB in every case: these buffers are not what it is made of.
 */
const WRITE_BUFFER = 512 * 1024

/** What put() writes before the rename: `<key>.<random UUID>.partial`. */
const PARTIAL = /^([A-Za-z0-9][A-Za-z0-9._-]*)\.[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.partial$/

async function readdirOrEmpty(dir: string): Promise<string[]> {
  try {
    return await fsp.readdir(dir)
  } catch (error) {
    // A fan-out directory removed by hand while we list is simply empty.
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw error
  }
}

/** A regular file's stats, or undefined when it is gone (deleted between readdir and stat) or not a file. */
async function statFile(file: string): Promise<fs.Stats | undefined> {
  try {
    const stats = await fsp.lstat(file)
    return stats.isFile() ? stats : undefined
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
}

export interface LocalStoreOptions {
  /**
   * PACKS_ACCEL_REDIRECT: nginx, running as another user, sends the stored files, so each new one and its
   * fan-out directory is given the group of the store's directory, which may read the file and pass through
   * the directory (src/config/file-modes.ts). The server's user must belong to that group.
   */
  groupReadable?: boolean
}

/**
 * Files on the local disk. A put writes to a temporary name in the same
 * directory and renames it into place, so a reader never sees half a file and
 * an aborted upload leaves only a temporary file that is removed at once.
 */
export class LocalFileStore implements FileStore {
  readonly root: string
  /** The store directory's group, which new files are given when nginx reads them; null: files stay the owner's alone. */
  private readonly sharedGroup: number | null

  constructor(root: string, options: LocalStoreOptions = {}) {
    this.root = path.resolve(root)
    try {
      // Stored files are the site's, whatever the umask: the directory 0700 (missing parents too), each file
      // and its temporary copy 0600 (src/config/file-modes.ts). A store made before is tightened by server
      // start-up (src/maintenance/private-files.ts), which makes its directory private only once it has
      // walked everything under it: that is not done here.
      fs.mkdirSync(this.root, { recursive: true, mode: PRIVATE_DIR })
      fs.accessSync(this.root, fs.constants.W_OK)
    } catch (error) {
      throw new ConfigError(`STORAGE_URL: ${this.root} is not a writable directory (${(error as NodeJS.ErrnoException).code ?? 'error'})`)
    }
    this.sharedGroup = options.groupReadable ? LocalFileStore.groupOf(this.root) : null
  }

  /** The directory's group, which this process must be able to give files to (a member, or root). */
  private static groupOf(root: string): number {
    const gid = fs.statSync(root).gid
    const member = process.getuid?.() === 0 || process.getgid?.() === gid || (process.getgroups?.() ?? []).includes(gid)
    if (!member) {
      throw new ConfigError(`STORAGE_URL: with PACKS_ACCEL_REDIRECT the stored files are given the group of ${root} (gid ${gid}), for nginx to read them, `
        + 'but the server\'s user is not a member of it: add it to that group (docs/deploy.md, One machine behind nginx)')
    }
    return gid
  }

  /** Gives a new directory or file of the store to the store's group when nginx sends the files; the umask cannot grant it. */
  private async share(file: string, mode: number): Promise<void> {
    if (this.sharedGroup === null) return
    await fsp.chown(file, -1, this.sharedGroup)
    await fsp.chmod(file, mode)
  }

  /** Two-character fan-out keeps directories small on sites with many files. */
  private pathOf(key: string): string {
    return path.join(this.root, LocalFileStore.relativePathOf(key))
  }

  /** `<fan-out>/<key>`, with a forward slash: how nginx's location over the root names the file too. */
  private static relativePathOf(key: string): string {
    if (!SAFE_KEY.test(key)) throw new Error(`invalid storage key: ${key}`)
    return `${key.slice(0, 2)}/${key}`
  }

  async locate(key: string): Promise<string> {
    const relative = LocalFileStore.relativePathOf(key)
    let stats: fs.Stats | undefined
    try {
      // Synchronous, as SQLite's queries here are: a stat reads the directory entry and inode that nginx's
      // open needs right after, and went through the thread pool at 25 times its cost (100 µs of CPU a
      // download against 4, measured on the 2-core VM), the largest part of what Packs spent per download.
      stats = fs.statSync(path.join(this.root, relative), { throwIfNoEntry: false })
    } catch (error) {
      throw new StorageUnavailable(error)
    }
    // A missing file is ENOENT, as for get (the file route's 404); anything else was the disk.
    if (!stats?.isFile()) throw Object.assign(new Error(`no stored file for ${key}`), { code: 'ENOENT' })
    return relative
  }

  async put(key: string, body: Readable): Promise<void> {
    const target = this.pathOf(key)
    const temporary = `${target}.${randomUUID()}.partial`
    // Whichever side fails first is the cause (pipeline then fails the other
    // with it): the source's own error (over the limit, client gone) goes to
    // the caller as it is; the disk failing is StorageUnavailable.
    let failedFirst: 'source' | 'disk' | undefined
    const onSourceError = () => { failedFirst ??= 'source' }
    const onSourceClose = () => { if (!body.readableEnded) failedFirst ??= 'source' }
    body.once('error', onSourceError)
    body.once('close', onSourceClose)
    let sink: fs.WriteStream | undefined
    try {
      // The umask can only take bits away from these modes, never add any.
      await fsp.mkdir(path.dirname(target), { recursive: true, mode: PRIVATE_DIR })
      await this.share(path.dirname(target), SHARED_STORE_DIR)
      sink = fs.createWriteStream(temporary, { flags: 'wx', mode: PRIVATE_FILE, highWaterMark: WRITE_BUFFER })
      sink.once('error', () => { failedFirst ??= 'disk' })
      await pipeline(body, sink)
      // Before the rename, so the file appears under its key already readable by nginx.
      await this.share(temporary, SHARED_STORE_FILE)
      await fsp.rename(temporary, target)
    } catch (error) {
      // The write stream opens its file asynchronously: one destroyed before its open finished still
      // creates the file, after this point, unless we wait for it to close first.
      if (sink && !sink.closed) await once(sink, 'close').catch(() => {})
      // A failed removal must not hide why we got here; a stray .partial is the consistency check's to remove.
      await fsp.rm(temporary, { force: true }).catch(() => {})
      if (failedFirst === 'source') throw error
      throw new StorageUnavailable(error)
    } finally {
      body.off('error', onSourceError)
      body.off('close', onSourceClose)
    }
  }

  /** Opens the key's file for reading; a missing file is ENOENT (the file route's 404), anything else the disk. */
  private async openHandle(key: string): Promise<fsp.FileHandle> {
    // Outside the try: a key that could escape the store is the caller's error, not the disk failing.
    const file = this.pathOf(key)
    try {
      return await fsp.open(file, 'r')
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw error
      throw new StorageUnavailable(error)
    }
  }

  async openReader(key: string): Promise<PositionalReader> {
    const handle = await this.openHandle(key)
    return {
      async read(buffer, length, position) {
        try {
          return (await handle.read(buffer, 0, length, position)).bytesRead
        } catch (error) {
          throw new StorageUnavailable(error)
        }
      },
      close: () => handle.close(),
    }
  }

  async get(key: string, range?: ByteRange): Promise<Readable> {
    // Open first so a missing file rejects here rather than as a stream error mid-response.
    const handle = await this.openHandle(key)
    // Large reads: a 100 MiB download takes 200 reads and socket writes, not 1,600. Memory stays bounded by
    // backpressure: about one chunk waits per download. Every chunk is a new buffer: reusing them once the
    // socket's writableLength said it held none sent wrong bytes to a client on Node 26 (test/http/file-serving).
    return handle.createReadStream({ highWaterMark: READ_CHUNK, ...(range ? { start: range.start, end: range.end } : {}) })
  }

  async delete(key: string): Promise<void> {
    const file = this.pathOf(key)
    try {
      await fsp.rm(file, { force: true })
    } catch (error) {
      throw new StorageUnavailable(error)
    }
  }

  async *list(options: { after?: string } = {}): AsyncIterable<StoredObject> {
    const after = options.after ?? ''
    // Every key in a fan-out directory starts with the directory's name, so
    // directories in order, each one's keys in order, is all keys in order.
    for (const dir of await this.fanOutDirs()) {
      if (dir < after.slice(0, dir.length)) continue
      for (const name of (await readdirOrEmpty(path.join(this.root, dir))).sort()) {
        if (name <= after || !SAFE_KEY.test(name) || name.endsWith(PARTIAL_SUFFIX) || name.slice(0, 2) !== dir) continue
        const stats = await statFile(path.join(this.root, dir, name))
        if (stats) yield { key: name, size: stats.size, modifiedAt: stats.mtime }
      }
    }
  }

  async *listUnfinished(): AsyncIterable<UnfinishedWrite> {
    for (const dir of await this.fanOutDirs()) {
      for (const name of await readdirOrEmpty(path.join(this.root, dir))) {
        const key = PARTIAL.exec(name)?.[1]
        if (key === undefined || name.slice(0, 2) !== dir) continue
        const stats = await statFile(path.join(this.root, dir, name))
        if (stats) yield { key, id: name, size: stats.size, modifiedAt: stats.mtime }
      }
    }
  }

  async discardUnfinished(write: UnfinishedWrite): Promise<void> {
    if (!PARTIAL.test(write.id)) throw new Error(`not an unfinished write: ${write.id}`)
    await fsp.rm(this.pathOf(write.id), { force: true })
  }

  /** The two-character directories under the root, in order. */
  private async fanOutDirs(): Promise<string[]> {
    const entries = await fsp.readdir(this.root, { withFileTypes: true })
    return entries.filter((entry) => entry.isDirectory() && SAFE_KEY.test(entry.name) && entry.name.length <= 2).map((entry) => entry.name).sort()
  }

  async close(): Promise<void> {}
}
