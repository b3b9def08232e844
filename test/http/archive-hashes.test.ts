// Verifiable answers: the update-check and every version
// carry the archive's size, SHA-256, SHA-1 and file name, computed while the
// upload streams; files stored before SHA-1s were kept get theirs from the
// start-up back-fill, which streams each stored file once.
import { createHash } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { backfillFiles } from '../../src/maintenance/backfill.js'
import { reindexPack } from '../../src/packs/search-service.js'
import { packChanged } from '../../src/update-check/service.js'
import { siteWith, type TestSite, type TestUser } from '../helpers/app.js'
import { datapack, png } from '../helpers/fixtures.js'
import { pathOf, publishPack, type PackJson } from '../helpers/packs.js'

let site: TestSite
let alice: TestUser
before(async () => {
  ;({ site, alice } = await siteWith({ users: ['alice'] }))
})
after(() => site.close())

const hex = (algorithm: 'sha1' | 'sha256', bytes: Buffer) => createHash(algorithm).update(bytes).digest('hex')
const latest = (pack: PackJson) => site.app.inject({ url: `/api/packs/${pack.namespace}/${pack.pack_id}/latest`, headers: site.gate })
const backfill = () => backfillFiles(site.app.db, site.app.store, (namespace, packId) => packChanged(site.app.updateCheckCache, namespace, packId))

describe('archive size and hashes in the answers', () => {
  test('the update-check and the pack\'s versions carry size, sha256, sha1 and filename of the bytes uploaded', async () => {
    const archive = await datapack(61, { 'data/x/readme.txt': 'hashed' })
    const pack = await publishPack(site, alice, { title: 'Hashed', version_name: '1.0' }, { archive })
    const expected = { size: archive.length, sha256: hex('sha256', archive), sha1: hex('sha1', archive) }
    const version = pack.versions[0]!
    assert.deepEqual({ size: version.size, sha256: version.sha256, sha1: version.sha1 }, expected)
    assert.equal(typeof version.filename, 'string')
    const res = await latest(pack)
    assert.equal(res.statusCode, 200, res.body)
    const answer = res.json() as Record<string, unknown>
    assert.deepEqual({ size: answer.size, sha256: answer.sha256, sha1: answer.sha1, filename: answer.filename },
      { ...expected, filename: version.filename })
    // The download is exactly those bytes.
    const download = await site.app.inject({ url: pathOf(String(answer.download_url)), headers: site.gate })
    assert.equal(hex('sha1', download.rawPayload), expected.sha1)
  })

  test('the back-fill streams files without a SHA-1 once, fills it (and an old archive\'s declaration), and the update-check follows', async () => {
    const archive = await datapack(61)
    const pack = await publishPack(site, alice, { title: 'Old Upload', version_name: '1.0' }, { archive, thumbnail: true })
    const fileId = pathOf(pack.versions[0]!.download_url).split('/')[3]!
    const thumbId = pathOf(pack.thumbnail_url!).split('/')[3]!
    // As a file stored before this version of Packs: no SHA-1, no declaration.
    await site.app.db.updateTable('files')
      .set({ sha1: null, pack_kind: null, min_format: null, min_format_minor: null, max_format: null, max_format_minor: null })
      .where('id', 'in', [fileId, thumbId]).execute()
    await packChanged(site.app.updateCheckCache, pack.namespace, pack.pack_id)
    // Its search entry as such a site built it: of no kind, so the kind filter does not find it.
    const { id: rowId } = await site.app.db.selectFrom('packs').select('id').where('namespace', '=', pack.namespace).where('pack_id', '=', pack.pack_id).executeTakeFirstOrThrow()
    await site.app.db.transaction().execute((trx) => reindexPack(trx, rowId))
    const dataPacks = async () => ((await site.app.inject({ url: '/api/packs/?q=old+upload&kind=data', headers: site.gate })).json() as { items: Array<{ id: string }> })
      .items.map((item) => item.id)
    assert.ok(!(await dataPacks()).includes(pack.id), 'no kind before the back-fill')
    const before = (await latest(pack)).json() as { sha1: string | null }
    assert.equal(before.sha1, null, 'until the back-fill, sha1 is null (not made up)')

    const report = await backfill()
    assert.ok(report.filled >= 2, JSON.stringify(report))
    assert.ok(report.declarations >= 1)
    const row = await site.app.db.selectFrom('files').select(['sha1', 'pack_kind', 'min_format']).where('id', '=', fileId).executeTakeFirstOrThrow()
    assert.deepEqual(row, { sha1: hex('sha1', archive), pack_kind: 'data', min_format: 61 })
    const thumb = await site.app.db.selectFrom('files').select('sha1').where('id', '=', thumbId).executeTakeFirstOrThrow()
    assert.equal(thumb.sha1, hex('sha1', png()))
    assert.equal(((await latest(pack)).json() as { sha1: string }).sha1, hex('sha1', archive), 'the cached answer was dropped')
    assert.ok((await dataPacks()).includes(pack.id), 'the declaration read reaches search: the kind filter finds the pack')
    const again = await backfill()
    assert.deepEqual(again, { filled: 0, declarations: 0, failed: 0 }, 'each file is read once')
  })

  test('bytes that do not match their row get no SHA-1 (nothing vouches for them); the rest go on', async () => {
    const pack = await publishPack(site, alice, { title: 'Tampered Row', version_name: '1.0' })
    const fileId = pathOf(pack.versions[0]!.download_url).split('/')[3]!
    await site.app.db.updateTable('files').set({ sha1: null, sha256: '0'.repeat(64) }).where('id', '=', fileId).execute()
    const report = await backfill()
    assert.equal(report.failed, 1)
    const row = await site.app.db.selectFrom('files').select('sha1').where('id', '=', fileId).executeTakeFirstOrThrow()
    assert.equal(row.sha1, null)
  })
})
