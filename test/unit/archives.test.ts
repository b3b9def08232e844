// inspectArchive against hostile archives. The time limits
// here are denial-of-service bounds, not performance claims: each is far above
// what the check needs on a slow, busy machine and far below what the attack
// cost before (the 3000-record bomb took 15 to 26 s of CPU), so a test fails
// only when an archive can again make the server work in proportion to what it
// claims rather than to its size.
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { Readable } from 'node:stream'
import { deflateRawSync } from 'node:zlib'
import yazl from 'yazl'
import { inspectArchive, MAX_ARCHIVE_ENTRIES, MAX_MCMETA_BYTES, type ArchiveInfo } from '../../src/uploads/archives.js'
import { InvalidUpload, StorageUnavailable } from '../../src/errors.js'
import type { FileStore } from '../../src/storage/index.js'
import type { PackDeclaration } from '../../src/minecraft/declaration.js'
import { datapack, rawZip, zip, zipEntryBomb, zipLocalHeader, type RawZipEntry } from '../helpers/fixtures.js'

/** Milliseconds any archive below may take, however it is shaped. */
const BOUND_MS = 500

/**
 * The archive's bytes served as a store serves them: the range asked for, as a
 * stream (inspectArchive reads only through `get`). Real stores reading ranges
 * are the FileStore contract's (test/backends/storage.test.ts), and archives
 * read from them are test/backends/ingest.test.ts's.
 */
function inMemory(bytes: Buffer): Pick<FileStore, 'get'> {
  return {
    async get(_key, range) {
      return Readable.from([range ? bytes.subarray(range.start, range.end + 1) : bytes])
    },
  }
}

/** Inspects `bytes`, timing the inspection. */
async function inspect(bytes: Buffer): Promise<{ result?: ArchiveInfo; error?: unknown; ms: number }> {
  const started = performance.now()
  try {
    const result = await inspectArchive(inMemory(bytes), 'archive', bytes.length)
    return { result, ms: performance.now() - started }
  } catch (error) {
    return { error, ms: performance.now() - started }
  }
}

async function expectAccepted(bytes: Buffer, boundMs = BOUND_MS): Promise<ArchiveInfo> {
  const { result, error, ms } = await inspect(bytes)
  assert.equal(error, undefined, `accepted, not ${String(error)}`)
  assert.ok(ms < boundMs, `took ${ms.toFixed(0)} ms, bound ${boundMs} ms`)
  return result!
}

async function expectRefused(bytes: Buffer, detail: RegExp, boundMs = BOUND_MS): Promise<void> {
  const { result, error, ms } = await inspect(bytes)
  assert.ok(error instanceof InvalidUpload, `refused as InvalidUpload, got ${error === undefined ? JSON.stringify(result) : String(error)}`)
  assert.match(error.detail, detail)
  assert.ok(ms < boundMs, `took ${ms.toFixed(0)} ms, bound ${boundMs} ms`)
}

const stored = (name: string, content: string | Buffer): RawZipEntry => ({ name, data: Buffer.from(content) })
const deflated = (name: string, content: string | Buffer, uncompressedSize?: number): RawZipEntry => {
  const bytes = Buffer.from(content)
  return { name, data: deflateRawSync(bytes), method: 8, uncompressedSize: uncompressedSize ?? bytes.length }
}
const MCMETA = '{"pack":{"pack_format":15,"description":"x"}}'
/** What MCMETA declares, in an archive with neither assets/ nor data/; and what an archive without a usable one declares. */
const DECLARES_15: PackDeclaration = { kind: null, range: { min: [15, 0], max: [15] } }
const DECLARES_NOTHING: PackDeclaration = { kind: null, range: null }

describe('the ZIP entry bomb', () => {
  test('3000 records naming one deflated 1 MiB pack.mcmeta: refused as a duplicate entry, without inflating', async () => {
    const bomb = zipEntryBomb(3000)
    assert.ok(bomb.length > 170_000 && bomb.length < 175_000, `the issue's 172 KB shape (${bomb.length})`)
    await expectRefused(bomb, /more than one pack\.mcmeta.*duplicate entry/)
  })

  test('the same shape under 3000 different names: refused as overlapping entries', async () => {
    const blob = Buffer.alloc(1024 * 1024, 0x20)
    const name = (i: number) => `file-${String(i).padStart(4, '0')}.txt`
    const entry = deflated(name(0), blob)
    const records = Array.from({ length: 3000 }, (_, i) => ({ entry: 0, name: name(i) }))
    await expectRefused(rawZip([entry], { records }), /overlapping entries/)
  })
})

describe('overlapping entries', () => {
  test("an entry whose local header and data lie inside another's data (Fifield's overlap)", async () => {
    const inner = stored('inner.txt', 'hello')
    const outer = stored('outer.txt', Buffer.concat([zipLocalHeader(inner), inner.data]))
    const innerOffset = 30 + 'outer.txt'.length
    const bytes = rawZip([outer, inner], { records: [{ entry: 0 }, { entry: 1, offset: innerOffset }] })
    await expectRefused(bytes, /overlapping entries/)
  })

  test('two records pointing at the same local header, even of an empty file', async () => {
    await expectRefused(rawZip([stored('a', '')], { records: [{ entry: 0 }, { entry: 0, name: 'b' }] }), /overlapping entries/)
  })

  test('records out of offset order but disjoint are fine', async () => {
    const entries = [stored('pack.mcmeta', MCMETA), stored('a.txt', 'a'), stored('b.txt', 'b')]
    const info = await expectAccepted(rawZip(entries, { records: [{ entry: 2 }, { entry: 0 }, { entry: 1 }] }))
    assert.deepEqual(info, { entries: 3, packFormat: 15, declaration: DECLARES_15 })
  })

  test('an entry whose data would run into the central directory', async () => {
    const bytes = rawZip([stored('a.txt', 'abc')], { records: [{ entry: 0, offset: 1 }] })
    await expectRefused(bytes, /outside the archive data/)
  })
})

describe('entry count', () => {
  const tiny = (count: number) => rawZip(Array.from({ length: count }, (_, i) => stored(`f${i}`, '')), { zip64: count > 0xffff })

  test(`${MAX_ARCHIVE_ENTRIES} entries are allowed (ZIP64)`, async () => {
    // Walking the cap's worth of records is the most work an archive can ask for; 5 s is a generous bound.
    const info = await expectAccepted(tiny(MAX_ARCHIVE_ENTRIES), 5000)
    assert.deepEqual(info, { entries: MAX_ARCHIVE_ENTRIES, packFormat: null, declaration: DECLARES_NOTHING })
  })

  test('one more is refused before any record is read', async () => {
    await expectRefused(tiny(MAX_ARCHIVE_ENTRIES + 1), new RegExp(`${MAX_ARCHIVE_ENTRIES + 1} entries; at most ${MAX_ARCHIVE_ENTRIES}`))
  })

  test('a ZIP64 end record claiming 2^60 entries', async () => {
    await expectRefused(rawZip([stored('a', 'a')], { zip64: true, entryCount: 2 ** 60 }), new RegExp(`${2 ** 60} entries`))
  })

  test('more entries than the central directory can hold', async () => {
    await expectRefused(rawZip([stored('a', 'a')], { entryCount: 0xffff }), /too small for the 65535 entries/)
  })
})

describe('pack.mcmeta is read once, and at most 64 KiB of it', () => {
  test('a header that says 27 bytes over 16 MiB of deflated data: unusable, not inflated', async () => {
    const lie = deflated('pack.mcmeta', Buffer.concat([Buffer.from(MCMETA), Buffer.alloc(16 * 1024 * 1024, 0x20)]), MCMETA.length)
    assert.deepEqual(await expectAccepted(rawZip([lie])), { entries: 1, packFormat: null, declaration: DECLARES_NOTHING })
  })

  test('a header that claims more than the data holds: unusable', async () => {
    assert.deepEqual(await expectAccepted(rawZip([deflated('pack.mcmeta', MCMETA, MCMETA.length + 1)])), { entries: 1, packFormat: null, declaration: DECLARES_NOTHING })
  })

  test('a header that claims more than the cap: not read at all', async () => {
    const entry = deflated('pack.mcmeta', MCMETA, MAX_MCMETA_BYTES + 1)
    assert.deepEqual(await expectAccepted(rawZip([entry])), { entries: 1, packFormat: null, declaration: DECLARES_NOTHING })
  })

  test('honest and within the cap, stored or deflated: read', async () => {
    const padded = MCMETA + ' '.repeat(MAX_MCMETA_BYTES - MCMETA.length)
    assert.equal((await expectAccepted(rawZip([deflated('pack.mcmeta', padded)]))).packFormat, 15)
    assert.equal((await expectAccepted(rawZip([stored('pack.mcmeta', `\uFEFF${MCMETA}`)]))).packFormat, 15)
    assert.equal((await expectAccepted(await datapack(71))).packFormat, 71)
  })

  test('honest but past the cap: unusable, the archive still accepted', async () => {
    const padded = MCMETA + ' '.repeat(MAX_MCMETA_BYTES)
    assert.equal((await expectAccepted(rawZip([deflated('pack.mcmeta', padded)]))).packFormat, null)
  })

  test('only the root pack.mcmeta counts; one elsewhere is just a file', async () => {
    const bytes = await zip({ 'nested/pack.mcmeta': '{"pack":{"pack_format":5}}', 'pack.mcmeta.bak': '{"pack":{"pack_format":6}}' })
    assert.deepEqual(await expectAccepted(bytes), { entries: 2, packFormat: null, declaration: DECLARES_NOTHING })
  })

  test('a local header that does not match: unusable, not an error', async () => {
    const bytes = rawZip([stored('pack.mcmeta', MCMETA)])
    bytes.writeUInt32LE(0x12345678, 0)
    assert.equal((await expectAccepted(bytes)).packFormat, null)
  })
})

describe('what the archive declares: its kind and its format range', () => {
  const mcmeta = (pack: Record<string, unknown>) => JSON.stringify({ pack: { description: 'x', ...pack } })

  test('assets/ at the root: a resource pack', async () => {
    const info = await expectAccepted(await zip({ 'pack.mcmeta': mcmeta({ pack_format: 34, supported_formats: [34, 46] }), 'assets/minecraft/lang/en_us.json': '{}' }))
    assert.deepEqual(info.declaration, { kind: 'resource', range: { min: [34, 0], max: [46] } })
    assert.equal(info.packFormat, 34)
  })

  test('data/ at the root: a data pack', async () => {
    const info = await expectAccepted(await zip({ 'pack.mcmeta': mcmeta({ min_format: [94, 1], max_format: [94, 1] }), 'data/x/function/a.mcfunction': 'say a' }))
    assert.deepEqual(info.declaration, { kind: 'data', range: { min: [94, 1], max: [94, 1] } })
    assert.equal(info.packFormat, 94)
  })

  test("a folder's own entry is enough", async () => {
    const info = await expectAccepted(rawZip([stored('pack.mcmeta', MCMETA), stored('data/', '')]))
    assert.equal(info.declaration.kind, 'data')
  })

  test('both folders, or neither: no kind', async () => {
    const both = await expectAccepted(await zip({ 'pack.mcmeta': MCMETA, 'assets/a.txt': 'a', 'data/b.txt': 'b' }))
    assert.deepEqual(both.declaration, DECLARES_15)
    const neither = await expectAccepted(await zip({ 'pack.mcmeta': MCMETA, 'textures/a.png': 'a' }))
    assert.deepEqual(neither.declaration, DECLARES_15)
  })

  test('only the root folders count, spelled as the game spells them', async () => {
    for (const name of ['pack/assets/a.txt', 'Assets/a.txt', 'DATA/a.txt', 'assets\\a.txt', 'data\\b.txt', 'assets', 'data', 'datapack/a.txt', 'assetsx/a.txt']) {
      // rawZip, not a ZIP library: libraries refuse to write names with backslashes, some old tools did not.
      const info = await expectAccepted(rawZip([stored('pack.mcmeta', MCMETA), stored(name, 'x')]))
      assert.equal(info.declaration.kind, null, name)
    }
  })

  test('the kind is read even without a pack.mcmeta, and a broken one declares no range', async () => {
    assert.deepEqual((await expectAccepted(await zip({ 'assets/a.txt': 'a' }))).declaration, { kind: 'resource', range: null })
    const broken = await expectAccepted(await zip({ 'pack.mcmeta': '{"pack": {"pack_format": "forty", ', 'data/a.txt': 'a' }))
    assert.deepEqual(broken.declaration, { kind: 'data', range: null })
    assert.equal(broken.packFormat, null)
  })

  test('hostile numbers are no range; pack_format keeps its documented meaning', async () => {
    const info = await expectAccepted(await zip({ 'pack.mcmeta': mcmeta({ pack_format: -4, min_format: [-1, 'x'], max_format: { a: 1 } }) }))
    assert.deepEqual(info.declaration, DECLARES_NOTHING)
    assert.equal(info.packFormat, -4)
  })
})

describe('a real pack', () => {
  test('5,000 files written by a ZIP library are accepted, pack_format read', async () => {
    // As ZIP tools write a resource pack: pack.mcmeta deflated, the textures (PNGs, compressed already) stored.
    // (Deflating 5,000 entries, one zlib stream each, took seconds of CPU: not what this test is about.)
    const archive = new yazl.ZipFile()
    archive.addBuffer(Buffer.from(MCMETA), 'pack.mcmeta')
    for (let i = 0; i < 5000; i++) {
      archive.addBuffer(Buffer.from(`not really a png ${i}`), `assets/minecraft/textures/block/texture_${i}.png`, { compress: false })
    }
    archive.end()
    const chunks: Buffer[] = []
    for await (const chunk of archive.outputStream) chunks.push(chunk as Buffer)
    assert.deepEqual(await expectAccepted(Buffer.concat(chunks)), { entries: 5001, packFormat: 15, declaration: { ...DECLARES_15, kind: 'resource' } })
  })

  test('an empty archive is a readable ZIP', async () => {
    assert.deepEqual(await expectAccepted(await zip({})), { entries: 0, packFormat: null, declaration: DECLARES_NOTHING })
  })
})

describe('other shapes that used to cost time, or could', () => {
  test('a 64 KiB comment full of end-record signatures is searched once', async () => {
    const comment = Buffer.alloc(0xffff)
    for (let i = 0; i + 4 <= comment.length; i += 4) comment.writeUInt32LE(0x06054b50, i)
    assert.deepEqual(await expectAccepted(rawZip([stored('pack.mcmeta', MCMETA)], { comment })), { entries: 1, packFormat: 15, declaration: DECLARES_15 })
  })

  test('1 MiB of end-record signatures and nothing else', async () => {
    const bytes = Buffer.alloc(1024 * 1024)
    for (let i = 0; i + 4 <= bytes.length; i += 4) bytes.writeUInt32LE(0x06054b50, i)
    await expectRefused(bytes, /no end of central directory record/)
  })

  test('names of 64 KiB each: the walk does not decode them', async () => {
    const longName = `${'d/'.repeat(0x7ff0)}`
    const entries = Array.from({ length: 64 }, (_, i) => stored(`${longName}${String(i).padStart(4, '0')}`, ''))
    assert.deepEqual(await expectAccepted(rawZip([stored('pack.mcmeta', MCMETA), ...entries])), { entries: 65, packFormat: 15, declaration: DECLARES_15 })
  })

  test('a ZIP64 locator pointing past the file, or at garbage', async () => {
    const bytes = rawZip([stored('a', 'a')], { zip64: true })
    const locator = bytes.length - 22 - 20
    const far = Buffer.from(bytes)
    far.writeUInt32LE(0xffffffff, locator + 8)
    far.writeUInt32LE(0xffffffff, locator + 12)
    await expectRefused(far, /ZIP64 end record lies outside the file/)
    const garbage = Buffer.from(bytes)
    garbage.writeUInt32LE(0, locator + 8)
    await expectRefused(garbage, /ZIP64 end record is damaged/)
  })

  test('a record with ZIP64 sentinels and no ZIP64 field', async () => {
    const bytes = rawZip([stored('a', 'a')])
    const record = bytes.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]))
    bytes.writeUInt32LE(0xffffffff, record + 20)
    bytes.writeUInt32LE(0xffffffff, record + 24)
    await expectRefused(bytes, /lacks its ZIP64 sizes/)
  })

  test('a central directory offset past the file', async () => {
    const bytes = rawZip([stored('a', 'a')])
    bytes.writeUInt32LE(0x7fffffff, bytes.length - 22 + 16)
    await expectRefused(bytes, /central directory lies outside the file/)
  })

  test('names that leave the folder they are unzipped in', async () => {
    for (const name of ['../evil', 'a/../../evil', '/etc/passwd', '\\evil', 'C:evil', 'a\\..\\b', '..']) {
      await expectRefused(rawZip([stored(name, 'x')]), /absolute path or leads out/)
    }
    assert.equal((await expectAccepted(rawZip([stored('a..b/..c/d..', 'x')]))).entries, 1)
  })
})

describe('errors that are not about the archive', () => {
  const archive = () => datapack(48)
  const failing = (failure: 'reject' | 'stream'): Pick<FileStore, 'get'> => ({
    async get() {
      if (failure === 'reject') throw new Error('storage unavailable')
      return new Readable({ read() { this.destroy(new Error('connection reset')) } })
    },
  })

  test('a store that fails: its error propagates, it is not called an unreadable ZIP', async () => {
    const bytes = await archive()
    await assert.rejects(inspectArchive(failing('reject'), 'k', bytes.length), (error) => !(error instanceof InvalidUpload) && /storage unavailable/.test(String(error)))
    await assert.rejects(inspectArchive(failing('stream'), 'k', bytes.length), (error) => !(error instanceof InvalidUpload) && /connection reset/.test(String(error)))
  })

  test('a store that fails after the directory was read, when the pack.mcmeta is fetched', async () => {
    // The archive's tail is one read; its first entry, far before it, needs another.
    const bytes = rawZip([stored('pack.mcmeta', MCMETA), stored('padding', Buffer.alloc(2 * 1024 * 1024))])
    let reads = 0
    const flaky: Pick<FileStore, 'get'> = {
      async get(_key, range) {
        if (++reads > 1) throw new Error('storage went away')
        return Readable.from([bytes.subarray(range!.start, range!.end + 1)])
      },
    }
    await assert.rejects(inspectArchive(flaky, 'k', bytes.length), (error) => !(error instanceof InvalidUpload) && /storage went away/.test(String(error)))
    assert.equal(reads, 2)
  })

  test('a store that returns fewer bytes than the file has is at fault, not the archive', async () => {
    const bytes = await archive()
    const short: Pick<FileStore, 'get'> = { get: async (_key, range) => Readable.from([bytes.subarray(range!.start, range!.end)]) }
    await assert.rejects(inspectArchive(short, 'k', bytes.length), StorageUnavailable)
  })
})
