// The directories and files `packs export` and `packs backup` write
// (src/maintenance/transfer.ts, backup.ts), the SHA-256 of every file they
// copy, write or read back, and the manifest.json they read back. Exports and backups hold the site secret (it
// signs sessions and gate cookies), the gate password's hash and every
// password and token hash: only their owner may read them, whatever the
// umask says.
import { createHash } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { Transform, pipeline as pipe, type Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { BadRequest } from '../errors.js'

const PRIVATE_DIR = 0o700
const PRIVATE_FILE = 0o600

/** A file's bytes: their SHA-256 (hex) and how many there are. */
export interface Digest {
  sha256: string
  size: number
}

/** Creates (or takes, when it exists) a directory only its owner can enter. */
export function privateDir(dir: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR })
  // mkdir's mode goes through the umask (and leaves an existing directory as it is).
  fs.chmodSync(dir, PRIVATE_DIR)
}

/** A new file (never an existing one) readable by its owner only, from its creation on. */
export function openPrivateFile(file: string): number {
  const fd = fs.openSync(file, 'wx', PRIVATE_FILE)
  fs.fchmodSync(fd, PRIVATE_FILE)
  return fd
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
