// The baseline of the update-check benchmark: a bare node:http server that
// answers every request with the same bytes our server sends for
// GET /api/packs/{namespace}/{pack_id}/latest. Runs in its own process (like our
// server) so it never shares an event loop with the load generator.
// Input: BENCH_BODY_B64 (the body), BENCH_CONTENT_TYPE, and BENCH_HEADERS_JSON: the
// header fields our server sent ([[name, value], ...]), so the baseline writes
// the same bytes, headers included (Node adds Date and Connection to both).
// Output: its port on stdout.
import http from 'node:http'

const body = Buffer.from(process.env.BENCH_BODY_B64 ?? '', 'base64')
const contentType = process.env.BENCH_CONTENT_TYPE ?? 'application/json'
if (body.length === 0 && process.env.BENCH_SINK !== '1') {
  process.stderr.write('bare-server: BENCH_BODY_B64 is empty\n')
  process.exit(1)
}

const sameHeaders = process.env.BENCH_HEADERS_JSON ? (JSON.parse(process.env.BENCH_HEADERS_JSON) as [string, string][]).flat() : undefined

// BENCH_NOT_MODIFIED=1: the baseline of the conditional update-check, a 304 with no body.
const notModified = process.env.BENCH_NOT_MODIFIED === '1'

// BENCH_SINK=1: the upload's baseline, a server that reads the whole body, discards it, and answers.
const sink = process.env.BENCH_SINK === '1'

const server = http.createServer((request, response) => {
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
