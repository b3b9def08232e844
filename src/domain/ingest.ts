// Taking in one uploaded file: stream it into storage while counting, hashing
// and keeping its first bytes; then decide its type from those bytes. Whatever
// goes wrong (over the size limit, client gone, wrong type, unreadable ZIP),
// nothing is left in storage.
import { createHash, randomUUID } from 'node:crypto'
import { Transform, pipeline, type Readable, type TransformCallback } from 'node:stream'
import type { UploadKind } from '../config.js'
import type { FileStore } from '../storage/index.js'
import { inspectArchive } from './archives.js'
import { InvalidUpload, PayloadTooLarge } from './errors.js'
import { ALLOWED_TYPES, SNIFF_BYTES, ZIP_TYPE, describeAllowed, sniffType } from './filetypes.js'
import { sanitizeFilename } from './filenames.js'

export interface IngestedFile {
  /** The file's id, also its storage key. */
  id: string
  filename: string
  contentType: string
  size: number
  sha256: string
  /** For version archives: pack_format from pack.mcmeta, else null. */
  packFormat: number | null
}

export interface IngestOptions {
  kind: UploadKind
  /** Bytes allowed for this kind; one more is a 413. */
  maxBytes: number
  /** The client's file name, cleaned before it is kept. */
  clientFilename: string | undefined
}

/**
 * Streams `body` into `store`. The caller records the returned file in the
 * database, and must `store.delete(id)` if that fails.
 */
export async function ingestFile(store: FileStore, body: Readable, options: IngestOptions): Promise<IngestedFile> {
  const id = randomUUID()
  const meter = new Meter(options.maxBytes)
  // stream.pipeline (not .pipe) so an aborted request destroys the meter and so fails the put.
  const metered = pipeline(body, meter, () => {})
  try {
    await store.put(id, metered)
  } catch (error) {
    if (meter.overLimit) throw new PayloadTooLarge(`the file is larger than the ${options.kind} limit of ${formatBytes(options.maxBytes)}`)
    throw error
  }

  try {
    if (meter.size === 0) throw new InvalidUpload('the file is empty')
    const contentType = await decideType(store, id, meter, options.kind)
    return {
      id,
      filename: sanitizeFilename(options.clientFilename),
      contentType: contentType.mime,
      size: meter.size,
      sha256: meter.digest(),
      packFormat: contentType.packFormat,
    }
  } catch (error) {
    await store.delete(id)
    throw error
  }
}

async function decideType(store: FileStore, id: string, meter: Meter, kind: UploadKind): Promise<{ mime: string; packFormat: number | null }> {
  if (kind === 'version') {
    // file-type would call a ZIP with a META-INF folder a JAR; what matters here is that it opens as a ZIP.
    const archive = await inspectArchive(store, id, meter.size)
    return { mime: ZIP_TYPE, packFormat: archive.packFormat }
  }
  const mime = await sniffType(meter.head())
  if (!mime || !ALLOWED_TYPES[kind].includes(mime)) {
    throw new InvalidUpload(`invalid file type for kind "${kind}": ${mime ? `got ${mime}, ` : ''}expected ${describeAllowed(kind)}`)
  }
  return { mime, packFormat: null }
}

/** Counts, hashes and keeps the head of the bytes passing through; fails the stream past `maxBytes`. */
class Meter extends Transform {
  size = 0
  overLimit = false
  private readonly hash = createHash('sha256')
  private readonly headChunks: Buffer[] = []
  private headLength = 0

  constructor(private readonly maxBytes: number) {
    super()
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.size += chunk.length
    if (this.size > this.maxBytes) {
      this.overLimit = true
      callback(new PayloadTooLarge('file too large'))
      return
    }
    this.hash.update(chunk)
    if (this.headLength < SNIFF_BYTES) {
      this.headChunks.push(chunk.subarray(0, SNIFF_BYTES - this.headLength))
      this.headLength += Math.min(chunk.length, SNIFF_BYTES - this.headLength)
    }
    callback(null, chunk)
  }

  head(): Buffer {
    return Buffer.concat(this.headChunks)
  }

  digest(): string {
    return this.hash.digest('hex')
  }
}

export function formatBytes(bytes: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB']
  let value = bytes
  let unit = 0
  while (value >= 1024 && unit < units.length - 1 && Number.isInteger(value / 1024)) {
    value /= 1024
    unit += 1
  }
  return `${value} ${units[unit]}`
}
