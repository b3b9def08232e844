// Ingesting an upload into the file store of the backend combination (the local
// disk, or S3 with PACKS_TEST_STORAGE=s3): type, size, hash and name as the
// bytes stream in, and nothing left in the store when an upload is refused.
import { afterEach, beforeEach, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { Readable } from 'node:stream'
import { InvalidUpload, PayloadTooLarge } from '../../src/errors.js'
import { acceptFile, ingestFile, receiveFile } from '../../src/uploads/ingest.js'
import type { FileStore } from '../../src/storage/index.js'
import { datapack, gif, mp4, png, zip } from '../helpers/fixtures.js'
import { openTestStore, type TestStore } from '../helpers/store.js'

// A fresh, empty store for each test.
let opened: TestStore
let store: FileStore
beforeEach(async () => {
  opened = await openTestStore()
  store = opened.store
})
afterEach(() => opened.cleanup())

/** Everything in the store, unfinished writes (partial files, pending multipart uploads) included. */
const inStore = () => opened.contents()

async function read(key: string): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const chunk of await store.get(key)) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}

/** The bytes in chunks of `size`, as a request body would arrive. */
function chunked(bytes: Buffer, size: number): Readable {
  const chunks: Buffer[] = []
  for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size))
  return Readable.from(chunks)
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex')

describe('ingestFile', () => {
  test('stores the bytes and reports type, size, hash and a clean name', async () => {
    const bytes = png(8, 8)
    const file = await ingestFile(store, Readable.from([bytes]), { kind: 'thumbnail', maxBytes: 1024, clientFilename: 'dir/../shot\u0000.png' })
    assert.equal(file.contentType, 'image/png')
    assert.equal(file.size, bytes.length)
    assert.equal(file.sha256, sha256(bytes))
    assert.equal(file.filename, 'shot.png')
    assert.equal(file.packFormat, null)
    assert.ok((await read(file.id)).equals(bytes))
    assert.equal((await inStore()).length, 1)
  })

  test('detects the type even when the head arrives one byte at a time', async () => {
    const bytes = gif()
    const file = await ingestFile(store, chunked(bytes, 1), { kind: 'media', maxBytes: 1024, clientFilename: 'g' })
    assert.equal(file.contentType, 'image/gif')
    assert.equal(file.sha256, sha256(bytes))
  })

  test('a large body in many chunks keeps every byte and the right hash', async () => {
    const bytes = Buffer.concat([mp4(), Buffer.alloc(300_000, 7)])
    const file = await ingestFile(store, chunked(bytes, 16_384), { kind: 'media', maxBytes: bytes.length, clientFilename: 'm.mp4' })
    assert.equal(file.size, bytes.length)
    assert.equal(file.sha256, sha256(bytes))
    assert.ok((await read(file.id)).equals(bytes))
  })

  test('exactly maxBytes is allowed; one more is PayloadTooLarge and nothing stays in the store', async () => {
    const bytes = Buffer.concat([png(), Buffer.alloc(2000)])
    await ingestFile(store, chunked(bytes, 100), { kind: 'media', maxBytes: bytes.length, clientFilename: 'a' })
    assert.equal((await inStore()).length, 1)
    await assert.rejects(
      ingestFile(store, chunked(bytes, 100), { kind: 'thumbnail', maxBytes: bytes.length - 1, clientFilename: 'a' }),
      (error) => error instanceof PayloadTooLarge && error.detail.includes(`thumbnail limit of ${bytes.length - 1} bytes`),
    )
    assert.equal((await inStore()).length, 1, 'no partial file left by the rejected upload')
  })

  test('stops reading at the limit instead of consuming the whole body', async () => {
    let produced = 0
    const endless = new Readable({
      read() {
        produced += 1024
        this.push(Buffer.alloc(1024, 1))
      },
    })
    await assert.rejects(ingestFile(store, endless, { kind: 'media', maxBytes: 10 * 1024, clientFilename: 'x' }), PayloadTooLarge)
    assert.ok(produced < 200 * 1024, `read ${produced} bytes for a 10 KiB limit`)
    assert.deepEqual(await inStore(), [])
  })

  test('a type the kind does not allow is InvalidUpload, and the bytes are deleted', async () => {
    await assert.rejects(ingestFile(store, Readable.from([mp4()]), { kind: 'thumbnail', maxBytes: 1024, clientFilename: 'x' }),
      (error) => error instanceof InvalidUpload && /video\/mp4/.test(error.detail) && /PNG/.test(error.detail))
    await assert.rejects(ingestFile(store, Readable.from([Buffer.from('hello world')]), { kind: 'media', maxBytes: 1024, clientFilename: 'x.png' }), InvalidUpload)
    await assert.rejects(ingestFile(store, Readable.from([png()]), { kind: 'version', maxBytes: 1024, clientFilename: 'x.zip' }), InvalidUpload)
    assert.deepEqual(await inStore(), [])
  })

  test('an empty body is InvalidUpload', async () => {
    await assert.rejects(ingestFile(store, Readable.from([]), { kind: 'media', maxBytes: 1024, clientFilename: 'x' }), /empty/)
    assert.deepEqual(await inStore(), [])
  })

  test('a body that fails midway rejects with its error and leaves nothing', async () => {
    const failing = new Readable({ read() {} })
    failing.push(png())
    setImmediate(() => failing.destroy(new Error('client went away')))
    await assert.rejects(ingestFile(store, failing, { kind: 'media', maxBytes: 1 << 20, clientFilename: 'x' }), /client went away/)
    assert.deepEqual(await inStore(), [])
  })

  test('a body already destroyed rejects at once instead of hanging', async () => {
    const gone = Readable.from([png()])
    gone.destroy()
    await assert.rejects(ingestFile(store, gone, { kind: 'media', maxBytes: 1024, clientFilename: 'x' }))
    assert.deepEqual(await inStore(), [])
  })

  test('version archives: a readable ZIP, pack_format from its root pack.mcmeta', async () => {
    const file = await ingestFile(store, Readable.from([await datapack(71)]), { kind: 'version', maxBytes: 1 << 20, clientFilename: 'p.zip' })
    assert.equal(file.contentType, 'application/zip')
    assert.equal(file.packFormat, 71)
    // A ZIP whose entries file-type would call a JAR is still a ZIP here.
    const jarish = await zip({ 'META-INF/MANIFEST.MF': 'Manifest-Version: 1.0\n', 'pack.mcmeta': '{"pack":{"pack_format":15}}' })
    assert.equal((await ingestFile(store, Readable.from([jarish]), { kind: 'version', maxBytes: 1 << 20, clientFilename: 'j.zip' })).packFormat, 15)
  })

  test('a corrupt ZIP as version is InvalidUpload and is deleted', async () => {
    const corrupt = Buffer.concat([Buffer.from('PK\x03\x04', 'binary'), Buffer.alloc(500, 0x41)])
    await assert.rejects(ingestFile(store, Readable.from([corrupt]), { kind: 'version', maxBytes: 1 << 20, clientFilename: 'x.zip' }), InvalidUpload)
    assert.deepEqual(await inStore(), [])
  })
})

describe('receiveFile + acceptFile (kind known only after the bytes)', () => {
  test('receive under a ceiling, then accept under the kind', async () => {
    const bytes = png()
    const received = await receiveFile(store, Readable.from([bytes]), { maxBytes: 1 << 20, limitName: 'largest upload limit' })
    assert.equal(received.size, bytes.length)
    assert.ok(received.head.equals(bytes.subarray(0, Math.min(bytes.length, 4100))))
    const file = await acceptFile(store, received, { kind: 'thumbnail', maxBytes: 1024, clientFilename: 'late.png' })
    assert.equal(file.id, received.storageKey)
    assert.equal(file.storageKey, received.storageKey)
    assert.equal(file.contentType, 'image/png')
  })

  test('over the ceiling while receiving: PayloadTooLarge naming the ceiling', async () => {
    await assert.rejects(receiveFile(store, Readable.from([Buffer.alloc(5000)]), { maxBytes: 4096, limitName: 'largest upload limit' }),
      (error) => error instanceof PayloadTooLarge && error.detail.includes('largest upload limit of 4 KiB'))
    assert.deepEqual(await inStore(), [])
  })

  test('under the ceiling but over the kind limit: PayloadTooLarge, bytes deleted', async () => {
    const received = await receiveFile(store, Readable.from([Buffer.concat([png(), Buffer.alloc(2000)])]), { maxBytes: 1 << 20, limitName: 'ceiling' })
    assert.equal((await inStore()).length, 1)
    await assert.rejects(acceptFile(store, received, { kind: 'thumbnail', maxBytes: 1024, clientFilename: 'x' }),
      (error) => error instanceof PayloadTooLarge && error.detail.includes('thumbnail limit of 1 KiB'))
    assert.deepEqual(await inStore(), [])
  })

  test('wrong type for the late kind: InvalidUpload, bytes deleted', async () => {
    const received = await receiveFile(store, Readable.from([mp4()]), { maxBytes: 1 << 20, limitName: 'ceiling' })
    await assert.rejects(acceptFile(store, received, { kind: 'thumbnail', maxBytes: 1 << 20, clientFilename: 'x' }), InvalidUpload)
    assert.deepEqual(await inStore(), [])
  })
})
