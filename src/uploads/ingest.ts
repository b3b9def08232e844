// Taking in one uploaded file: stream it into storage while counting, hashing
// and keeping its first bytes; then decide its type from those bytes. Whatever
// goes wrong (over the size limit, client gone, wrong type, unreadable ZIP),
// nothing is left in storage.
import { createHash, randomUUID } from 'node:crypto'
import { Transform, pipeline, type Readable, type TransformCallback } from 'node:stream'
import type { UploadKind } from '../api/constants.js'
import type { FileStore } from '../storage/index.js'
import type { NewFile } from '../files/repository.js'
import type { PackDeclaration } from '../minecraft/declaration.js'
import { inspectArchive } from './archives.js'
import { InvalidUpload, PayloadTooLarge } from '../errors.js'
import { ALLOWED_TYPES, SNIFF_BYTES, ZIP_TYPE, describeAllowed, sniffType } from './filetypes.js'
import { sanitizeFilename } from '../files/filenames.js'
import { formatBytes } from '../web/format.js'

/** A new file is stored under its id, so id and storageKey start equal; deleting its bytes goes by storageKey. */
export interface IngestedFile extends NewFile {
  /** For version archives: pack_format from pack.mcmeta, else null. */
  packFormat: number | null
  /** For version archives: their kind and declared format range, which insertFile keeps on the file's row; else undefined. */
  pack: PackDeclaration | undefined
}

export interface IngestOptions {
  kind: UploadKind
  /** Bytes allowed for this kind; one more is a 413. */
  maxBytes: number
  /** The client's file name, cleaned before it is kept. */
  clientFilename: string | undefined
}

/** Bytes that are in storage but not yet accepted as any kind of upload. */
export interface ReceivedFile {
  /** Where the bytes went; also the id the file will have. */
  storageKey: string
  size: number
  sha256: string
  sha1: string
  /** The first SNIFF_BYTES bytes, for type detection. */
  head: Buffer
}

/**
 * Streams `body` into `store`. The caller records the returned file in the
 * database, and must `store.delete(file.storageKey)` if that fails.
 */
export async function ingestFile(store: FileStore, body: Readable, options: IngestOptions): Promise<IngestedFile> {
  const received = await receiveFile(store, body, { maxBytes: options.maxBytes, limitName: `${options.kind} limit` })
  return acceptFile(store, received, options)
}

/**
 * First half of ingestFile, for callers that learn the kind only after the
 * bytes (a multipart form whose `kind` field follows the file): stores the
 * stream under a `maxBytes` ceiling. On failure nothing is left in storage.
 */
export async function receiveFile(store: FileStore, body: Readable, options: { maxBytes: number; limitName: string }): Promise<ReceivedFile> {
  // stream.pipeline never calls back for a source that is already destroyed
  // (a multipart parser may destroy a file part when the form turns out broken).
  if (body.destroyed) throw body.errored ?? new Error('the upload stream was closed before it could be read')
  const storageKey = randomUUID()
  const meter = new Meter(options.maxBytes)
  // stream.pipeline (not .pipe) so an aborted request destroys the meter and so fails the put.
  const metered = pipeline(body, meter, () => {})
  try {
    await store.put(storageKey, metered)
  } catch (error) {
    if (meter.overLimit) throw tooLarge(options.limitName, options.maxBytes)
    throw error
  }
  return { storageKey, size: meter.bytesSeen, ...meter.digests(), head: meter.head() }
}

/**
 * Second half of ingestFile: checks stored bytes against the kind's size limit
 * and allowed types. On failure the bytes are deleted.
 */
export async function acceptFile(store: FileStore, received: ReceivedFile, options: IngestOptions): Promise<IngestedFile> {
  try {
    if (received.size > options.maxBytes) throw tooLarge(`${options.kind} limit`, options.maxBytes)
    if (received.size === 0) throw new InvalidUpload('the file is empty')
    const contentType = await decideType(store, received, options.kind)
    return {
      id: received.storageKey,
      storageKey: received.storageKey,
      filename: sanitizeFilename(options.clientFilename),
      contentType: contentType.mime,
      size: received.size,
      sha256: received.sha256,
      sha1: received.sha1,
      packFormat: contentType.packFormat,
      pack: contentType.pack,
    }
  } catch (error) {
    await store.delete(received.storageKey)
    throw error
  }
}

function tooLarge(limitName: string, maxBytes: number): PayloadTooLarge {
  return new PayloadTooLarge(`the file is larger than the ${limitName} of ${formatBytes(maxBytes, 'exact')}`)
}

interface DecidedType {
  mime: string
  packFormat: number | null
  pack: PackDeclaration | undefined
}

async function decideType(store: FileStore, received: ReceivedFile, kind: UploadKind): Promise<DecidedType> {
  if (kind === 'version') {
    // file-type would call a ZIP with a META-INF folder a JAR; what matters here is that it opens as a ZIP.
    const archive = await inspectArchive(store, received.storageKey, received.size)
    return { mime: ZIP_TYPE, packFormat: archive.packFormat, pack: archive.declaration }
  }
  const mime = await sniffType(received.head)
  if (!mime || !ALLOWED_TYPES[kind].includes(mime)) {
    throw new InvalidUpload(`invalid file type for kind "${kind}": ${mime ? `got ${mime}, ` : ''}expected ${describeAllowed(kind)}`)
  }
  return { mime, packFormat: null, pack: undefined }
}

/** What the Meter holds on each side; see its constructor. */
const METER_BUFFER = 512 * 1024

/**
 * Counts, hashes and keeps the head of the bytes passing through; fails the stream past `maxBytes`.
 * The count is private and its getter is not called `size` (nor length, byteLength, start/end):
 * @aws-sdk/lib-storage takes a body's `size` for its length, and a public `size = 0` here once
 * made every S3 upload above one part fail.
 */
class Meter extends Transform {
  #bytes = 0
  overLimit = false
  // Both while streaming: SHA-256 for the ETag and the update protocol, SHA-1 for what Minecraft servers and
  // launchers check (resource-pack-sha1).
  private readonly hash = createHash('sha256')
  private readonly hash1 = createHash('sha1')
  private readonly headChunks: Buffer[] = []
  private headLength = 0

  constructor(private readonly maxBytes: number) {
    // Room for several socket reads (64 KiB each) on either side, so hashing here and writing to the store
    // overlap instead of taking turns (see WRITE_BUFFER in src/storage/local.ts).
    super({ highWaterMark: METER_BUFFER })
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.#bytes += chunk.length
    if (this.#bytes > this.maxBytes) {
      this.overLimit = true
      callback(new PayloadTooLarge('file too large'))
      return
    }
    this.hash.update(chunk)
    this.hash1.update(chunk)
    if (this.headLength < SNIFF_BYTES) {
      this.headChunks.push(chunk.subarray(0, SNIFF_BYTES - this.headLength))
      this.headLength += Math.min(chunk.length, SNIFF_BYTES - this.headLength)
    }
    callback(null, chunk)
  }

  get bytesSeen(): number {
    return this.#bytes
  }

  head(): Buffer {
    return Buffer.concat(this.headChunks)
  }

  digests(): { sha256: string; sha1: string } {
    return { sha256: this.hash.digest('hex'), sha1: this.hash1.digest('hex') }
  }
}
