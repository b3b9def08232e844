// GET /metrics over a real socket: what only a listening server shows. The
// update-check's fast path (src/update-check/fast-path.ts) answers before
// Fastify, so its hits are counted apart; bytes are read from the sockets'
// own counters, which app.inject() has none of. test/http/metrics.test.ts
// covers the rest (access, the families, the label bounds).
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import http from 'node:http'
import { randomBytes } from 'node:crypto'
import { MASTER_PASSWORD, siteWith, type TestSite, type TestUser } from '../helpers/app.js'
import { datapack, multipart, mp4 } from '../helpers/fixtures.js'
import { pathOf, publishPack, type PackJson } from '../helpers/packs.js'
import { METRICS_TOKEN, parseExposition, valueOf } from '../helpers/prometheus.js'
import type { PromMetrics } from 'prom2javascript'

let site: TestSite
let alice: TestUser
let pack: PackJson
let archive: Buffer
let port: number

interface Answer { status: number; body: Buffer }

/** One request on its own connection, with exactly these headers. */
function send(method: string, path: string, headers: Record<string, string>, body?: Buffer): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = http.request({ host: '127.0.0.1', port, method, path, headers: { host: `127.0.0.1:${port}`, ...headers }, agent: false }, (response) => {
      const chunks: Buffer[] = []
      response.on('data', (chunk: Buffer) => chunks.push(chunk)).on('end', () => resolve({ status: response.statusCode!, body: Buffer.concat(chunks) }))
    })
    request.once('error', reject).end(body)
  })
}

async function scrape(): Promise<PromMetrics> {
  const res = await send('GET', '/metrics', { authorization: `Bearer ${METRICS_TOKEN}` })
  assert.equal(res.status, 200, res.body.toString())
  return parseExposition(res.body.toString())
}

/** The route label a family uses for paths starting with `prefix`, summed over its methods and statuses. */
function byRoutePrefix(metrics: PromMetrics, name: string, method: string, prefix: string): number {
  return (metrics[name]?.data ?? [])
    .filter((s) => s.labels.method === method && s.labels.route?.startsWith(prefix))
    .reduce((sum, s) => sum + (s as { value: number }).value, 0)
}

before(async () => {
  ;({ site, alice } = await siteWith({ users: ['alice'], env: { PACKS_METRICS_TOKEN: METRICS_TOKEN } }))
  archive = await datapack(48, { 'data/metrics/noise.bin': randomBytes(256 * 1024).toString('base64') })
  pack = await publishPack(site, alice, { title: 'Metered Pack' }, { archive })
  await site.app.listen({ host: '127.0.0.1', port: 0 })
  port = (site.app.server.address() as { port: number }).port
})
after(() => site.close())

test('an update-check answered by the fast path counts as a cache hit on the fast path, and as a request of its route', async () => {
  const latest = `/api/packs/${pack.namespace}/${pack.pack_id}/latest`
  // The first one goes through Fastify and caches the answer; the ones after it are the fast path's.
  assert.equal((await send('GET', latest, { 'x-master-password': MASTER_PASSWORD })).status, 200)
  const before = await scrape()
  const servedBefore = site.app.fastPathServed()
  for (let i = 0; i < 3; i++) assert.equal((await send('GET', latest, { 'x-master-password': MASTER_PASSWORD })).status, 200)
  assert.equal(site.app.fastPathServed() - servedBefore, 3, 'the fast path answered them')
  const after = await scrape()
  const moved = (name: string, labels: Record<string, string>) => valueOf(after, name, labels) - valueOf(before, name, labels)
  assert.equal(moved('packs_update_check_cache_hits_total', { path: 'fast' }), 3)
  assert.equal(moved('packs_update_check_cache_hits_total', { path: 'route' }), 0)
  assert.equal(moved('packs_update_check_cache_misses_total', {}), 0)
  assert.equal(moved('packs_http_requests_total', { method: 'GET', route: '/api/packs/:namespace/:pack_id/latest', status: '200' }), 3)
  // Their bytes are in the connections' totals (no route sees them).
  assert.ok(moved('packs_connection_sent_bytes_total', {}) > 3 * 300, 'three answers of a few hundred bytes went out')
  assert.ok(moved('packs_connection_received_bytes_total', {}) > 3 * 50)
})

test('a download counts its bytes on its route, a ranged one the range\'s; the connections\' totals include them', async () => {
  const url = pathOf(pack.versions[0]!.download_url)
  const before = await scrape()
  const whole = await send('GET', url, { 'x-master-password': MASTER_PASSWORD })
  assert.equal(whole.status, 200)
  assert.ok(whole.body.equals(archive), 'the archive, byte for byte')
  const mid = await scrape()
  const sentWhole = byRoutePrefix(mid, 'packs_http_response_bytes_total', 'GET', '/api/files/') - byRoutePrefix(before, 'packs_http_response_bytes_total', 'GET', '/api/files/')
  // The body and its headers, no more (headers are well under 4 KiB).
  assert.ok(sentWhole >= archive.length && sentWhole < archive.length + 4096, `${sentWhole} bytes counted for ${archive.length}`)
  assert.ok(valueOf(mid, 'packs_connection_sent_bytes_total') - valueOf(before, 'packs_connection_sent_bytes_total') >= archive.length)

  const ranged = await send('GET', url, { 'x-master-password': MASTER_PASSWORD, range: 'bytes=0-999' })
  assert.equal(ranged.status, 206)
  assert.equal(ranged.body.length, 1000)
  const sentRange = byRoutePrefix(await scrape(), 'packs_http_response_bytes_total', 'GET', '/api/files/')
    - byRoutePrefix(mid, 'packs_http_response_bytes_total', 'GET', '/api/files/')
  assert.ok(sentRange >= 1000 && sentRange < 1000 + 4096, `${sentRange} bytes counted for a 1000-byte range`)
})

test('an upload counts the bytes of its request on its route', async () => {
  const file = Buffer.concat([mp4(), randomBytes(512 * 1024)])
  const form = multipart([{ name: 'kind', value: 'media' }, { name: 'file', value: file, filename: 'clip.mp4' }])
  const before = await scrape()
  const res = await send('POST', '/api/uploads/', { ...alice.headers, ...form.headers, 'content-length': String(form.payload.length) }, form.payload)
  assert.equal(res.status, 200, res.body.toString())
  const after = await scrape()
  const received = valueOf(after, 'packs_http_request_bytes_total', { method: 'POST', route: '/api/uploads/' })
    - valueOf(before, 'packs_http_request_bytes_total', { method: 'POST', route: '/api/uploads/' })
  // The body and the request's headers, as read from the socket.
  assert.ok(received >= form.payload.length && received < form.payload.length + 4096, `${received} bytes counted for a body of ${form.payload.length}`)
})
