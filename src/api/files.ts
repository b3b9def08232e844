import { Type } from 'typebox'
import { errorResponses } from './common.js'

export const FileParams = Type.Object({
  file_id: Type.String({ description: 'UUID of the stored file.' }),
})

export const FileQuery = Type.Object({
  download: Type.Optional(Type.String({ description: 'The value 1 forces a download: Content-Disposition attachment, Content-Type application/octet-stream.' })),
})

const binary = (description: string) => ({
  description,
  content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
})

/**
 * The bytes go out as a stream, which Fastify never serialises, so these
 * schemas only describe the responses for /api/schema/.
 */
export const fileResponses = {
  200: binary('The file contents. Served inline with the type detected at upload (so images and videos render); with download=1 as application/octet-stream attachment.'),
  206: binary('One byte range of the file (Range: bytes=a-b, bytes=a-, bytes=-n), with Content-Range.'),
  302: {
    description: 'Only on a site with PACKS_S3_REDIRECT: the bytes are at Location, a presigned link of the object store that works '
      + 'without the gate for a few minutes and answers with the same Content-Disposition and Content-Type (and a Range sent to it).',
    type: 'null',
  },
  304: { description: 'Not modified: If-None-Match matched the ETag.', type: 'null' },
  ...errorResponses(401, 404),
  416: Type.Object({ detail: Type.String() }, { description: 'Range not satisfiable; Content-Range gives the size (bytes */size).' }),
} as const
