// The short pass over a real socket, for what app.inject cannot send: a raw
// request line (dot segments, spaces, bytes that are not ASCII), Host missing,
// doubled or long, headers folded or with control characters, conflicting
// lengths and broken chunking, and bodies that stop short, drip in or are
// cut off mid-upload by a client that goes away.
import net from 'node:net'
import fc from 'fast-check'
import type { AddressInfo } from 'node:net'
import { isApiUrl, mask } from './run.js'
import type { FuzzSite } from './site.js'
import type { BlobName } from './model.js'

export interface RawCase {
  target: number
  version: 'HTTP/1.1' | 'HTTP/1.0' | 'HTTP/1.2' | 'HTTP/2.0' | 'http/1.1'
  host: 'normal' | 'missing' | 'twice' | 'long' | 'spaces' | 'empty' | 'control'
  auth: 'gate' | 'alice' | 'none'
  odd: ('range-ws' | 'range-fold' | 'nul-header' | 'no-colon' | 'space-name' | 'long-header' | 'many-headers' | 'ims-junk')[]
  body: 'none' | 'upload' | 'json'
  blob: BlobName
  framing: 'length' | 'chunked' | 'chunked-bad' | 'both' | 'two-lengths' | 'length-negative'
  delivery: 'complete' | 'short-end' | 'short-destroy' | 'drip' | 'expect' | 'epilogue'
}

export interface RawFinding {
  key: string
  note: string
}

// Targets as they go on the wire, unnormalised; {pack}, {file} are the site's own.
const TARGETS = [
  '/api/packs/alice/{pack}/latest', '/api/files/{file}/', '/api/uploads/', '/api/draft/', '/gate/', '/healthz', '/',
  '/api/../gate/', '/api/%2e%2e/healthz', '/api/packs/alice/x/../../../healthz', '//api//packs//', '/api/files/\u00ff/',
  '/api/packs/a b/x/latest', 'http://evil.example/api/packs/', '*', '/api/packs/%00/%00/latest', `/api/packs/${'a'.repeat(12_000)}/x/latest`,
  '/api/packs/alice/{pack}/latest?\u00e9=\u00e9', '/api/files/{file}/?download=1&download=%ff', '/api/draft/?draft=%ED%A0%80',
  '/packs/alice/{pack}/', '/api/packs/alice/{pack}/versions/', '/assets/..%2f..%2fpackage.json', '/api/docs/static/..%2f..%2f',
]

export const rawCase: fc.Arbitrary<RawCase> = fc.record({
  target: fc.nat(TARGETS.length - 1),
  version: fc.oneof({ weight: 12, arbitrary: fc.constant('HTTP/1.1' as const) },
    { weight: 1, arbitrary: fc.constantFrom('HTTP/1.0' as const, 'HTTP/1.2' as const, 'HTTP/2.0' as const, 'http/1.1' as const) }),
  host: fc.oneof({ weight: 6, arbitrary: fc.constant('normal' as const) },
    { weight: 1, arbitrary: fc.constantFrom('missing' as const, 'twice' as const, 'long' as const, 'spaces' as const, 'empty' as const, 'control' as const) }),
  auth: fc.constantFrom('gate' as const, 'alice' as const, 'alice' as const, 'none' as const),
  odd: fc.oneof({ weight: 3, arbitrary: fc.constant<RawCase['odd']>([]) },
    { weight: 2, arbitrary: fc.subarray<RawCase['odd'][number]>(['range-ws', 'range-fold', 'nul-header', 'no-colon', 'space-name', 'long-header', 'many-headers', 'ims-junk'], { maxLength: 2 }) }),
  body: fc.constantFrom('none' as const, 'upload' as const, 'upload' as const, 'json' as const),
  blob: fc.constantFrom('png' as const, 'zip' as const, 'zipManyEntries' as const, 'big' as const),
  framing: fc.oneof({ weight: 6, arbitrary: fc.constant('length' as const) },
    { weight: 1, arbitrary: fc.constantFrom('chunked' as const, 'chunked-bad' as const, 'both' as const, 'two-lengths' as const, 'length-negative' as const) }),
  delivery: fc.oneof({ weight: 3, arbitrary: fc.constant('complete' as const) },
    { weight: 1, arbitrary: fc.constantFrom('short-end' as const, 'short-destroy' as const, 'drip' as const, 'expect' as const, 'epilogue' as const) }),
})

function requestBytes(c: RawCase, fz: FuzzSite): { head: Buffer; body: Buffer; target: string; method: string } {
  const target = TARGETS[c.target]!.replace('{pack}', fz.refs.packId).replace('{file}', fz.refs.fileVersion)
  const upload = c.body === 'upload'
  const method = c.body === 'none' ? 'GET' : target.includes('/draft/') && !upload ? 'POST' : 'POST'
  let body = Buffer.alloc(0)
  let contentType: string | undefined
  if (upload) {
    const boundary = '----rawfuzz7d3a'
    body = Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="kind"\r\n\r\n${c.blob.startsWith('zip') || c.blob === 'big' ? 'version' : 'thumbnail'}\r\n`),
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="f.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`),
      fz.blobs[c.blob], Buffer.from(`\r\n--${boundary}--\r\n`),
      // RFC 2046 allows an epilogue after the closing delimiter; it may come in a later packet.
      ...(c.delivery === 'epilogue' ? [Buffer.from('an epilogue, sent a moment later\r\n')] : []),
    ])
    contentType = `multipart/form-data; boundary=${boundary}`
  } else if (c.body === 'json') {
    body = Buffer.from(JSON.stringify({ draft: fz.refs.draftPartial, data: { title: 'raw' } }))
    contentType = 'application/json'
  }
  const lines = [`${method} ${target} ${c.version}`]
  const host = {
    normal: ['Host: localhost'], missing: [], twice: ['Host: localhost', 'Host: evil.example'], long: [`Host: ${'h'.repeat(12_000)}`],
    spaces: ['Host: local host'], empty: ['Host:'], control: ['Host: local\u0001host'],
  }[c.host]
  lines.push(...host, 'Connection: close')
  if (c.auth === 'gate') lines.push(`X-Master-Password: ${fz.refs.masterPassword}`)
  if (c.auth === 'alice') lines.push(`Authorization: Bearer alice ${fz.refs.aliceToken}`)
  for (const odd of c.odd) {
    if (odd === 'range-ws') lines.push(`Range: bytes=${'\t'.repeat(1500)}0-${'\t'.repeat(1500)}x`)
    if (odd === 'range-fold') lines.push('Range: bytes=0-0', '\t,1-1')
    if (odd === 'nul-header') lines.push('X-Nul: a\u0000b')
    if (odd === 'no-colon') lines.push('NoColonHere')
    if (odd === 'space-name') lines.push('Range : bytes=0-0')
    if (odd === 'long-header') lines.push(`X-Long: ${'l'.repeat(15_000)}`)
    if (odd === 'many-headers') for (let i = 0; i < 3000; i++) lines.push(`X-H${i}: v`)
    if (odd === 'ims-junk') lines.push('If-Modified-Since: Mon, 99 Foo 99999 99:99:99 GMT', 'If-None-Match: "', 'If-Range: ""')
  }
  if (contentType) lines.push(`Content-Type: ${contentType}`)
  if (c.delivery === 'expect' && body.length) lines.push('Expect: 100-continue')
  let framed = body
  if (body.length || method === 'POST') {
    const length = body.length
    if (c.framing === 'length') lines.push(`Content-Length: ${length}`)
    if (c.framing === 'chunked' || c.framing === 'chunked-bad') {
      lines.push('Transfer-Encoding: chunked')
      framed = c.framing === 'chunked'
        ? Buffer.concat([Buffer.from(`${length.toString(16)}\r\n`), body, Buffer.from('\r\n0\r\n\r\n')])
        : Buffer.concat([Buffer.from('zz\r\n'), body, Buffer.from('\r\nffffffffffffffffff\r\n')])
    }
    if (c.framing === 'both') {
      lines.push(`Content-Length: ${length}`, 'Transfer-Encoding: chunked')
      framed = Buffer.concat([Buffer.from(`${length.toString(16)}\r\n`), body, Buffer.from('\r\n0\r\n\r\n')])
    }
    if (c.framing === 'two-lengths') lines.push(`Content-Length: ${length}`, `Content-Length: ${length + 1}`)
    if (c.framing === 'length-negative') lines.push('Content-Length: -1')
  }
  // latin1: the request line and headers go out byte for byte as written (é is one byte, 0xE9).
  return { head: Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), body: framed, target, method }
}

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
/** A delay for a race with a socket's close: its timer does not hold the process open once the close has won. */
const giveUpAfter = (ms: number) => new Promise((resolve) => { setTimeout(resolve, ms).unref() })

/** Sends one raw case; answers with the response bytes seen (maybe none) and whether the request was sent whole. */
async function send(port: number, c: RawCase, fz: FuzzSite): Promise<{ response: string; complete: boolean; target: string }> {
  const { head, body, target } = requestBytes(c, fz)
  const socket = net.connect(port, '127.0.0.1')
  const chunks: Buffer[] = []
  socket.on('data', (chunk: Buffer) => chunks.push(chunk))
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()))
  socket.on('error', () => {})
  await new Promise<void>((resolve, reject) => { socket.once('connect', resolve); socket.once('error', reject) })
  const write = (data: Buffer) => new Promise<void>((resolve) => (socket.destroyed ? resolve() : socket.write(data, () => resolve())))
  let complete = true
  await write(head)
  if (c.delivery === 'expect') await delay(50)
  if (c.delivery === 'complete' || c.delivery === 'expect') await write(body)
  if (c.delivery === 'epilogue') {
    const epilogue = c.body === 'upload' && c.framing === 'length' ? Buffer.byteLength('an epilogue, sent a moment later\r\n') : 0
    await write(body.subarray(0, body.length - epilogue))
    await delay(50)
    await write(body.subarray(body.length - epilogue))
  }
  if (c.delivery === 'drip') {
    const step = Math.max(1, Math.ceil(body.length / 5))
    for (let at = 0; at < body.length; at += step) {
      await write(body.subarray(at, at + step))
      await delay(30)
    }
  }
  if (c.delivery === 'short-end' || c.delivery === 'short-destroy') {
    complete = body.length === 0 && c.delivery === 'short-end'
    await write(body.subarray(0, Math.floor(body.length / 2)))
    await delay(30)
    if (c.delivery === 'short-destroy') socket.destroy()
    else socket.end()
  }
  // A whole request must be answered (Connection: close ends it); a broken one may be answered or left.
  const wait = complete ? 10_000 : 700
  await Promise.race([closed, giveUpAfter(wait)])
  socket.destroy()
  return { response: Buffer.concat(chunks).toString('latin1'), complete, target }
}

export async function rawPass(fz: FuzzSite, seed: number, runs: number): Promise<{ findings: Map<string, RawFinding & { count: number; example: string }>; seconds: number; runs: number }> {
  const started = performance.now()
  if (!fz.app.server.listening) await fz.app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = fz.app.server.address() as AddressInfo
  const findings = new Map<string, RawFinding & { count: number; example: string }>()
  const note = (key: string, text: string, c: RawCase) => {
    const known = findings.get(key)
    if (known) known.count++
    else findings.set(key, { key, note: text, count: 1, example: fc.stringify(c) })
  }
  await fc.check(fc.asyncProperty(rawCase, async (c) => {
    fz.log.take()
    const startedCase = performance.now()
    const { response, complete, target } = await send(port, c, fz)
    const ms = performance.now() - startedCase
    const logs = fz.log.take()
    const status = /^HTTP\/1\.[01] (\d{3})/.exec(response)?.[1]
    const code = status === undefined ? undefined : Number(status)
    const label = `${c.body === 'none' ? 'GET' : 'POST'} ${TARGETS[c.target]!.slice(0, 60)}`
    const error = logs.find((e) => e.level >= 50)
    if (code !== undefined && code >= 500) {
      note(`raw 5xx | ${label} | ${code} | ${mask(error ? `${error.msg}: ${error.err?.message}` : response.split('\r\n\r\n')[1] ?? '')}`, response.slice(0, 400), c)
    }
    if (code === undefined && complete && c.host === 'normal' && c.odd.length === 0 && c.version === 'HTTP/1.1') {
      note(`raw no answer | ${label}`, `no response in ${Math.round(ms)} ms to a complete request`, c)
    }
    if (code !== undefined && code >= 400 && code < 500 && isApiUrl(target)) {
      const [headers = '', payload = ''] = response.split('\r\n\r\n')
      let detail: unknown
      try {
        detail = (JSON.parse(payload) as { detail?: unknown }).detail
      } catch {
        detail = undefined
      }
      if (typeof detail !== 'string' && !/content-length: 0/i.test(headers)) {
        note(`raw no-detail | ${label} | ${code} | ${mask(payload)}`, response.slice(0, 300), c)
      }
    }
    if (error && (code === undefined || code < 500)) note(`raw error-logged | ${label} | ${mask(`${error.msg}: ${error.err?.message ?? ''}`)}`, error.err?.stack?.slice(0, 600) ?? error.msg, c)
    if (ms > 5000 && complete) note(`raw slow | ${label}`, `${Math.round(ms)} ms`, c)
    return true
  }), { seed, numRuns: runs })
  return { findings, seconds: (performance.now() - started) / 1000, runs }
}
