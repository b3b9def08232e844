import { Type, type Static } from 'typebox'
import type { Config } from '../config/index.js'
import type { PendingUpload } from '../uploads/repository.js'
import { fileUrl } from '../http/urls.js'

export const TempUpload = Type.Object(
  {
    uuid: Type.String({ format: 'uuid' }),
    kind: Type.Union([Type.Literal('thumbnail'), Type.Literal('version'), Type.Literal('media')]),
    filename: Type.String(),
    content_type: Type.String({ description: 'Detected from the file bytes.' }),
    url: Type.String({ description: 'Where the file is served: /api/files/{file_id}/ (absolute when PACKS_BASE_URL is set).' }),
  },
  { title: 'TempUpload', description: 'A pending upload, owned by its uploader, optionally scoped to a draft.' },
)

export type TempUploadBody = Static<typeof TempUpload>

export function toTempUpload(config: Config, upload: PendingUpload): TempUploadBody {
  return {
    uuid: upload.id,
    kind: upload.kind,
    filename: upload.filename,
    content_type: upload.contentType,
    url: fileUrl(config, upload.fileId),
  }
}
