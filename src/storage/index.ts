// Where file bytes live. Everything outside this folder reaches stored bytes
// only through FileStore, so the local disk can be swapped for object storage
// by configuration.
import type { Readable } from 'node:stream'
import { ConfigError } from '../config.js'
import { LocalFileStore } from './local.js'
import { S3FileStore } from './s3.js'

export interface ByteRange {
  /** First byte, inclusive. */
  start: number
  /** Last byte, inclusive (as in HTTP Range). */
  end: number
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
  /** Removes the bytes; removing a missing key is not an error. */
  delete(key: string): Promise<void>
  /** Releases connections; the store is not used after. */
  close(): Promise<void>
  /**
   * Verifies a remote store is there and ours (a ConfigError otherwise), so a
   * bad STORAGE_URL fails at start rather than at the first upload.
   */
  check?(): Promise<void>
}

export function openFileStore(storageUrl: string): FileStore {
  if (storageUrl.startsWith('file:')) return new LocalFileStore(storageUrl.slice('file:'.length))
  if (storageUrl.startsWith('s3:')) return S3FileStore.fromUrl(storageUrl)
  throw new ConfigError(`STORAGE_URL: "${storageUrl}" must be file:<dir> or s3://<bucket>?endpoint=...&region=...`)
}
