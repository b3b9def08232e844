import fs from 'node:fs'
import fsp from 'node:fs/promises'
import path from 'node:path'
import { randomUUID } from 'node:crypto'
import type { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { ConfigError } from '../config.js'
import type { ByteRange, FileStore } from './index.js'

const SAFE_KEY = /^[A-Za-z0-9][A-Za-z0-9._-]*$/

/**
 * Files on the local disk. A put writes to a temporary name in the same
 * directory and renames it into place, so a reader never sees half a file and
 * an aborted upload leaves only a temporary file that is removed at once.
 */
export class LocalFileStore implements FileStore {
  readonly root: string

  constructor(root: string) {
    this.root = path.resolve(root)
    try {
      fs.mkdirSync(this.root, { recursive: true })
      fs.accessSync(this.root, fs.constants.W_OK)
    } catch (error) {
      throw new ConfigError(`STORAGE_URL: ${this.root} is not a writable directory (${(error as NodeJS.ErrnoException).code ?? 'error'})`)
    }
  }

  /** Two-character fan-out keeps directories small on sites with many files. */
  private pathOf(key: string): string {
    if (!SAFE_KEY.test(key)) throw new Error(`invalid storage key: ${key}`)
    return path.join(this.root, key.slice(0, 2), key)
  }

  async put(key: string, body: Readable): Promise<void> {
    const target = this.pathOf(key)
    await fsp.mkdir(path.dirname(target), { recursive: true })
    const temporary = `${target}.${randomUUID()}.partial`
    try {
      await pipeline(body, fs.createWriteStream(temporary, { flags: 'wx' }))
      await fsp.rename(temporary, target)
    } catch (error) {
      await fsp.rm(temporary, { force: true })
      throw error
    }
  }

  async get(key: string, range?: ByteRange): Promise<Readable> {
    const file = this.pathOf(key)
    // Open first so a missing file rejects here rather than as a stream error mid-response.
    const handle = await fsp.open(file, 'r')
    return handle.createReadStream(range ? { start: range.start, end: range.end } : {})
  }

  async delete(key: string): Promise<void> {
    await fsp.rm(this.pathOf(key), { force: true })
  }

  async close(): Promise<void> {}
}
