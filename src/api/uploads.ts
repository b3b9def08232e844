import { Type, type Static } from 'typebox'
import type { Literals } from './common.js'
import { UPLOAD_KINDS } from './constants.js'

export const TempUpload = Type.Object(
  {
    uuid: Type.String({ format: 'uuid' }),
    kind: Type.Union(UPLOAD_KINDS.map((kind) => Type.Literal(kind)) as Literals<typeof UPLOAD_KINDS>),
    filename: Type.String(),
    content_type: Type.String({ description: 'Detected from the file bytes.' }),
    url: Type.String({ description: 'Where the file is served: /api/files/{file_id}/ (absolute when PACKS_BASE_URL is set).' }),
  },
  { title: 'TempUpload', description: 'A pending upload, owned by its uploader, optionally scoped to a draft.' },
)

export type TempUploadBody = Static<typeof TempUpload>

/**
 * The upload form as documented. It is never validated as a body: the parts
 * are read as a stream, each checked as it arrives (src/uploads/service.ts).
 */
export const UploadForm = Type.Object({
  file: Type.String({ format: 'binary', description: 'The file. Its type is detected from its bytes; the declared type and name are not trusted.' }),
  kind: Type.Optional(Type.String({
    enum: [...UPLOAD_KINDS],
    default: 'media',
    description: 'thumbnail: PNG, JPEG, GIF, WebP. media: those or MP4, WebM. version: a ZIP archive. '
      + 'Limits: thumbnail 5 MiB, media 100 MiB, version 500 MiB by default (413 above).',
  })),
  draft_uuid: Type.Optional(Type.String({ format: 'uuid', description: 'Joins the upload to this create-page draft, creating the draft if it is new.' })),
}, { required: ['file'] })

export const UploadParams = Type.Object({ upload_uuid: Type.String({ description: 'UUID of the pending upload.' }) })
