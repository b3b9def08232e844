// Where file bytes live. Everything outside this folder reaches stored bytes
// only through FileStore, so the local disk can be swapped for object storage
// by configuration.
import { ConfigError, redactUrl } from '../config/index.js'
import { LocalFileStore, type LocalStoreOptions } from './local.js'
import type { FileStore } from './types.js'

export type { ByteRange, FileStore, PositionalReader, PresignOptions, StoredObject, UnfinishedWrite } from './types.js'
export type { LocalStoreOptions } from './local.js'

/**
 * The store STORAGE_URL names. The AWS SDK is imported here, for an s3:// URL
 * only: it is large (slower to load than Fastify), and a server or CLI call
 * on the local disk has no use for it.
 */
export async function openFileStore(storageUrl: string, options: LocalStoreOptions = {}): Promise<FileStore> {
  if (storageUrl.startsWith('file:')) return new LocalFileStore(storageUrl.slice('file:'.length), options)
  if (storageUrl.startsWith('s3:')) {
    const { S3FileStore } = await import('./s3.js')
    return S3FileStore.fromUrl(storageUrl)
  }
  throw new ConfigError(`STORAGE_URL: "${redactUrl(storageUrl)}" must be file:<dir> or s3://<bucket>?endpoint=...&region=...`)
}
