// The baseline of the update-check benchmark: a bare node:http server that
// answers every request with the same bytes our server sends for
// GET /api/packs/{namespace}/{pack_id}/latest. Runs in its own process (like our
// server) so it never shares an event loop with the load generator.
// Input: BENCH_BODY_B64 (the body), BENCH_CONTENT_TYPE, and BENCH_HEADERS_JSON: the
// header fields our server sent ([[name, value], ...]), so the baseline writes
// the same bytes, headers included (Node adds Date and Connection to both).
// Output: its port on stdout.
import { createHash } from 'node:crypto'
import fs from 'node:fs'
import http from 'node:http'
import path from 'node:path'

const body = Buffer.from(process.env.BENCH_BODY_B64 ?? '', 'base64')
const contentType = process.env.BENCH_CONTENT_TYPE ?? 'application/json'
if (body.length === 0 && !process.env.BENCH_SINK?.match(/^(1|store)$/)) {
  process.stderr.write('bare-server: BENCH_BODY_B64 is empty\n')
  process.exit(1)
}

const sameHeaders = process.env.BENCH_HEADERS_JSON ? (JSON.parse(process.env.BENCH_HEADERS_JSON) as [string, string][]).flat() : undefined

// BENCH_NOT_MODIFIED=1: the baseline of the conditional update-check, a 304 with no body.
const notModified = process.env.BENCH_NOT_MODIFIED === '1'

// BENCH_SINK=1: the upload's baseline, a server that reads the whole body, discards it, and answers.
const sink = process.env.BENCH_SINK === '1'

// BENCH_SINK=store: the upload's floor, the least an upload that streams to disk and hashes both can cost: the
// body's bytes (multipart framing and all) hashed with SHA-256 and SHA-1 and written to a file in BENCH_STORE_DIR
// (512 KiB of write buffer, as the local store has), and the digests sent back. The file is kept, as Packs keeps
// an upload (the bench removes its directory at the end): removing it here would count the freeing of its
// cached pages in the floor's CPU.
const store = process.env.BENCH_SINK === 'store'
const storeDir = process.env.BENCH_STORE_DIR ?? ''
if (store && !storeDir) {
  process.stderr.write('bare-server: BENCH_STORE_DIR is not set\n')
  process.exit(1)
}
let stored = 0

function storeBody(request: http.IncomingMessage, response: http.ServerResponse): void {
  const file = path.join(storeDir, `upload-${++stored}`)
  const sha256 = createHash('sha256')
  const sha1 = createHash('sha1')
  const out = fs.createWriteStream(file, { flags: 'wx', highWaterMark: 512 * 1024 })
  request.on('data', (chunk: Buffer) => {
    sha256.update(chunk)
    sha1.update(chunk)
    if (!out.write(chunk)) {
      request.pause()
      out.once('drain', () => request.resume())
    }
  })
  request.once('end', () => out.end(() => {
    const answer = JSON.stringify({ sha256: sha256.digest('hex'), sha1: sha1.digest('hex') })
    response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(answer) })
    response.end(answer)
  }))
}

const server = http.createServer((request, response) => {
  if (store) return storeBody(request, response)
  if (sink) {
    request.on('data', () => {}).once('end', () => {
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': 2 })
      response.end('{}')
    })
    return
  }
  // Drain whatever the client sent, as any real server must.
  request.resume()
  if (notModified) {
    response.writeHead(304, sameHeaders ?? { etag: '"bench"' })
    return response.end()
  }
  response.writeHead(200, sameHeaders ?? { 'content-type': contentType, 'content-length': body.length })
  response.end(body)
})

server.listen(0, '127.0.0.1', () => {
  const address = server.address()
  process.stdout.write(`${typeof address === 'object' && address ? address.port : 0}\n`)
})

process.on('SIGTERM', () => {
  server.closeAllConnections()
  server.close(() => process.exit(0))
})
