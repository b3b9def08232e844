// Finding a stored file and reading its bytes (GET /api/files/{file_id}/).
import type { Readable } from 'node:stream'
import { isUuid } from '../api/constants.js'
import type { Db } from '../db/index.js'
import { NotFound } from '../errors.js'
import type { ByteRange, FileStore, PositionalReader, PresignOptions } from '../storage/index.js'
import { findFile } from './repository.js'

/** What serving a file works with; `log` is the request's. */
export interface FilesDeps {
  db: Db
  store: FileStore
  log: { error(details: object, message: string): void }
}

/** A stored file as its row describes it; its bytes are read only when opened. */
export interface StoredFile {
  id: string
  filename: string
  contentType: string
  size: number
  sha256: string
  createdAt: string
  /** The version whose archive this is (looked up only when asked for: findStoredFile's `withVersion`); else null. */
  version: { versionId: string; packRowId: string } | null
  /** The bytes, or one range of them. A row whose bytes are gone is NotFound. */
  open(range?: ByteRange): Promise<Readable>
  /** The bytes for positional reads, when the store offers them (local disk); else undefined. Gone bytes are NotFound. */
  openReader(): Promise<PositionalReader | undefined>
  /** Where the bytes lie under the store's directory, for nginx (local disk); else undefined. Gone bytes are NotFound. */
  locate(): Promise<string | undefined>
  /** A presigned link straight to the bytes in the object store; undefined on a store without such links. */
  presign(options: PresignOptions): Promise<string | undefined>
}

/**
 * The file with this id; a malformed id names nothing, so it is NotFound like
 * a missing one. `withVersion`: also find the version whose archive it is, in
 * the same query (a download to count).
 */
export async function findStoredFile(deps: FilesDeps, fileUuid: string, withVersion = false): Promise<StoredFile> {
  const row = isUuid(fileUuid) ? await findFile(deps.db, fileUuid.toLowerCase(), withVersion) : undefined
  if (!row) throw new NotFound('file not found')
  return {
    id: row.id,
    filename: row.filename,
    contentType: row.content_type,
    size: row.size,
    sha256: row.sha256,
    createdAt: row.created_at,
    version: row.version_id !== null && row.version_pack_id !== null ? { versionId: row.version_id, packRowId: row.version_pack_id } : null,
    open: (range) => missingIsNotFound(deps, row.id, () => deps.store.get(row.storage_key, range)),
    openReader: async () => (deps.store.openReader ? missingIsNotFound(deps, row.id, () => deps.store.openReader!(row.storage_key)) : undefined),
    locate: async () => (deps.store.locate ? missingIsNotFound(deps, row.id, () => deps.store.locate!(row.storage_key)) : undefined),
    presign: async (options) => deps.store.presignGet?.(row.storage_key, options),
  }
}

/** What opening the bytes gives; a row whose bytes are gone is a storage fault worth a log line, and to the client the file is simply gone. */
async function missingIsNotFound<T>(deps: FilesDeps, fileId: string, open: () => Promise<T>): Promise<T> {
  try {
    return await open()
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
    deps.log.error({ fileId }, 'stored file is missing its bytes')
    throw new NotFound('file not found')
  }
}
