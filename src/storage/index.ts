// Where file bytes live. Everything outside this folder reaches stored bytes
// only through FileStore, so the local disk can be swapped for object storage
// by configuration.
import type { Readable } from 'node:stream'
import { ConfigError } from '../config.js'
import { LocalFileStore } from './local.js'

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
}

export function openFileStore(storageUrl: string): FileStore {
  if (storageUrl.startsWith('file:')) return new LocalFileStore(storageUrl.slice('file:'.length))
  throw new ConfigError(`STORAGE_URL: only file: is supported by this build`)
}
