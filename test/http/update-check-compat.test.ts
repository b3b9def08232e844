// Compatible answers: ?pack_format=N and ?game_version=R
// on the update-check give the newest version that runs on that game, for the
// pack's kind; 404 with a detail when none does; without either, the plain
// answer. Each variant has its own cached answer and ETag, dropped with the
// pack's when a version changes it.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { expectError, siteWith, type TestSite, type TestUser } from '../helpers/app.js'
import { multipart, zip } from '../helpers/fixtures.js'
import { publishPack, type PackJson } from '../helpers/packs.js'

let site: TestSite
let alice: TestUser
let pack: PackJson

const resourcePack = (pack: Record<string, unknown>) => zip({ 'pack.mcmeta': JSON.stringify({ pack: { description: 'x', ...pack } }), 'assets/x/a.txt': 'a' })

async function addVersion(name: string, archive: Buffer): Promise<void> {
  const body = multipart([{ name: 'version_name', value: name }, { name: 'file', value: archive, filename: `${name}.zip`, contentType: 'application/zip' }])
  const res = await site.app.inject({ method: 'POST', url: '/api/packs/alice/lamps/versions/', headers: { ...alice.headers, ...body.headers }, payload: body.payload })
  assert.equal(res.statusCode, 201, res.body)
}

const check = (query: string, headers: Record<string, string> = {}) =>
  site.app.inject({ url: `/api/packs/alice/lamps/latest${query}`, headers: { ...site.gate, ...headers } })
const versionOf = async (query: string) => {
  const res = await check(query)
  assert.equal(res.statusCode, 200, `${query}: ${res.body}`)
  return (res.json() as { version: string }).version
}

before(async () => {
  ;({ site, alice } = await siteWith({ users: ['alice'] }))
  // Oldest first: 1.20.1 only (resource 15), 1.21 – 1.21.4 (34 – 46), then 1.21.9+ only ([69] – [75]).
  pack = await publishPack(site, alice, { title: 'Lamps', version_name: 'for-1.20' }, { archive: await resourcePack({ pack_format: 15 }) })
  await addVersion('for-1.21', await resourcePack({ pack_format: 34, supported_formats: [34, 46] }))
  await addVersion('for-1.21.9', await resourcePack({ min_format: 69, max_format: [75, 0] }))
})
after(() => site.close())

describe('the update-check for a player\'s game', () => {
  test('without parameters: the newest version, the plain answer', async () => {
    assert.equal(await versionOf(''), 'for-1.21.9')
    assert.equal(pack.pack_id, 'lamps')
  })

  test('?game_version picks the newest version that runs on that release', async () => {
    assert.equal(await versionOf('?game_version=1.21.11'), 'for-1.21.9')
    assert.equal(await versionOf('?game_version=1.21.4'), 'for-1.21')
    assert.equal(await versionOf('?game_version=1.21'), 'for-1.21')
    assert.equal(await versionOf('?game_version=1.20.1'), 'for-1.20')
    expectError(await check('?game_version=1.21.5'), 404, /no version of the pack supports Minecraft 1\.21\.5/)
    expectError(await check('?game_version=1.99.9'), 404, /unknown Minecraft release "1\.99\.9"/)
  })

  test('?pack_format picks by the format, exactly below 1.20.2\'s, by range from it on', async () => {
    assert.equal(await versionOf('?pack_format=46'), 'for-1.21')
    assert.equal(await versionOf('?pack_format=40'), 'for-1.21')
    assert.equal(await versionOf('?pack_format=75'), 'for-1.21.9')
    assert.equal(await versionOf('?pack_format=15'), 'for-1.20')
    expectError(await check('?pack_format=16'), 404, /supports pack format 16/)
    expectError(await check('?pack_format=99'), 404)
  })

  test('malformed or doubled parameters are 400; an unknown pack is still 404', async () => {
    expectError(await check('?pack_format=-1'), 400)
    expectError(await check('?pack_format=1e3'), 400)
    expectError(await check('?game_version=1.21.4%0a'), 400)
    expectError(await check(`?game_version=${'1.'.repeat(5000)}1`), 400)
    expectError(await check('?pack_format=46&game_version=1.21.4'), 400, /not both/)
    expectError(await site.app.inject({ url: '/api/packs/alice/nothing/latest?game_version=1.21.4', headers: site.gate }), 404, /pack not found/)
  })

  test('each variant has its own ETag and 304; a new version changes the variants it fits, on the spot', async () => {
    const a = await check('?game_version=1.21.4')
    const b = await check('?game_version=1.20.1')
    assert.notEqual(a.headers.etag, b.headers.etag)
    const again = await check('?game_version=1.21.4', { 'if-none-match': String(a.headers.etag) })
    assert.equal(again.statusCode, 304)
    await addVersion('for-1.21.4', await resourcePack({ pack_format: 46 }))
    assert.equal(await versionOf('?game_version=1.21.4'), 'for-1.21.4', 'the cached variant was dropped with the pack\'s answers')
    assert.equal(await versionOf('?game_version=1.20.1'), 'for-1.20')
    assert.equal(await versionOf(''), 'for-1.21.4')
  })

  test('a flood of variants stays bounded per pack', async () => {
    for (let format = 100; format < 140; format++) expectError(await check(`?pack_format=${format}`), 404)
    const usage = site.app.updateCheckCache.usage()
    assert.ok(usage.answers <= 1 + site.app.updateCheckCache.limits.maxVariants + 8, JSON.stringify(usage))
  })
})
