import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { expectError, siteWith, type TestSite, type TestUser } from '../helpers/app.js'
import { mp4, multipart, png } from '../helpers/fixtures.js'

interface Uploaded {
  uuid: string
  url: string
}

async function upload(site: TestSite, user: TestUser, file: Buffer, filename: string, kind = 'media'): Promise<Uploaded> {
  const form = multipart([{ name: 'kind', value: kind }, { name: 'file', value: file, filename }])
  const res = await site.app.inject({ method: 'POST', url: '/api/uploads/', headers: { ...user.headers, ...form.headers }, payload: form.payload })
  assert.equal(res.statusCode, 200, res.body)
  return res.json() as Uploaded
}

describe('GET /api/files/{file_id}/', () => {
  let site: TestSite
  let alice: TestUser
  // Big enough that ranges land in the middle of real bytes, and every byte differs from its neighbours.
  const image = png(40, 30, [10, 200, 30])
  let imageUrl: string

  before(async () => {
    ;({ site, alice } = await siteWith({ users: ['alice'] }))
    imageUrl = (await upload(site, alice, image, 'Grüße ✓.png')).url
  })
  after(() => site.close())

  const get = (url: string, headers: Record<string, string> = {}) =>
    site.app.inject({ method: 'GET', url, headers: { ...site.gate, ...headers } })

  test('serves the exact bytes inline with the detected type and sandboxing headers', async () => {
    const res = await get(imageUrl)
    assert.equal(res.statusCode, 200)
    assert.ok(res.rawPayload.equals(image), 'bytes identical to the upload')
    assert.equal(res.headers['content-type'], 'image/png')
    assert.equal(res.headers['content-length'], String(image.length))
    assert.equal(res.headers['accept-ranges'], 'bytes')
    assert.equal(res.headers['x-content-type-options'], 'nosniff')
    const csp = String(res.headers['content-security-policy'])
    assert.match(csp, /default-src 'none'/)
    assert.match(csp, /\bsandbox\b/)
    assert.doesNotMatch(csp, /script-src/)
    assert.match(String(res.headers['content-disposition']), /^inline;/)
    assert.ok(res.headers['last-modified'] && !Number.isNaN(Date.parse(String(res.headers['last-modified']))))
    assert.match(String(res.headers['cache-control']), /private/)
  })

  test('download=1 is an octet-stream attachment with an RFC 5987 name', async () => {
    const res = await get(`${imageUrl}?download=1`)
    assert.equal(res.statusCode, 200)
    assert.equal(res.headers['content-type'], 'application/octet-stream')
    const disposition = String(res.headers['content-disposition'])
    assert.match(disposition, /^attachment;/)
    assert.ok(disposition.includes(`filename*=UTF-8''Gr%C3%BC%C3%9Fe%20%E2%9C%93.png`), disposition)
    // The plain fallback is ASCII only, so old clients still get a usable name.
    const fallback = /filename="([^"]*)"/.exec(disposition)?.[1]
    assert.ok(fallback && /^[\x20-\x7e]+$/.test(fallback) && fallback.endsWith('.png'), disposition)
    assert.ok(res.rawPayload.equals(image))
    assert.equal(res.headers['x-content-type-options'], 'nosniff')
    assert.ok(res.headers['content-security-policy'])
  })

  test('any other download value stays inline', async () => {
    const res = await get(`${imageUrl}?download=0`)
    assert.match(String(res.headers['content-disposition']), /^inline;/)
    assert.equal(res.headers['content-type'], 'image/png')
  })

  test('strong ETag is the SHA-256 of the bytes; If-None-Match gives 304 without a body', async () => {
    const first = await get(imageUrl)
    const etag = String(first.headers.etag)
    assert.equal(etag, `"${createHash('sha256').update(image).digest('hex')}"`)

    for (const condition of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const res = await get(imageUrl, { 'if-none-match': condition })
      assert.equal(res.statusCode, 304, `If-None-Match: ${condition}`)
      assert.equal(res.rawPayload.length, 0)
      assert.equal(res.headers.etag, etag)
    }
    const changed = await get(imageUrl, { 'if-none-match': '"not-this-one"' })
    assert.equal(changed.statusCode, 200)
    assert.ok(changed.rawPayload.equals(image))
  })

  test('a byte range gives 206 with the right slice and Content-Range', async () => {
    const res = await get(imageUrl, { range: 'bytes=10-29' })
    assert.equal(res.statusCode, 206)
    assert.ok(res.rawPayload.equals(image.subarray(10, 30)))
    assert.equal(res.headers['content-range'], `bytes 10-29/${image.length}`)
    assert.equal(res.headers['content-length'], '20')
    assert.equal(res.headers['content-type'], 'image/png')
  })

  test('open-ended, suffix and over-long ranges', async () => {
    const open = await get(imageUrl, { range: 'bytes=50-' })
    assert.equal(open.statusCode, 206)
    assert.ok(open.rawPayload.equals(image.subarray(50)))
    assert.equal(open.headers['content-range'], `bytes 50-${image.length - 1}/${image.length}`)

    const suffix = await get(imageUrl, { range: 'bytes=-7' })
    assert.equal(suffix.statusCode, 206)
    assert.ok(suffix.rawPayload.equals(image.subarray(image.length - 7)))
    assert.equal(suffix.headers['content-range'], `bytes ${image.length - 7}-${image.length - 1}/${image.length}`)

    const clipped = await get(imageUrl, { range: `bytes=5-${image.length + 100}` })
    assert.equal(clipped.statusCode, 206)
    assert.ok(clipped.rawPayload.equals(image.subarray(5)))

    const wholeSuffix = await get(imageUrl, { range: `bytes=-${image.length * 2}` })
    assert.equal(wholeSuffix.statusCode, 206)
    assert.ok(wholeSuffix.rawPayload.equals(image))
  })

  test('an unsatisfiable range is 416 with the size', async () => {
    for (const range of [`bytes=${image.length}-`, `bytes=${image.length + 5}-${image.length + 9}`, 'bytes=-0']) {
      const res = await get(imageUrl, { range })
      expectError(res, 416, /range/)
      assert.equal(res.headers['content-range'], `bytes */${image.length}`, range)
    }
  })

  test('several ranges, other units and malformed ranges are ignored: the whole file', async () => {
    for (const range of ['bytes=0-1,5-6', 'items=0-1', 'bytes=abc', 'bytes=9-3', 'bytes=-', 'garbage']) {
      const res = await get(imageUrl, { range })
      assert.equal(res.statusCode, 200, range)
      assert.ok(res.rawPayload.equals(image), range)
      assert.equal(res.headers['content-range'], undefined)
    }
  })

  test('If-Range: the matching ETag keeps the range, another one sends the whole file', async () => {
    const etag = String((await get(imageUrl)).headers.etag)
    const same = await get(imageUrl, { range: 'bytes=0-3', 'if-range': etag })
    assert.equal(same.statusCode, 206)
    assert.ok(same.rawPayload.equals(image.subarray(0, 4)))
    const stale = await get(imageUrl, { range: 'bytes=0-3', 'if-range': '"stale"' })
    assert.equal(stale.statusCode, 200)
    assert.ok(stale.rawPayload.equals(image))
  })

  test('HEAD gives the headers of GET and no body', async () => {
    const res = await site.app.inject({ method: 'HEAD', url: imageUrl, headers: site.gate })
    assert.equal(res.statusCode, 200)
    assert.equal(res.rawPayload.length, 0)
    assert.equal(res.headers['content-length'], String(image.length))
    assert.equal(res.headers['content-type'], 'image/png')
    assert.ok(res.headers.etag)
    assert.equal(res.headers['x-content-type-options'], 'nosniff')
    assert.ok(res.headers['content-security-policy'])
    const conditional = await site.app.inject({ method: 'HEAD', url: imageUrl, headers: { ...site.gate, 'if-none-match': String(res.headers.etag) } })
    assert.equal(conditional.statusCode, 304)
    const missing = await site.app.inject({ method: 'HEAD', url: '/api/files/00000000-0000-4000-8000-000000000000/', headers: site.gate })
    assert.equal(missing.statusCode, 404)
  })

  test('answers without the trailing slash too', async () => {
    const res = await get(imageUrl.replace(/\/$/, ''))
    assert.equal(res.statusCode, 200)
    assert.ok(res.rawPayload.equals(image))
  })

  test('a missing file is 404', async () => {
    expectError(await get('/api/files/00000000-0000-4000-8000-000000000000/'), 404, /not found/)
  })

  test('a malformed id is 404, not 400 or 500', async () => {
    for (const id of ['not-a-uuid', '123', '..%2F..%2Fetc', '%E0%A4%A', 'a'.repeat(500)]) {
      expectError(await get(`/api/files/${id}/`), 404)
    }
  })

  test('without the gate: 401; a bad token: 401 even here', async () => {
    expectError(await site.app.inject({ method: 'GET', url: imageUrl }), 401)
    expectError(await site.app.inject({ method: 'GET', url: imageUrl, headers: { authorization: 'Bearer alice wrong-token' } }), 401)
    expectError(await site.app.inject({ method: 'GET', url: imageUrl, headers: { 'x-master-password': 'wrong' } }), 401)
  })

  test('the gate alone is enough, and so is a token', async () => {
    assert.equal((await site.app.inject({ method: 'GET', url: imageUrl, headers: site.gate })).statusCode, 200)
    const bob = await site.user('bob')
    // Files are not owner-scoped: anyone past the gate may fetch one (pack media is public on the site).
    assert.equal((await site.app.inject({ method: 'GET', url: imageUrl, headers: bob.headers })).statusCode, 200)
  })

  test('video media is served with its detected type', async () => {
    const video = await upload(site, alice, mp4(), 'clip.bin')
    const res = await get(video.url)
    assert.equal(res.headers['content-type'], 'video/mp4')
    assert.ok(res.rawPayload.equals(mp4()))
  })

  test('is in /api/schema/ with 200 (binary), 401 and 404', async () => {
    const doc = (await get('/api/schema/')).json() as { paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, unknown> }>; parameters: { name: string; in: string }[]; security?: unknown }>> }
    const op = doc.paths['/api/files/{file_id}/']?.get
    assert.ok(op, 'GET /api/files/{file_id}/ documented')
    assert.ok(op.responses['200']?.content?.['application/octet-stream'])
    assert.ok(op.responses['401'])
    assert.ok(op.responses['404'])
    assert.deepEqual(op.parameters.map((p) => `${p.in}:${p.name}`).sort(), ['path:file_id', 'query:download'])
    assert.equal(op.security, undefined, 'the file endpoint does not declare token auth: the gate is enough')
  })
})
