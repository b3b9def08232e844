// A large, valid version archive made on the fly, and a multipart upload that
// streams it with chunked transfer encoding: neither side of the benchmark ever
// holds the archive in memory, so the server's memory is all that grows.
import { createHash, randomBytes } from 'node:crypto'
import http from 'node:http'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import yazl from 'yazl'

const BLOCK = 1024 * 1024

/** Pseudo-random bytes, `size` in total, from one random block that is never modified once yielded. */
async function* filler(size: number): AsyncGenerator<Buffer> {
  const block = randomBytes(BLOCK)
  for (let left = size; left > 0; left -= BLOCK) yield left >= BLOCK ? block : block.subarray(0, left)
}

/**
 * A ZIP of about `totalBytes`: a stored pack.mcmeta (pack_format `packFormat`)
 * and one stored entry of filler. Stored, not deflated, so the size is what was asked.
 */
export function bigZip(totalBytes: number, packFormat = 48): NodeJS.ReadableStream {
  const archive = new yazl.ZipFile()
  const meta = Buffer.from(JSON.stringify({ pack: { pack_format: packFormat, description: 'benchmark pack' } }))
  archive.addBuffer(meta, 'pack.mcmeta', { compress: false })
  // Local header, data descriptor, central directory and end record take well under 4 KiB.
  const size = totalBytes - meta.length - 4096
  archive.addReadStreamLazy('data/bench/big.bin', { compress: false, size }, (cb) => cb(null, Readable.from(filler(size))))
  archive.end()
  return archive.outputStream
}

export interface StreamedUpload {
  status: number
  body: string
  /** Bytes of the file part (the archive itself), and their SHA-256. */
  fileBytes: number
  sha256: string
  seconds: number
}

/**
 * POSTs `fields` then one file part named `file` as multipart/form-data with
 * chunked transfer (no Content-Length), piping `file` through as it is produced.
 */
export async function streamUpload(options: {
  url: string
  headers: Record<string, string>
  fields: Record<string, string>
  filename: string
  file: NodeJS.ReadableStream
}): Promise<StreamedUpload> {
  const boundary = `----packsbench${randomBytes(12).toString('hex')}`
  const hash = createHash('sha256')
  let fileBytes = 0

  async function* body(): AsyncGenerator<Buffer> {
    for (const [name, value] of Object.entries(options.fields)) {
      yield Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`)
    }
    yield Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${options.filename}"\r\n` +
        'Content-Type: application/zip\r\n\r\n',
    )
    for await (const chunk of options.file as AsyncIterable<Buffer>) {
      fileBytes += chunk.length
      hash.update(chunk)
      yield chunk
    }
    yield Buffer.from(`\r\n--${boundary}--\r\n`)
  }

  const started = process.hrtime.bigint()
  const request = http.request(options.url, {
    method: 'POST',
    headers: { ...options.headers, 'content-type': `multipart/form-data; boundary=${boundary}`, 'transfer-encoding': 'chunked' },
  })
  const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
    request.once('response', (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => { text += chunk })
      res.once('end', () => resolve({ status: res.statusCode ?? 0, body: text }))
      res.once('error', reject)
    })
    request.once('error', reject)
  })
  // A server that answers early (413, 400) may close the socket mid-body; its answer is what counts.
  const sent = pipeline(Readable.from(body()), request).catch((error: unknown) => error)
  const result = await response
  // An early answer (413, 400) may leave the rest of the body unread; stop sending it.
  if (result.status !== 200) request.destroy()
  const sendError = await sent
  const seconds = Number(process.hrtime.bigint() - started) / 1e9
  if (result.status === 200 && sendError) throw sendError
  return { ...result, fileBytes, sha256: hash.digest('hex'), seconds }
}
