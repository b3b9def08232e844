// Serving a stored file over a real socket, many chunks long, to several
// clients at once: whole, in ranges, to a slow reader whose socket fills up,
// and to one that hangs up midway: every client must get exactly the stored
// bytes. It caught read buffers reused too early on Node 26 (docs/benchmarks.md,
// the 100 MiB download). Both combinations (S3 streams its own buffers).
import assert from 'node:assert/strict'
import { createHash, randomBytes } from 'node:crypto'
import http from 'node:http'
import { after, before, test } from 'node:test'
import { siteWith, type TestSite } from '../helpers/app.js'
import { datapack } from '../helpers/fixtures.js'
import { upload } from '../helpers/packs.js'

let site: TestSite
let archive: Buffer
let url: string
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex')

before(async () => {
  const made = await siteWith({ users: ['carol'] })
  site = made.site
  // About 6 MiB that does not compress: a dozen of the server's 512 KiB reads.
  archive = await datapack(48, { 'data/carol/big.txt': randomBytes(6_000_000).toString('base64') })
  assert.ok(archive.length > 5.5 * 1024 * 1024, `${archive.length} bytes`)
  const uploaded = await upload(site, made.carol, 'version', archive)
  await site.app.listen({ port: 0, host: '127.0.0.1' })
  const address = site.app.server.address()
  assert.ok(address && typeof address === 'object')
  url = `http://127.0.0.1:${address.port}/api/files/${uploaded.fileId}/?download=1`
})
after(() => site.close())

/** The body of one GET, read slowly when `pauseMs` is given (the socket's buffers fill and the server waits). */
function get(headers: Record<string, string>, pauseMs = 0): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { headers: { ...site.gate, ...headers } }, (response) => {
      const chunks: Buffer[] = []
      response.on('data', (chunk: Buffer) => {
        chunks.push(chunk)
        if (pauseMs > 0) {
          response.pause()
          setTimeout(() => response.resume(), pauseMs)
        }
      })
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks) }))
      response.on('error', reject)
    })
    request.on('error', reject)
  })
}

test('several clients at once, whole and in ranges, fast and slow, all get exactly the stored bytes', async () => {
  const third = Math.floor(archive.length / 3)
  const [a, b, slow, middle, tail] = await Promise.all([
    get({}),
    get({}),
    get({}, 2),
    get({ range: `bytes=${third}-${2 * third}` }),
    get({ range: `bytes=${archive.length - 700_000}-` }),
  ])
  for (const whole of [a, b, slow]) {
    assert.equal(whole.status, 200)
    assert.equal(sha256(whole.body), sha256(archive))
  }
  assert.equal(middle.status, 206)
  assert.equal(sha256(middle.body), sha256(archive.subarray(third, 2 * third + 1)))
  assert.equal(tail.status, 206)
  assert.equal(sha256(tail.body), sha256(archive.subarray(archive.length - 700_000)))
})

test('a client that hangs up midway leaves the others whole, and the next download is whole too', async () => {
  const gone = new Promise<void>((resolve) => {
    const request = http.get(url, { headers: site.gate }, (response) => {
      let seen = 0
      response.on('data', (chunk: Buffer) => {
        seen += chunk.length
        if (seen > 1024 * 1024) request.destroy()
      })
      response.on('close', () => resolve())
      response.on('error', () => resolve())
    })
    request.on('error', () => resolve())
  })
  const [other] = await Promise.all([get({}, 1), gone])
  assert.equal(sha256(other.body), sha256(archive))
  const again = await get({})
  assert.equal(sha256(again.body), sha256(archive))
})

test('three hundred downloads at once, whole and in random ranges, some read slowly, some cut off: every byte right', async () => {
  // Two files of a few of the server's 512 KiB reads each, so that buffers going back and forth between
  // downloads of different bytes would show.
  const made = await site.user('dora')
  const files = await Promise.all([1_200_000, 1_700_000].map(async (size, i) => {
    const bytes = await datapack(48, { [`data/dora/f${i}.txt`]: randomBytes(size).toString('base64') })
    return { bytes, url: `${new URL(url).origin}/api/files/${(await upload(site, made, 'version', bytes)).fileId}/` }
  }))
  const fetchOne = (target: string, headers: Record<string, string>, pauseMs: number, cutAt: number | null) =>
    new Promise<{ status: number; body: Buffer } | null>((resolve, reject) => {
      const request = http.get(target, { headers: { ...site.gate, ...headers } }, (response) => {
        const chunks: Buffer[] = []
        let seen = 0
        response.on('data', (chunk: Buffer) => {
          chunks.push(chunk)
          seen += chunk.length
          if (cutAt !== null && seen > cutAt) request.destroy()
          else if (pauseMs > 0) {
            response.pause()
            setTimeout(() => response.resume(), pauseMs)
          }
        })
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks) }))
        response.on('close', () => { if (!response.complete) resolve(null) })
      })
      request.on('error', (error: NodeJS.ErrnoException) => (cutAt !== null ? resolve(null) : reject(error)))
    })
  const jobs = Array.from({ length: 300 }, (_, i) => {
    const { bytes, url: target } = files[i % 3 === 0 ? 1 : 0]!
    const ranged = i % 2 === 1
    const from = ranged ? Math.floor(Math.random() * (bytes.length - 1)) : 0
    const to = ranged ? from + Math.floor(Math.random() * (bytes.length - from)) : bytes.length - 1
    const cut = i % 17 === 0 ? 600_000 : null
    return { bytes, ranged, from, to, cut, done: fetchOne(target, ranged ? { range: `bytes=${from}-${to}` } : {}, i % 11 === 0 ? 1 : 0, cut) }
  })
  let checked = 0
  for (const job of jobs) {
    const got = await job.done
    if (job.cut !== null) continue
    assert.ok(got, 'a whole answer')
    assert.equal(got.status, job.ranged ? 206 : 200)
    assert.equal(sha256(got.body), sha256(job.bytes.subarray(job.from, job.to + 1)), `bytes ${job.from}-${job.to}`)
    checked += 1
  }
  assert.ok(checked > 250, `${checked} downloads checked`)
})
