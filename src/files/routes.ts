// Serving stored files (CONTRACT §4): conditional and range requests, inline
// or as a download, always sandboxed so an uploaded file can never act as a
// page of this site.
import type { FastifyReply, FastifyRequest } from 'fastify'
import { findFile, type FileRow } from './repository.js'
import { NotFound } from '../errors.js'
import { contentDisposition } from './filenames.js'
import { noneMatch } from '../http/conditional.js'
import { sendError } from '../http/errors.js'
import type { App } from '../http/types.js'
import { isUuid } from '../api/common.js'
import { FileParams, FileQuery, fileResponses } from '../api/files.js'
import type { ByteRange } from '../storage/index.js'

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
      + 'Every response carries X-Content-Type-Options: nosniff and a sandboxing Content-Security-Policy.',
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

interface ServeOptions {
  fileId: string
  download: boolean
  withBody: boolean
}

async function serveFile(app: App, request: FastifyRequest, reply: FastifyReply, { fileId, download, withBody }: ServeOptions): Promise<FastifyReply> {
  const file = isUuid(fileId) ? await findFile(app.db, fileId.toLowerCase()) : undefined
  if (!file) throw new NotFound('file not found')

  const etag = `"${file.sha256}"`
  const lastModified = new Date(file.created_at).toUTCString()
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
    .header('content-type', download ? 'application/octet-stream' : file.content_type)
    .header('content-disposition', contentDisposition(download ? 'attachment' : 'inline', file.filename))
    .header('content-length', String(range ? range.end - range.start + 1 : file.size))
  if (range) reply.code(206).header('content-range', `bytes ${range.start}-${range.end}/${file.size}`)
  if (!withBody) return reply.send()
  return reply.send(await openStored(app, request, file, range ?? undefined))
}

async function openStored(app: App, request: FastifyRequest, file: FileRow, range: ByteRange | undefined) {
  try {
    return await app.store.get(file.storage_key, range)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
    // A row without bytes is a storage fault worth a log line; to the client the file is simply gone.
    request.log.error({ fileId: file.id }, 'stored file is missing its bytes')
    throw new NotFound('file not found')
  }
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value
}

/** If-Range: a strong entity-tag must match exactly, a date must equal Last-Modified (RFC 9110 §13.1.5). */
export function ifRangeHolds(header: string | undefined, etag: string, lastModified: string): boolean {
  if (header === undefined) return true
  const value = header.trim()
  if (value.startsWith('"')) return value === etag
  if (value.startsWith('W/')) return false
  return value === lastModified
}

/**
 * Longer than any honest single range ("bytes=" and two 20-digit positions);
 * a longer value is ignored unread. Ignoring, not 416: RFC 9110 §14.2 lets a
 * server ignore Range, and the whole file is the right answer to a request
 * we chose not to parse, whereas 416 would claim the range lies outside it.
 */
export const MAX_RANGE_LENGTH = 256

/**
 * A single byte range of a `size`-byte file: `bytes=a-b`, `bytes=a-` or
 * `bytes=-n` (RFC 9110 §14.1.2, no whitespace inside). null means "ignore
 * the header and send everything", which RFC 9110 §14.2 allows for other
 * units, several ranges and malformed values. One pass over the characters,
 * no regular expression: this header comes from anyone holding the gate
 * password, and a backtracking pattern here once froze the server for minutes.
 */
export function parseRange(header: string, size: number): ByteRange | 'unsatisfiable' | null {
  if (header.length > MAX_RANGE_LENGTH) return null
  let from = 0
  let to = header.length
  while (from < to && isOws(header.charCodeAt(from))) from++
  while (to > from && isOws(header.charCodeAt(to - 1))) to--
  const unit = 'bytes='
  if (to - from < unit.length || header.slice(from, from + unit.length).toLowerCase() !== unit) return null
  const spec = header.slice(from + unit.length, to)
  const dash = spec.indexOf('-')
  if (dash === -1) return null
  const first = spec.slice(0, dash)
  const last = spec.slice(dash + 1)
  // Also refuses a second "-" and the "," of several ranges.
  if (!isDigits(first) || !isDigits(last)) return null
  if (first === '' && last === '') return null
  if (first === '') {
    const suffix = Number(last)
    if (suffix === 0 || size === 0) return 'unsatisfiable'
    return { start: Math.max(0, size - suffix), end: size - 1 }
  }
  const start = Number(first)
  if (last !== '' && Number(last) < start) return null
  if (start >= size) return 'unsatisfiable'
  return { start, end: last === '' ? size - 1 : Math.min(Number(last), size - 1) }
}

/** Space or horizontal tab (RFC 9110 §5.6.3). */
function isOws(code: number): boolean {
  return code === 0x20 || code === 0x09
}

/** Only ASCII digits (the empty string included). */
function isDigits(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code < 0x30 || code > 0x39) return false
  }
  return true
}
