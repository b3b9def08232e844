// Uploads above S3's part size, through HTTP as an admin or a player's browser
// sends them: with STORAGE_URL=s3://… every upload of 5 MiB
// or more failed with a 500, because lib-storage read the upload's metering
// stream's public `size` field (0) as the body's length and refused the parts
// it had sent. The FileStore contract test (test/backends/storage.test.ts) streams
// 50 MiB straight into the store and so never met the ingest stream; these go
// through POST /api/uploads/ and the new-version route, then download the file
// and compare SHA-256. Each runs against s3rver as published (no
// AbortMultipartUpload: a failure's clean-up answers 405 there) and against the
// patched one of test/helpers/s3.ts, and on local disk unless PACKS_TEST_STORAGE=s3.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { createHash, randomBytes, randomUUID } from 'node:crypto'
import { Readable } from 'node:stream'
import { receiveFile } from '../../src/uploads/ingest.js'
import type { FileStore } from '../../src/storage/index.js'
import { PART_SIZE, S3FileStore } from '../../src/storage/s3.js'
import { expectError, siteWith, type TestSite, type TestUser } from '../helpers/app.js'
import { mp4, png, rawZip, type Part } from '../helpers/fixtures.js'
import { pathOf, publishPack, type PackJson } from '../helpers/packs.js'
import { bucketContents, s3Bucket, s3Selected, stopS3Server, type TestBucket } from '../helpers/s3.js'

const MiB = 1024 * 1024

interface Variant {
  name: string
  /** The site's STORAGE_URL (undefined: makeSite's default, local disk), and its bucket on S3. */
  storage(): Promise<{ env: Record<string, string>; bucket?: TestBucket }>
  /** Whether the server can list pending multipart uploads (the stock s3rver cannot). */
  listsPendingUploads: boolean
}

const variants: Variant[] = [
  ...(s3Selected() ? [] : [{ name: 'local disk', storage: async () => ({ env: {} }), listsPendingUploads: false }]),
  {
    name: 'S3, patched s3rver',
    async storage() {
      const bucket = await s3Bucket()
      return { env: { STORAGE_URL: bucket.storageUrl }, bucket }
    },
    listsPendingUploads: true,
  },
  {
    name: 'S3, stock s3rver',
    async storage() {
      const bucket = await s3Bucket({ stock: true })
      return { env: { STORAGE_URL: bucket.storageUrl }, bucket }
    },
    listsPendingUploads: false,
  },
]

after(() => stopS3Server())

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex')

/** A media file `size` bytes long that the type sniffer calls video/mp4: a real MP4 header, then noise. */
function bigMp4(size: number): Buffer {
  const head = mp4()
  return Buffer.concat([head, randomBytes(size - head.length)])
}

/** A data pack ZIP of at least `size` bytes: pack.mcmeta and one stored (incompressible) entry. */
function bigDatapack(size: number, packFormat = 48): Buffer {
  const meta = Buffer.from(JSON.stringify({ pack: { pack_format: packFormat, description: 'big pack' } }))
  return rawZip([
    { name: 'pack.mcmeta', data: meta },
    { name: 'assets/noise.bin', data: randomBytes(size) },
  ])
}

/**
 * The form as a client sends it over HTTP: multipart/form-data arriving in 64 KiB chunks, with its
 * Content-Length, never copied into one buffer of the whole body (megabytes copied twice per upload otherwise).
 */
function formStream(parts: Part[]): { payload: Readable; headers: Record<string, string> } {
  const boundary = `----packs${randomUUID().replaceAll('-', '')}`
  const CHUNK = 64 * 1024
  const chunks: Buffer[] = []
  for (const part of parts) {
    const file = part.filename === undefined ? '' : `; filename="${part.filename}"\r\nContent-Type: ${part.contentType ?? 'application/octet-stream'}`
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"${file}\r\n\r\n`))
    const value = typeof part.value === 'string' ? Buffer.from(part.value) : part.value
    for (let at = 0; at < value.length; at += CHUNK) chunks.push(value.subarray(at, at + CHUNK))
    chunks.push(Buffer.from('\r\n'))
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`))
  const length = chunks.reduce((total, chunk) => total + chunk.length, 0)
  return { payload: Readable.from(chunks), headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': String(length) } }
}

async function postForm(site: TestSite, user: TestUser, url: string, parts: Part[]) {
  const form = formStream(parts)
  return site.app.inject({ method: 'POST', url, headers: { ...user.headers, ...form.headers }, payload: form.payload })
}

for (const variant of variants) {
  describe(`uploads above the part size: ${variant.name}`, () => {
    let site: TestSite
    let alice: TestUser
    let bucket: TestBucket | undefined

    before(async () => {
      const storage = await variant.storage()
      bucket = storage.bucket
      ;({ site, alice } = await siteWith({ env: storage.env, users: ['alice'] }))
    })
    after(() => site.close())

    /** Objects in the bucket, and (where the server can tell) multipart uploads left pending. */
    async function bucketState(): Promise<{ objects: number; pending: string[] }> {
      if (!bucket) return { objects: 0, pending: [] }
      const client = bucket.client()
      try {
        if (variant.listsPendingUploads) {
          const keys = await bucketContents(client, bucket.bucket)
          return { objects: keys.filter((k) => !k.startsWith('pending-upload:')).length, pending: keys.filter((k) => k.startsWith('pending-upload:')) }
        }
        const { ListObjectsV2Command } = await import('@aws-sdk/client-s3')
        const page = await client.send(new ListObjectsV2Command({ Bucket: bucket.bucket }))
        return { objects: page.KeyCount ?? 0, pending: [] }
      } finally {
        client.destroy()
      }
    }

    /** Downloads `url` whole and by a range across the first part boundary; both must match `bytes` (whose SHA-256 is `digest`). */
    async function expectServed(url: string, bytes: Buffer, digest = sha256(bytes)) {
      // As a stream: the whole download is hashed as it arrives, never decoded as text (light-my-request makes every
      // buffered body a string, seconds of CPU for megabytes of binary).
      const whole = await site.app.inject({ method: 'GET', url: pathOf(url), headers: site.gate, payloadAsStream: true })
      const hash = createHash('sha256')
      const chunks: Buffer[] = []
      for await (const chunk of whole.stream()) {
        hash.update(chunk as Buffer)
        if (whole.statusCode !== 200) chunks.push(chunk as Buffer)
      }
      assert.equal(whole.statusCode, 200, Buffer.concat(chunks).toString().slice(0, 200))
      assert.equal(Number(whole.headers['content-length']), bytes.length)
      assert.equal(hash.digest('hex'), digest, 'the downloaded file has the uploaded SHA-256')
      const start = PART_SIZE - 100
      const end = Math.min(PART_SIZE + 100, bytes.length - 1)
      const ranged = await site.app.inject({ method: 'GET', url: pathOf(url), headers: { ...site.gate, range: `bytes=${start}-${end}` } })
      assert.equal(ranged.statusCode, 206)
      assert.ok(ranged.rawPayload.equals(bytes.subarray(start, end + 1)), 'a range across the part boundary')
    }

    const cases: [string, 'media' | 'version', () => Buffer][] = [
      ['media, one byte over one part', 'media', () => bigMp4(PART_SIZE + 1)],
      ['media, 12 MiB (three parts)', 'media', () => bigMp4(12 * MiB)],
      ['version, 6 MiB', 'version', () => bigDatapack(6 * MiB)],
      ['version, one byte over two parts', 'version', () => bigDatapack(2 * PART_SIZE + 1)],
    ]
    for (const [name, kind, make] of cases) {
      test(`POST /api/uploads/: ${name}`, async () => {
        const bytes = make()
        assert.ok(bytes.length > PART_SIZE)
        const objectsBefore = (await bucketState()).objects
        const res = await postForm(site, alice, '/api/uploads/', [
          { name: 'kind', value: kind },
          { name: 'file', value: bytes, filename: `big.${kind === 'version' ? 'zip' : 'mp4'}` },
        ])
        assert.equal(res.statusCode, 200, res.body)
        const uploaded = res.json() as { kind: string; content_type: string; url: string }
        assert.equal(uploaded.kind, kind)
        assert.equal(uploaded.content_type, kind === 'version' ? 'application/zip' : 'video/mp4')
        const row = await site.app.db.selectFrom('files').select(['size', 'sha256'])
          .where('id', '=', /\/api\/files\/([0-9a-f-]{36})\/$/.exec(uploaded.url)![1]!).executeTakeFirstOrThrow()
        const digest = sha256(bytes)
        assert.deepEqual(row, { size: bytes.length, sha256: digest })
        await expectServed(uploaded.url, bytes, digest)
        if (bucket) {
          const state = await bucketState()
          assert.equal(state.objects, objectsBefore + 1, 'one new object')
          assert.deepEqual(state.pending, [], 'no multipart upload left pending')
        }
      })
    }

    test('a new version of 12 MiB through POST /api/packs/{ns}/{id}/versions/, then the update-check\'s download_url', async () => {
      const pack = await publishPack(site, alice, { title: `Big ${randomUUID().slice(0, 8)}` })
      const archive = bigDatapack(12 * MiB, 61)
      const res = await postForm(site, alice, `/api/packs/${pack.namespace}/${pack.pack_id}/versions/`, [
        { name: 'version_name', value: '2.0.0' },
        { name: 'file', value: archive, filename: 'big.zip' },
      ])
      assert.equal(res.statusCode, 201, res.body)
      const updated = res.json() as PackJson
      assert.equal(updated.versions[0]!.name, '2.0.0')
      assert.equal(updated.versions[0]!.pack_format, 61)
      const latest = await site.app.inject({ method: 'GET', url: `/api/packs/${pack.namespace}/${pack.pack_id}/latest`, headers: site.gate })
      assert.equal(latest.statusCode, 200)
      await expectServed((latest.json() as { download_url: string }).download_url, archive)
    })

    test('over the kind\'s limit after several parts: still a 413 (the failed clean-up of the upload must not replace it)', async () => {
      const objectsBefore = (await bucketState()).objects
      // A thumbnail's limit is 5 MiB: three parts' worth goes past it mid-upload.
      const bytes = Buffer.concat([png(), randomBytes(3 * PART_SIZE)])
      const res = await postForm(site, alice, '/api/uploads/', [
        { name: 'kind', value: 'thumbnail' },
        { name: 'file', value: bytes, filename: 'huge.png' },
      ])
      expectError(res, 413, /thumbnail limit/)
      const state = await bucketState()
      assert.equal(state.objects, objectsBefore, 'no object')
      assert.deepEqual(state.pending, [], 'no multipart upload left pending')
      const rows = await site.app.db.selectFrom('files').select('id').where('size', '>', 3 * PART_SIZE).execute()
      assert.deepEqual(rows, [])
    })
  })
}

describe('what reaches lib-storage', () => {
  test('the ingest stream exposes no size-like property a store could take for the body\'s length', async () => {
    let seen: Record<string, unknown> | undefined
    // Only put() is reached by receiveFile.
    const store = {
      async put(_key: string, body: Readable) {
        // What lib-storage's byteLength() tries, in order (end is also Writable's method: only a number counts).
        const fields = body as unknown as Record<string, unknown>
        seen = Object.fromEntries(['byteLength', 'length', 'size', 'start', 'end', 'path'].map((name) => [name, typeof fields[name]]))
        for await (const chunk of body) void chunk
      },
      get: () => Promise.reject(new Error('unused')),
      delete: async () => {},
      close: async () => {},
    } as Partial<FileStore> as FileStore
    const received = await receiveFile(store, Readable.from([randomBytes(1000)]), { maxBytes: 10_000, limitName: 'test limit' })
    assert.equal(received.size, 1000)
    assert.deepEqual(seen, { byteLength: 'undefined', length: 'undefined', size: 'undefined', start: 'undefined', end: 'function', path: 'undefined' })
  })

  for (const stock of [false, true]) {
    test(`S3FileStore.put stores a stream in full whatever length-like fields it carries (${stock ? 'stock' : 'patched'} s3rver)`, async () => {
      const bucket = await s3Bucket({ stock })
      const store = S3FileStore.fromUrl(bucket.storageUrl)
      try {
        const bytes = randomBytes(2 * PART_SIZE + 5)
        // Every field lib-storage would read as the length of the body, all wrong.
        const body = Object.assign(new Readable({ read() {} }), { size: 0, length: 1, byteLength: 2, start: 0, end: 0, path: '/dev/null' })
        for (let offset = 0; offset < bytes.length; offset += 64 * 1024) body.push(bytes.subarray(offset, offset + 64 * 1024))
        body.push(null)
        await store.put('lengthy1', body)
        const chunks: Buffer[] = []
        for await (const chunk of await store.get('lengthy1')) chunks.push(chunk as Buffer)
        assert.equal(sha256(Buffer.concat(chunks)), sha256(bytes))
      } finally {
        await store.close()
      }
    })
  }
})
