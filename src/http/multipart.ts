// Reading a multipart/form-data request that carries one file and a few text
// fields, in any order, with the file streamed (never buffered). The upload
// and new-version use cases read their forms through it, so both treat broken
// forms alike: every client mistake is a 400 (413 for an over-long field).
// The reader hands over the parts one by one and never calls back: what a
// field means, and where the file goes, is the caller's to decide.
import type { Readable } from 'node:stream'
import type { FastifyRequest } from 'fastify'
import multipart from '@fastify/multipart'
import type { Config } from '../config/index.js'
import type { App } from './types.js'
import { BadRequest, DomainError, PayloadTooLarge } from '../errors.js'
import { fieldTextFault, lineFault } from './text-input.js'

/**
 * Registers the multipart parser in the caller's scope only: the plugin adds
 * hooks to every request of its scope, and only the upload routes take forms.
 */
export async function acceptFileForms(scope: App, config: Config): Promise<void> {
  await scope.register(multipart, {
    // Per-kind limits are enforced while streaming (src/uploads/ingest.ts); this is the backstop for the largest kind.
    limits: {
      fileSize: Math.max(...Object.values(config.uploadLimits)) + 1,
      files: 1,
      fields: 10,
      fieldSize: 64 * 1024,
      parts: 12,
    },
  })
}

/** A text field, checked (a unique, clean name and value); what it means is the reader's business. */
export interface FormField {
  type: 'field'
  name: string
  value: string
}

/** The file part, unread: its bytes flow only as `stream` is consumed. */
export interface FormFile {
  type: 'file'
  name: string
  /** As the client sent it: to be cleaned before it is kept. */
  filename: string
  stream: Readable
}

export type FormPart = FormField | FormFile

/**
 * One form's parts, in the order they come. Nothing is read before parts() is
 * first called, so a caller may refuse the request on other grounds first.
 * The file part must be consumed (or resumed) before the next part arrives;
 * whatever the caller stored from it is the caller's to remove if the form
 * fails afterwards.
 */
export class FileForm {
  private ending: PartWatch | undefined
  private refused: Promise<never> | undefined

  constructor(private readonly request: FastifyRequest, readonly fileField: string) {}

  async *parts(): AsyncGenerator<FormPart, void, undefined> {
    const { request, fileField } = this
    if (this.ending) throw new Error('a form\'s parts are read once')
    if (!request.isMultipart()) throw new BadRequest(`expected a multipart/form-data request with a "${fileField}" part`)
    // Checked before the parser exists: busboy throws a plain Error (a 500) on a boundary over 256 characters.
    const ending = new PartWatch(multipartBoundary(request.headers['content-type']))
    this.ending = ending
    // A part the parser would skip stalls it (see PartWatch): every wait for the parser or for the caller's work races this.
    const refused = new Promise<never>((_resolve, reject) => { ending.onRefuse = (detail) => reject(new BadRequest(detail)) })
    refused.catch(() => {})
    this.refused = refused
    // Paused first, so this listener cannot start the flow before the parser is piped in.
    request.raw.pause()
    request.raw.on('data', (chunk: Buffer) => ending.push(chunk))

    const seen = new Set<string>()
    try {
      const parts = request.parts()[Symbol.asyncIterator]()
      for (;;) {
        const next = await Promise.race([parts.next(), refused])
        if (next.done) break
        const part = next.value
        // busboy gives a part without a name an undefined fieldname.
        if (typeof part.fieldname !== 'string' || part.fieldname === '') {
          if (part.type === 'file') part.file.resume()
          throw new BadRequest('a multipart part has no name: every part needs Content-Disposition: form-data; name="..."')
        }
        if (part.type === 'file') {
          if (part.fieldname !== fileField) {
            part.file.resume()
            throw new BadRequest(`unexpected file part "${part.fieldname}": send the file in the "${fileField}" part`)
          }
          yield { type: 'file', name: part.fieldname, filename: part.filename, stream: part.file }
          continue
        }
        if (part.fieldname === fileField) {
          throw new BadRequest(`the "${fileField}" part must be a file (a part with a filename), not a text field`)
        }
        if (seen.has(part.fieldname)) throw new BadRequest(`the "${part.fieldname}" field is given more than once`)
        if (part.valueTruncated) throw new PayloadTooLarge(`the "${part.fieldname}" field is too long`)
        const value = typeof part.value === 'string' ? part.value : String(part.value)
        // The same rules as for every other text input (src/http/text-input.ts), which never sees these parts.
        const nameFault = lineFault(part.fieldname)
        if (nameFault) throw new BadRequest(`a multipart field name ${nameFault}`)
        const valueFault = fieldTextFault(part.fieldname, value)
        if (valueFault) throw new BadRequest(`the "${part.fieldname}" field ${valueFault}`)
        seen.add(part.fieldname)
        yield { type: 'field', name: part.fieldname, value }
      }
      // @fastify/multipart ends the parts quietly at "unexpected end of form", so a body cut off after
      // the file would parse as a shorter, well-formed form; the missing closing boundary tells.
      if (!ending.seen) throw new BadRequest('malformed multipart/form-data body: it ends before its closing boundary')
    } catch (error) {
      throw asClientError(error, request, ending)
    }
  }

  /**
   * Waits for the caller's work on the file part (storing it, say), unless a
   * later part is refused first; then the connection is closed after the 400,
   * which fails the file's stream, and whoever stored it removes what it
   * stored. A failure of the work is judged as the form's: a stream error on
   * a body that was cut off is the client's 400.
   */
  async watch<T>(work: Promise<T>): Promise<T> {
    try {
      return await (this.refused ? Promise.race([work, this.refused]) : work)
    } catch (error) {
      throw asClientError(error, this.request, this.ending)
    }
  }
}

export interface FileFormHandlers<F> {
  /** Name of the one file part. */
  fileField: string
  /** Stores the file part; sees the text fields that came before it. */
  onFile(part: { file: Readable; filename: string }, fields: ReadonlyMap<string, string>): Promise<F>
  /** Removes what onFile stored, when the form fails after it. */
  discard(file: F): Promise<void>
}

/** A FileForm read whole: the stored file part and the text fields. */
export async function readFileForm<F>(request: FastifyRequest, handlers: FileFormHandlers<F>): Promise<{ file: F | undefined; fields: Map<string, string> }> {
  const form = new FileForm(request, handlers.fileField)
  const fields = new Map<string, string>()
  let file: F | undefined
  try {
    for await (const part of form.parts()) {
      if (part.type === 'field') fields.set(part.name, part.value)
      else file = await form.watch(handlers.onFile({ file: part.stream, filename: part.filename }, fields))
    }
    return { file, fields }
  } catch (error) {
    // A failed clean-up is logged, not thrown: the client must still hear what was wrong with its form.
    if (file !== undefined) await handlers.discard(file).catch((cleanupError: unknown) => request.log.error({ err: cleanupError }, 'could not delete the bytes of a failed form'))
    throw error
  }
}

/**
 * The parser's own errors and ours go out as they are; a second file is a 400;
 * a stream error once the body has ended or was aborted without its closing
 * boundary means the body was cut off or is not multipart. Anything else
 * (storage failing mid-upload) stays a server error.
 */
function asClientError(error: unknown, request: FastifyRequest, ending: PartWatch | undefined): unknown {
  if (error instanceof DomainError) return error
  const code = (error as { code?: unknown }).code
  if (code === 'FST_FILES_LIMIT') return new BadRequest('only one file may be sent per request')
  if (typeof code === 'string' && code.startsWith('FST_')) return error
  const raw = request.raw
  const bodyOver = raw.readableEnded || raw.destroyed || raw.aborted
  if (ending?.seen === false && bodyOver) return new BadRequest('malformed multipart/form-data body: it was cut off or is not valid multipart')
  return error
}

/** RFC 2046 §5.1.1: a boundary is 1 to 70 characters. */
export const MAX_BOUNDARY_LENGTH = 70

const MALFORMED_TYPE = 'malformed multipart/form-data request: the Content-Type parameters do not parse'

/**
 * The boundary of a multipart/form-data Content-Type, or a BadRequest. The
 * parameters are read strictly (RFC 9110 §5.6.6: token "=" token or
 * quoted-string, separated by ";"), in one pass without a regular expression,
 * so whatever passes reads the same to busboy's laxer parser; the boundary
 * must then be what RFC 2046 §5.1.1 allows: 1-70 of its bchars, not ending in
 * a space.
 */
export function multipartBoundary(contentType: string | undefined): string {
  const value = contentType ?? ''
  let boundary: string | undefined
  let i = value.indexOf(';')
  while (i !== -1 && i < value.length) {
    // value[i] is a ";": an optional parameter follows (empty ones are allowed).
    i = skipOws(value, i + 1)
    if (i === value.length) break
    if (value[i] === ';') continue
    const nameStart = i
    while (i < value.length && isTchar(value.charCodeAt(i))) i++
    const name = value.slice(nameStart, i).toLowerCase()
    if (name === '' || value[i] !== '=') throw new BadRequest(MALFORMED_TYPE)
    i++
    let parameter: string
    if (value[i] === '"') {
      const quoted = readQuotedString(value, i)
      if (quoted === null) throw new BadRequest(MALFORMED_TYPE)
      parameter = quoted.text
      i = quoted.end
    } else {
      const valueStart = i
      while (i < value.length && isTchar(value.charCodeAt(i))) i++
      if (i === valueStart) throw new BadRequest(MALFORMED_TYPE)
      parameter = value.slice(valueStart, i)
    }
    i = skipOws(value, i)
    if (i < value.length && value[i] !== ';') throw new BadRequest(MALFORMED_TYPE)
    if (name === 'boundary*') throw new BadRequest('the multipart boundary must be a plain boundary= parameter')
    if (name === 'boundary') {
      if (boundary !== undefined) throw new BadRequest('the Content-Type gives the multipart boundary more than once')
      boundary = parameter
    }
  }
  if (boundary === undefined || boundary === '') throw new BadRequest('malformed multipart/form-data request: the Content-Type has no boundary')
  if (boundary.length > MAX_BOUNDARY_LENGTH) {
    throw new BadRequest(`the multipart boundary is longer than ${MAX_BOUNDARY_LENGTH} characters (RFC 2046)`)
  }
  for (let k = 0; k < boundary.length; k++) {
    if (!isBchar(boundary.charCodeAt(k))) {
      throw new BadRequest("the multipart boundary may hold only letters, digits, spaces and '()+_,-./:=? (RFC 2046)")
    }
  }
  if (boundary.endsWith(' ')) throw new BadRequest('the multipart boundary may not end with a space (RFC 2046)')
  return boundary
}

/** A quoted-string starting at value[start] (a DQUOTE): its unescaped text and the index after its closing quote. */
function readQuotedString(value: string, start: number): { text: string; end: number } | null {
  const pieces: string[] = []
  let from = start + 1
  for (let i = from; i < value.length; i++) {
    const code = value.charCodeAt(i)
    if (code === 0x22) {
      pieces.push(value.slice(from, i))
      return { text: pieces.join(''), end: i + 1 }
    }
    if (code === 0x5c) {
      // quoted-pair: the next character stands for itself.
      if (i + 1 === value.length) return null
      pieces.push(value.slice(from, i))
      from = i + 1
      i++
    }
  }
  return null
}

function skipOws(value: string, from: number): number {
  let i = from
  while (i < value.length && (value[i] === ' ' || value[i] === '\t')) i++
  return i
}

/** RFC 9110 §5.6.2 tchar. */
function isTchar(code: number): boolean {
  return isAlnum(code) || (code < 0x80 && "!#$%&'*+-.^_`|~".includes(String.fromCharCode(code)))
}

/** RFC 2046 §5.1.1 bchars (space included). */
function isBchar(code: number): boolean {
  return isAlnum(code) || (code < 0x80 && "'()+_,-./:=? ".includes(String.fromCharCode(code)))
}

function isAlnum(code: number): boolean {
  return (code >= 0x30 && code <= 0x39) || (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a)
}

/** At most this many bytes of headers per part; busboy's own default is 80 KiB, far beyond any form's. */
const MAX_PART_HEADER_BYTES = 8 * 1024
const CRLF_CRLF = Buffer.from('\r\n\r\n')

/**
 * Watches the raw body beside the parser, for two things the parser does not
 * say. Whether the closing delimiter arrived: @fastify/multipart ends the
 * parts quietly at "unexpected end of form", so a body cut off after the file
 * would otherwise parse as a shorter, well-formed form. And parts busboy would
 * skip (no Content-Disposition, one that is not form-data, a line break inside
 * a header value): @fastify/busboy 3.2 stalls on a skipped part longer than
 * its 16 KiB buffer, and the request would wait for its timeout. Such parts
 * are refused as soon as their headers have arrived. One pass, no regular
 * expression; only a part's header block (at most 8 KiB) is kept.
 */
class PartWatch {
  seen = false
  onRefuse: (detail: string) => void = () => {}
  private refused = false
  private readonly delimiter: Buffer
  private readonly closing: Buffer
  /** Bytes not yet decided: a possible start of the delimiter, or the header block being read. */
  private pending: Buffer
  private inHeaders = false

  constructor(boundary: string) {
    this.delimiter = Buffer.from(`\r\n--${boundary}`)
    this.closing = Buffer.from(`\r\n--${boundary}--`)
    // The parser reads the body as if it began with CRLF, so a form with no parts still closes.
    this.pending = Buffer.from('\r\n')
  }

  push(chunk: Buffer): void {
    if (this.seen || this.refused) return
    // Most chunks are file bytes: search them in place, and copy only when a delimiter starts in the kept tail.
    let data = chunk
    if (this.inHeaders || this.pending.length > 0) {
      const seam = this.inHeaders ? undefined : Buffer.concat([this.pending, chunk.subarray(0, this.closing.length + 2)])
      const straddles = seam === undefined || seam.indexOf(this.delimiter) >= 0 && seam.indexOf(this.delimiter) < this.pending.length
      if (straddles) data = Buffer.concat([this.pending, chunk])
    }
    for (;;) {
      if (this.inHeaders) {
        const end = data.indexOf(CRLF_CRLF)
        if ((end < 0 ? data.length : end) > MAX_PART_HEADER_BYTES) return this.refuse(`a multipart part's headers are longer than ${MAX_PART_HEADER_BYTES} bytes`)
        if (end < 0) {
          this.pending = data
          return
        }
        const fault = partHeaderFault(data.subarray(0, end + 2))
        if (fault) return this.refuse(fault)
        this.inHeaders = false
        data = data.subarray(end + 4)
        continue
      }
      const at = data.indexOf(this.delimiter)
      if (at < 0) {
        // Keep only what could be the start of a delimiter split across chunks (a tiny chunk adds to the old tail).
        const keep = this.closing.length - 1
        const whole = data === chunk && chunk.length < keep ? Buffer.concat([this.pending, chunk]) : data
        this.pending = Buffer.from(whole.subarray(Math.max(0, whole.length - keep)))
        return
      }
      const after = at + this.delimiter.length
      if (data.length < after + 2) {
        this.pending = Buffer.from(data.subarray(at))
        return
      }
      if (data[after] === 0x2d && data[after + 1] === 0x2d) {
        this.seen = true
        return
      }
      // The rest of the delimiter line (transport padding) up to its CRLF, then the part's headers.
      const lineEnd = data.indexOf('\r\n', after)
      if (lineEnd < 0) {
        if (data.length - after > MAX_PART_HEADER_BYTES) return this.refuse('malformed multipart/form-data body: a boundary line does not end')
        this.pending = Buffer.from(data.subarray(at))
        return
      }
      this.inHeaders = true
      // Headers start right after the line's CRLF; keep that CRLF so an empty header block reads as CRLF CRLF.
      data = data.subarray(lineEnd)
    }
  }

  private refuse(detail: string): void {
    this.refused = true
    this.pending = Buffer.alloc(0)
    this.onRefuse(detail)
  }
}

/**
 * Why busboy would skip a part with these headers (CRLF, then header lines
 * each ending in CRLF), or undefined. Header names are ASCII, compared
 * without regard to case.
 */
export function partHeaderFault(block: Buffer): string | undefined {
  const text = block.toString('latin1')
  let disposition: string | undefined
  let start = 2
  while (start < text.length) {
    const end = text.indexOf('\r\n', start)
    const line = text.slice(start, end < 0 ? text.length : end)
    start = end < 0 ? text.length : end + 2
    if (line.includes('\r') || line.includes('\n')) return 'a multipart part header contains a bare line break'
    if (line === '') continue
    if (line[0] === ' ' || line[0] === '\t') return 'a multipart part header is folded over several lines'
    const colon = line.indexOf(':')
    if (colon > 0 && line.slice(0, colon).trim().toLowerCase() === 'content-disposition') disposition = line.slice(colon + 1).trim()
  }
  if (disposition === undefined) return 'a multipart part has no Content-Disposition header'
  if (disposition.slice(0, 9).toLowerCase() !== 'form-data' || (disposition.length > 9 && disposition[9] !== ';' && disposition[9] !== ' ')) {
    return 'a multipart part\'s Content-Disposition is not form-data'
  }
  return undefined
}
