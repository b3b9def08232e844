// Reading a multipart/form-data request that carries one file and a few text
// fields, in any order, with the file streamed (never buffered). Shared by the
// upload route and the new-version route so both treat broken forms alike:
// every client mistake is a 400 (413 for an over-long field), and whatever the
// form stored is discarded when the form fails.
import type { FastifyRequest } from 'fastify'
import multipart, { type MultipartFile } from '@fastify/multipart'
import type { Config } from '../config.js'
import type { App } from './types.js'
import { BadRequest, DomainError, PayloadTooLarge } from '../domain/errors.js'
import { textFault } from './text-input.js'

/**
 * Registers the multipart parser in the caller's scope only: the plugin adds
 * hooks to every request of its scope, and only the upload routes take forms.
 */
export async function acceptFileForms(scope: App, config: Config): Promise<void> {
  await scope.register(multipart, {
    // Per-kind limits are enforced while streaming (src/domain/ingest.ts); this is the backstop for the largest kind.
    limits: {
      fileSize: Math.max(...Object.values(config.uploadLimits)) + 1,
      files: 1,
      fields: 10,
      fieldSize: 64 * 1024,
      parts: 12,
    },
  })
}

export interface FileFormHandlers<F> {
  /** Name of the one file part. */
  fileField: string
  /** Checks a text field as it arrives (so a bad `kind` fails before the file is streamed); throw to refuse. */
  onField?(name: string, value: string, fields: ReadonlyMap<string, string>): void | Promise<void>
  /** Stores the file part; sees the text fields that came before it. */
  onFile(part: MultipartFile, fields: ReadonlyMap<string, string>): Promise<F>
  /** Removes what onFile stored, when the form fails after it. */
  discard(file: F): Promise<void>
}

export interface FileForm<F> {
  file: F | undefined
  fields: Map<string, string>
}

export async function readFileForm<F>(request: FastifyRequest, handlers: FileFormHandlers<F>): Promise<FileForm<F>> {
  if (!request.isMultipart()) throw new BadRequest(`expected a multipart/form-data request with a "${handlers.fileField}" part`)
  // Checked before the parser exists: busboy throws a plain Error (a 500) on a boundary over 256 characters.
  const boundary = multipartBoundary(request.headers['content-type'])
  const ending = new ClosingDelimiterWatch(boundary)
  // Paused first, so this listener cannot start the flow before the parser is piped in.
  request.raw.pause()
  request.raw.on('data', (chunk: Buffer) => ending.push(chunk))

  const fields = new Map<string, string>()
  let file: F | undefined
  try {
    for await (const part of request.parts()) {
      if (part.type === 'file') {
        if (part.fieldname !== handlers.fileField) {
          part.file.resume()
          throw new BadRequest(`unexpected file part "${part.fieldname}": send the file in the "${handlers.fileField}" part`)
        }
        file = await handlers.onFile(part, fields)
        continue
      }
      if (part.fieldname === handlers.fileField) {
        throw new BadRequest(`the "${handlers.fileField}" part must be a file (a part with a filename), not a text field`)
      }
      if (fields.has(part.fieldname)) throw new BadRequest(`the "${part.fieldname}" field is given more than once`)
      if (part.valueTruncated) throw new PayloadTooLarge(`the "${part.fieldname}" field is too long`)
      const value = typeof part.value === 'string' ? part.value : String(part.value)
      // The same rule as for every other text input (src/http/text-input.ts), which never sees these parts.
      const nameFault = textFault(part.fieldname)
      if (nameFault) throw new BadRequest(`a multipart field name ${nameFault}`)
      const valueFault = textFault(value)
      if (valueFault) throw new BadRequest(`the "${part.fieldname}" field ${valueFault}`)
      await handlers.onField?.(part.fieldname, value, fields)
      fields.set(part.fieldname, value)
    }
    // @fastify/multipart ends the parts quietly at "unexpected end of form", so a body cut off after
    // the file would parse as a shorter, well-formed form; the missing closing boundary tells.
    if (!ending.seen) throw new BadRequest('malformed multipart/form-data body: it ends before its closing boundary')
    return { file, fields }
  } catch (error) {
    if (file !== undefined) {
      // A failed clean-up is logged, not thrown: the client must still hear what was wrong with its form.
      await handlers.discard(file).catch((cleanupError: unknown) => request.log.error({ err: cleanupError }, 'could not delete the bytes of a failed form'))
    }
    throw asClientError(error, request, ending)
  }
}

/**
 * The parser's own errors and ours go out as they are; a second file is a 400;
 * a stream error once the body has ended or was aborted without its closing
 * boundary means the body was cut off or is not multipart. Anything else
 * (storage failing mid-upload) stays a server error.
 */
function asClientError(error: unknown, request: FastifyRequest, ending: ClosingDelimiterWatch): unknown {
  if (error instanceof DomainError) return error
  const code = (error as { code?: unknown }).code
  if (code === 'FST_FILES_LIMIT') return new BadRequest('only one file may be sent per request')
  if (typeof code === 'string' && code.startsWith('FST_')) return error
  const raw = request.raw
  const bodyOver = raw.readableEnded || raw.destroyed || raw.aborted
  if (!ending.seen && bodyOver) return new BadRequest('malformed multipart/form-data body: it was cut off or is not valid multipart')
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

/**
 * Watches the raw body for the multipart closing delimiter (CRLF "--" boundary
 * "--"). The parser stops at the first one, so its presence is exactly "the
 * form was complete".
 */
class ClosingDelimiterWatch {
  seen = false
  private readonly delimiter: Buffer
  // The parser reads the body as if it began with CRLF, so a form with no parts still closes.
  private tail = Buffer.from('\r\n')

  constructor(boundary: string) {
    this.delimiter = Buffer.from(`\r\n--${boundary}--`)
  }

  push(chunk: Buffer): void {
    if (this.seen) return
    const overlap = this.delimiter.length - 1
    const seam = Buffer.concat([this.tail, chunk.subarray(0, overlap)])
    if (seam.includes(this.delimiter) || chunk.includes(this.delimiter)) {
      this.seen = true
      return
    }
    this.tail = chunk.length >= overlap ? Buffer.from(chunk.subarray(chunk.length - overlap)) : seam.subarray(Math.max(0, seam.length - overlap))
  }
}
