// The ZIP entry bomb, as an attacker sent it: a 172 KB version upload whose 3000
// central-directory records all name one deflated 1 MiB pack.mcmeta (26 s of
// CPU before). The time limit is a denial-of-service bound, generous for a busy
// CI machine, not a performance claim.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { deflateRawSync } from 'node:zlib'
import { expectError, siteWith, storedFiles, type TestSite, type TestUser } from '../helpers/app.js'
import { datapack, multipart, rawZip, zipEntryBomb } from '../helpers/fixtures.js'

const BOUND_MS = 5000

describe('hostile version archives through POST /api/uploads/', () => {
  let site: TestSite
  let alice: TestUser

  before(async () => ({ site, alice } = await siteWith({ users: ['alice'] })))
  after(() => site.close())

  async function uploadVersion(bytes: Buffer) {
    const form = multipart([
      { name: 'kind', value: 'version' },
      { name: 'file', value: bytes, filename: 'pack.zip', contentType: 'application/zip' },
    ])
    const started = performance.now()
    const res = await site.app.inject({ method: 'POST', url: '/api/uploads/', headers: { ...alice.headers, ...form.headers }, payload: form.payload })
    return { res, ms: performance.now() - started }
  }

  async function uploadRows(): Promise<number> {
    const row = await site.app.db.selectFrom('uploads').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()
    return Number(row.n)
  }

  async function expectRefused(bytes: Buffer, detail: RegExp) {
    const filesBefore = await storedFiles(site)
    const rowsBefore = await uploadRows()
    const { res, ms } = await uploadVersion(bytes)
    expectError(res, 400, detail)
    assert.ok(ms < BOUND_MS, `answered in ${ms.toFixed(0)} ms, bound ${BOUND_MS} ms`)
    assert.deepEqual(await storedFiles(site), filesBefore, 'nothing left in storage')
    assert.equal(await uploadRows(), rowsBefore, 'no upload row')
  }

  test('the 3000-record pack.mcmeta bomb: 400 duplicate entry, nothing kept', async () => {
    await expectRefused(zipEntryBomb(3000), /duplicate entry/)
  })

  test('3000 differently named records sharing one blob: 400 overlapping entries, nothing kept', async () => {
    const data = deflateRawSync(Buffer.alloc(1024 * 1024, 0x20))
    const name = (i: number) => `f${String(i).padStart(4, '0')}`
    const bytes = rawZip([{ name: name(0), data, method: 8, uncompressedSize: 1024 * 1024 }], {
      records: Array.from({ length: 3000 }, (_, i) => ({ entry: 0, name: name(i) })),
    })
    await expectRefused(bytes, /overlapping entries/)
  })

  test('an end record claiming more entries than allowed: 400, nothing kept', async () => {
    await expectRefused(rawZip([{ name: 'a', data: Buffer.from('a') }], { zip64: true, entryCount: 2 ** 40 }), /entries; at most/)
  })

  test('an honest pack still goes through, with its pack_format', async () => {
    const { res } = await uploadVersion(await datapack(61))
    assert.equal(res.statusCode, 200, res.body)
    const row = await site.app.db.selectFrom('uploads').select('pack_format').where('id', '=', (res.json() as { uuid: string }).uuid).executeTakeFirstOrThrow()
    assert.equal(row.pack_format, 61)
  })
})
