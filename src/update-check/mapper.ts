// The update-check's record in the API's shape.
import type { NewestVersionRecord } from './repository.js'
import type { PackLatestBody } from '../api/update-check.js'
import type { FileUrls } from '../packs/mapper.js'

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
