// A large, valid version archive made on the fly, and a multipart upload that
// streams it with chunked transfer encoding: neither side of the benchmark ever
// holds the archive in memory, so the server's memory is all that grows.
import { createHash, randomBytes } from 'node:crypto'
import http from 'node:http'
import fs from 'node:fs'
import path from 'node:path'
import { spawn } from 'node:child_process'
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

/** A multipart body written to a file once, so every upload of a run sends the same bytes as fast as curl reads them. */
export interface MultipartFile {
  path: string
  boundary: string
  /** Bytes of the file part (the archive itself), and their SHA-256. */
  fileBytes: number
  sha256: string
}

export async function writeMultipartFile(target: string, fields: Record<string, string>, filename: string, file: NodeJS.ReadableStream): Promise<MultipartFile> {
  const boundary = `----packsbench${randomBytes(12).toString('hex')}`
  const hash = createHash('sha256')
  let fileBytes = 0
  async function* body(): AsyncGenerator<Buffer> {
    for (const [name, value] of Object.entries(fields)) {
      yield Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`)
    }
    yield Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: application/zip\r\n\r\n`)
    for await (const chunk of file as AsyncIterable<Buffer>) {
      fileBytes += chunk.length
      hash.update(chunk)
      yield chunk
    }
    yield Buffer.from(`\r\n--${boundary}--\r\n`)
  }
  await pipeline(Readable.from(body()), fs.createWriteStream(target))
  return { path: target, boundary, fileBytes, sha256: hash.digest('hex') }
}

/**
 * POSTs the file with curl (what a user's script or CI job would use), its
 * headers from a file readable only by us (a token must not sit in argv).
 */
export async function curlUpload(url: string, headers: Record<string, string>, body: MultipartFile): Promise<{ status: number; body: string; seconds: number }> {
  const dir = path.dirname(body.path)
  const headerFile = path.join(dir, `headers-${randomBytes(4).toString('hex')}.txt`)
  const responseFile = path.join(dir, `response-${randomBytes(4).toString('hex')}.txt`)
  const lines = Object.entries({ ...headers, 'content-type': `multipart/form-data; boundary=${body.boundary}`, expect: '' })
    .map(([name, value]) => `${name}: ${value}`)
  fs.writeFileSync(headerFile, `${lines.join('\n')}\n`, { mode: 0o600 })
  try {
    const out = await new Promise<string>((resolve, reject) => {
      const child = spawn('curl', ['-sS', '-o', responseFile, '-w', '%{http_code} %{time_total}', '-H', `@${headerFile}`, '--data-binary', `@${body.path}`, url], { stdio: ['ignore', 'pipe', 'pipe'] })
      let text = ''
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => { text += chunk })
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => { text += chunk })
      child.once('error', reject)
      child.once('close', (code) => (code === 0 ? resolve(text) : reject(new Error(`curl exited with ${code}: ${text}`))))
    })
    const [status, seconds] = out.trim().split(' ')
    return { status: Number(status), seconds: Number(seconds), body: fs.readFileSync(responseFile, 'utf8') }
  } finally {
    fs.rmSync(headerFile, { force: true })
    fs.rmSync(responseFile, { force: true })
  }
}
