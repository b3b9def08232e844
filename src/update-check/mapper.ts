// The update-check's record in the API's shape.
import type { NewestVersionRecord } from './repository.js'
import type { HashVersionBody, PackLatestBody } from '../api/update-check.js'
import type { HashVersionRecord } from './by-hash-repository.js'
import type { FileUrls } from '../http/urls.js'

export function toPackLatest(newest: NewestVersionRecord, urls: FileUrls): PackLatestBody {
  return {
    namespace: newest.namespace,
    pack_id: newest.packId,
    name: newest.title,
    version: newest.version,
    pack_format: newest.packFormat,
    created_at: newest.createdAt,
    download_url: urls.download(newest.fileId),
    size: newest.size,
    sha256: newest.sha256,
    sha1: newest.sha1,
    filename: newest.filename,
  }
}

/** The version an archive is, as the by-hash lookup names it. */
export function toHashVersion(record: HashVersionRecord, urls: FileUrls): HashVersionBody {
  return {
    id: record.versionId,
    name: record.version,
    created_at: record.createdAt,
    yanked: record.yanked,
    pack_format: record.packFormat,
    download_url: urls.download(record.fileId),
    size: record.size,
    sha256: record.sha256,
    sha1: record.sha1,
    filename: record.filename,
  }
}
