// Serving stored files (docs/decisions.md#stored-files): conditional and range requests, inline
// or as a download, always sandboxed so an uploaded file can never act as a
// page of this site.
import type { OutgoingHttpHeaders } from 'node:http'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { FileParams, FileQuery, fileResponses } from '../api/files.js'
import { noneMatch } from '../http/conditional.js'
import { sendError } from '../http/errors.js'
import type { App } from '../http/types.js'
import { contentDisposition } from './filenames.js'
import { ifRangeHolds, parseRange } from './ranges.js'
import { handOffFor } from './offload.js'
import { findStoredFile } from './service.js'
import { prepareDownload } from './send.js'

/** No scripts, no plugins, no same-origin powers, even if a browser is made to render the file as a document. */
export const FILE_CSP = "default-src 'none'; sandbox"

// A file id names fixed bytes (a new upload gets a new id), so clients may keep
// them; `private` because they sit behind the gate.
const FILE_CACHE_CONTROL = 'private, max-age=31536000, immutable'

export default async function filesRoutes(app: App): Promise<void> {
  const schema = {
    summary: 'Serve a stored file',
    description:
      'The bytes of a stored file (media, thumbnail, release archive). Needs only the site gate. '
      + 'Supports HEAD, a single byte range (Range, If-Range; 206/416), and ETag / If-None-Match (304). '
      + 'Every response carries X-Content-Type-Options: nosniff and a sandboxing Content-Security-Policy. '
      + 'A GET of a version archive with download=1 counts as a download of that version (and its pack), at most once '
      + 'per client address, version and UTC day; HEAD, 304, and a range that does not start at byte 0 (a resumed '
      + 'download) do not count. Counts are written in batches, so they show after a few seconds. '
      + 'A site may have another engine send the bytes once all of this is decided: nginx (the answer is the same) or, on '
      + 'object storage, the store itself (a GET then answers 302 to a short-lived presigned link).',
    tags: ['files'],
    params: FileParams,
    querystring: FileQuery,
    response: fileResponses,
  }

  // HEAD is its own route so it answers from the database row alone; Fastify's
  // automatic HEAD would open the file and read it to the end for nothing.
  app.get('/api/files/:file_id/', { exposeHeadRoute: false, schema }, (request, reply) =>
    serveFile(app, request, reply, { fileId: request.params.file_id, download: request.query.download === '1', withBody: true }))
  app.head('/api/files/:file_id/', { schema: { ...schema, hide: true } }, (request, reply) =>
    serveFile(app, request, reply, { fileId: request.params.file_id, download: request.query.download === '1', withBody: false }))
}

export interface ServeOptions {
  fileId: string
  download: boolean
  withBody: boolean
}

/** The answer from the row alone (304, 416, HEAD); the bytes are opened only for a body. */
export async function serveFile(app: App, request: FastifyRequest, reply: FastifyReply, { fileId, download, withBody }: ServeOptions): Promise<FastifyReply> {
  // Only a download can count, and only with a body: then the same query finds the archive's version.
  const countable = download && withBody
  const file = await findStoredFile({ db: app.db, store: app.store, log: request.log }, fileId, countable)

  const etag = `"${file.sha256}"`
  const lastModified = new Date(file.createdAt).toUTCString()
  // Same-origin resource policy: other sites cannot embed our files, even with a visitor's gate cookie.
  reply.header('content-security-policy', FILE_CSP).header('cross-origin-resource-policy', 'same-origin')

  const validators = { etag, 'last-modified': lastModified, 'cache-control': FILE_CACHE_CONTROL }
  if (noneMatch(request.headers['if-none-match'], etag)) {
    return reply.code(304).headers(validators).send()
  }

  // Range is defined for GET only (RFC 9110 §14.2); If-Range says whether the client's partial copy is still ours.
  const rangeHeader = withBody && ifRangeHolds(headerValue(request.headers['if-range']), etag, lastModified) ? request.headers.range : undefined
  const range = rangeHeader === undefined ? null : parseRange(rangeHeader, file.size)
  if (range === 'unsatisfiable') {
    reply.header('content-range', `bytes */${file.size}`)
    return sendError(reply, 416, `range not satisfiable: the file has ${file.size} bytes`)
  }

  reply
    .headers(validators)
    .header('accept-ranges', 'bytes')
    .header('content-type', download ? 'application/octet-stream' : file.contentType)
    .header('content-disposition', contentDisposition(download ? 'attachment' : 'inline', file.filename))
    .header('content-length', String(range ? range.end - range.start + 1 : file.size))
  if (range) reply.code(206).header('content-range', `bytes ${range.start}-${range.end}/${file.size}`)
  if (!withBody) return reply.send()
  // A range from byte 0 is how a download manager starts one (and how some clients fetch the whole file); a
  // later range continues a download already counted. Counting is in memory here; the writes are batched.
  const count = () => {
    if (countable && file.version && (range === null || range.start === 0)) app.downloads.record(file.version, request.ip)
  }
  // Behind nginx, or on S3, the bytes may be sent by them (./offload.ts): everything above is decided by now.
  const handOff = await handOffFor(app, request, reply, file, range)
  if (handOff) {
    count()
    return handOff(reply)
  }
  const reader = await file.openReader()
  if (reader) {
    // From local disk, through reused buffers (./send.ts). The first chunk is read before anything is sent, so a
    // failing disk is still an error answer; then the headers Fastify holds go out as they are and the bytes follow.
    const download = await prepareDownload(reader, range?.start ?? 0, range?.end ?? file.size - 1)
    count()
    reply.hijack()
    reply.raw.writeHead(reply.statusCode, reply.getHeaders() as OutgoingHttpHeaders)
    await download.send(reply.raw)
    return reply
  }
  const body = await file.open(range ?? undefined)
  count()
  return reply.send(body)
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value
}
