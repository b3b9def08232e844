// What every FileStore is and reports, apart from the stores themselves, so
// local.ts and s3.ts implement it without importing the module that picks one.
import type { Readable } from 'node:stream'

export interface ByteRange {
  /** First byte, inclusive. */
  start: number
  /** Last byte, inclusive (as in HTTP Range). */
  end: number
}

/** One stored object, as `FileStore.list()` reports it. */
export interface StoredObject {
  key: string
  size: number
  /** When its bytes were last written. */
  modifiedAt: Date
}

/**
 * A write that started and never finished, so it holds bytes under no key: a
 * `.partial` file on disk, a multipart upload on S3. A process killed in the
 * middle of a put leaves one; nothing else ever removes it.
 */
export interface UnfinishedWrite {
  /** The key the write was for. */
  key: string
  /** What names this write to `discardUnfinished` (a file name, an upload id). */
  id: string
  /** Bytes held so far, when the store can tell (S3 does not say without a request per upload). */
  size: number | null
  /** The last sign of life: the file's last write on disk, the upload's start on S3. */
  modifiedAt: Date
}

/** A stored object open for reads at any position (local disk): what a download copies from into reused buffers. */
export interface PositionalReader {
  /** Reads up to `length` bytes at `position` into the start of `buffer`; how many were read (0: past the end). */
  read(buffer: Buffer, length: number, position: number): Promise<number>
  close(): Promise<void>
}

/** How a presigned link's answer is to describe the bytes (S3's response-* overrides). */
export interface PresignOptions {
  /** How long the link works, in seconds. */
  seconds: number
  contentDisposition: string
  contentType: string
}

export interface FileStore {
  /**
   * Streams `body` into the store under `key`. Resolves once the bytes are
   * durable. If the stream fails or is aborted, nothing is left under `key`
   * and the promise rejects with the stream's error.
   */
  put(key: string, body: Readable): Promise<void>
  /** Streams the stored bytes, or the given range of them. */
  get(key: string, range?: ByteRange): Promise<Readable>
  /**
   * Opens the stored bytes for positional reads, where the store can (local disk): a download then copies them
   * into a few buffers it reuses instead of a new one per chunk (src/files/send.ts). Rejects with ENOENT as get does.
   */
  openReader?(key: string): Promise<PositionalReader>
  /**
   * Where the key's file lies under the store's directory (`<fan-out>/<key>`), once it is known to be there
   * (ENOENT otherwise, as get does): for nginx, which sends the file from that directory itself
   * (PACKS_ACCEL_REDIRECT, src/files/offload.ts). Local disk only.
   */
  locate?(key: string): Promise<string>
  /**
   * A link that fetches the object straight from the store for `options.seconds`, answered with the given
   * Content-Disposition and Content-Type (PACKS_S3_REDIRECT). Object stores only; made without a request.
   */
  presignGet?(key: string, options: PresignOptions): Promise<string>
  /** Removes the bytes; removing a missing key is not an error. */
  delete(key: string): Promise<void>
  /**
   * Every stored object, in ascending key order (keys are ASCII, so code unit
   * and byte order agree, as they do for the database's `order by`), starting
   * after `after` when given. Unfinished writes are not objects and are not
   * listed here. Entries that are not this store's (a key it could not have
   * written) are skipped.
   */
  list(options?: { after?: string }): AsyncIterable<StoredObject>
  /** The unfinished writes, in no particular order. */
  listUnfinished(): AsyncIterable<UnfinishedWrite>
  /** Drops an unfinished write's bytes; one that is already gone is not an error. */
  discardUnfinished(write: UnfinishedWrite): Promise<void>
  /** Releases connections; the store is not used after. */
  close(): Promise<void>
  /**
   * Verifies a remote store is there and ours (a ConfigError otherwise), so a
   * bad STORAGE_URL fails at start rather than at the first upload.
   */
  check?(): Promise<void>
  /**
   * What check() found this store lacks of what Packs would use, and what is lost without it, as one line
   * for the operator; null when nothing is missing.
   */
  limitation?(): string | null
}
