// Pending uploads in the API's shape (TempUpload).
import type { TempUploadBody } from '../api/uploads.js'
import type { Config } from '../config/index.js'
import { fileUrl } from '../http/urls.js'
import type { PendingUpload } from './repository.js'

export function toTempUpload(config: Config, upload: PendingUpload): TempUploadBody {
  return {
    uuid: upload.id,
    kind: upload.kind,
    filename: upload.filename,
    content_type: upload.contentType,
    url: fileUrl(config, upload.fileId),
  }
}
