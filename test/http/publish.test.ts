import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import { sql } from 'kysely'
import { expectError, siteWith, storedFiles, type TestSite, type TestUser } from '../helpers/app.js'
import { onPostgres } from '../helpers/database.js'
import { datapack, png, webm, zip } from '../helpers/fixtures.js'
import { pathOf, publishPack, saveDraft, seedTags, upload, type PackJson } from '../helpers/packs.js'

let site: TestSite
let alice: TestUser
let bob: TestUser

before(async () => {
  ;({ site, alice, bob } = await siteWith({ users: ['alice', 'bob'] }))
  await seedTags(site)
})
after(() => site.close())

const publish = (user: TestUser, payload: unknown) =>
  site.app.inject({ method: 'POST', url: '/api/draft/publish/', headers: user.headers, payload: payload as Record<string, unknown> })

async function countRows(table: 'packs' | 'versions' | 'pack_tags' | 'pack_media' | 'uploads' | 'drafts' | 'files'): Promise<number> {
  const row = await site.app.db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()
  return Number(row.n)
}

describe('POST /api/draft/publish/', () => {
  test('turns the draft and its uploads into a pack with its first version', async () => {
    const draft = randomUUID()
    await saveDraft(site, alice, draft, {
      title: '  Château Builder  ',
      summary: 'Castles, quickly.',
      description: '# Castles\n\nBuild them.',
      category: 'theme',
      tags: ['medieval', 'No Such Tag', 'SPACE', 'Medieval'],
      version_name: '1.0.0',
      changelog: 'First release',
      unrelated: { kept: true },
    })
    const oldThumb = await upload(site, alice, 'thumbnail', png(1, 1, [0, 0, 255]), { draft })
    const media1 = await upload(site, alice, 'media', png(2, 2), { draft, filename: 'shot1.png' })
    const archive = await datapack(48)
    const version = await upload(site, alice, 'version', archive, { draft, filename: 'chateau.zip' })
    const media2 = await upload(site, alice, 'media', webm(), { draft, filename: 'clip.webm' })
    const thumb = await upload(site, alice, 'thumbnail', png(3, 3), { draft })
    const filesBefore = (await storedFiles(site)).length

    const res = await publish(alice, { draft })
    assert.equal(res.statusCode, 201, res.body)
    const pack = res.json() as PackJson
    assert.equal(pack.namespace, 'alice')
    assert.equal(pack.pack_id, 'chateau-builder')
    assert.equal(pack.id, 'alice:chateau-builder')
    assert.equal(pack.title, 'Château Builder')
    assert.equal(pack.summary, 'Castles, quickly.')
    assert.equal(pack.description, '# Castles\n\nBuild them.')
    assert.deepEqual(pack.category, { key: 'theme', name: 'Theme', color: '#aa5500' })
    // Matched case-insensitively, duplicates and unknown names dropped, sorted by name.
    assert.deepEqual(pack.tags, [
      { name: 'Medieval', category: 'theme', category_name: 'Theme', color: '#aa5500' },
      { name: 'Space', category: 'theme', category_name: 'Theme', color: '#aa5500' },
    ])
    assert.equal(pack.owner, 'alice')
    assert.equal(pack.thumbnail_url, thumb.url, 'the newest thumbnail wins')
    assert.deepEqual(pack.media, [
      { id: media1.url.split('/').at(-2), url: media1.url, content_type: 'image/png', filename: 'shot1.png' },
      { id: media2.url.split('/').at(-2), url: media2.url, content_type: 'video/webm', filename: 'clip.webm' },
    ])
    assert.equal(pack.versions.length, 1)
    const [v] = pack.versions
    assert.equal(v!.name, '1.0.0')
    assert.equal(v!.changelog, 'First release')
    assert.equal(v!.pack_format, 48)
    assert.match(v!.created_at, /Z$/)
    assert.equal(v!.download_url, `http://localhost:80/api/files/${version.fileId}/?download=1`)
    assert.equal(pack.created_at, v!.created_at)
    assert.equal(pack.updated_at, pack.created_at)

    // The draft and its pending uploads are consumed...
    expectError(await site.app.inject({ url: `/api/draft/?draft=${draft}`, headers: alice.headers }), 404)
    for (const u of [oldThumb, media1, version, media2, thumb]) {
      expectError(await site.app.inject({ method: 'POST', url: `/api/uploads/${u.uuid}/delete/`, headers: alice.headers }), 404)
    }
    assert.equal(await site.app.db.selectFrom('uploads').select('id').where('draft_id', '=', draft).executeTakeFirst(), undefined)
    // ...their files now belong to the pack and are still served; the older thumbnail is gone.
    const served = await site.app.inject({ url: thumb.url, headers: site.gate })
    assert.equal(served.statusCode, 200)
    assert.deepEqual(served.rawPayload, png(3, 3))
    const download = await site.app.inject({ url: pathOf(v!.download_url), headers: site.gate })
    assert.equal(download.statusCode, 200)
    assert.deepEqual(download.rawPayload, archive)
    expectError(await site.app.inject({ url: oldThumb.url, headers: site.gate }), 404)
    assert.equal((await storedFiles(site)).length, filesBefore - 1)

    const latest = await site.app.inject({ url: '/api/packs/alice/chateau-builder/latest', headers: site.gate })
    assert.equal(latest.statusCode, 200)
    assert.deepEqual(latest.json(), {
      namespace: 'alice', pack_id: 'chateau-builder', name: 'Château Builder', version: '1.0.0', pack_format: 48,
      created_at: v!.created_at, download_url: v!.download_url,
      // The additions for updaters: what an updater checks the download against.
      size: v!.size, sha256: v!.sha256, sha1: v!.sha1, filename: v!.filename,
    })
  })

  test('the namespace is the username in lower case; the owner keeps its spelling', async () => {
    const carol = await site.user('Carol.M')
    const pack = await publishPack(site, carol, { title: 'Mixed Case' })
    assert.equal(pack.namespace, 'carol.m')
    assert.equal(pack.owner, 'Carol.M')
    const latest = await site.app.inject({ url: '/api/packs/Carol.M/Mixed-Case/latest', headers: site.gate })
    assert.equal(latest.statusCode, 200, latest.body)
  })

  test('pack_format: 1.21.9-style max_format [94, 1] gives 94; no pack.mcmeta gives null', async () => {
    const modern = await zip({ 'pack.mcmeta': JSON.stringify({ pack: { min_format: [88, 0], max_format: [94, 1], description: 'new' } }) })
    const a = await publishPack(site, alice, { title: 'Modern Format' }, { archive: modern })
    assert.equal(a.versions[0]!.pack_format, 94)
    const bare = await zip({ 'assets/minecraft/textures/block/stone.png': png() })
    const b = await publishPack(site, alice, { title: 'No Meta' }, { archive: bare })
    assert.equal(b.versions[0]!.pack_format, null)
    for (const [id, format] of [['modern-format', 94], ['no-meta', null]] as const) {
      const latest = await site.app.inject({ url: `/api/packs/alice/${id}/latest`, headers: site.gate })
      assert.equal((latest.json() as { pack_format: unknown }).pack_format, format)
    }
  })

  test('optional fields: no thumbnail, no media, unknown category, tags absent', async () => {
    const pack = await publishPack(site, alice, { title: 'Plain', category: 'no-such-category', tags: null, summary: null })
    assert.equal(pack.thumbnail_url, null)
    assert.deepEqual(pack.media, [])
    assert.equal(pack.category, null)
    assert.deepEqual(pack.tags, [])
    assert.equal(pack.summary, '')
    assert.equal(pack.description, '')
    assert.equal(pack.versions[0]!.changelog, '')
  })

  test('tags are matched however many the draft names: the create page and publishing find every real one', async () => {
    // More names than one lookup takes (500), with the real tags last: both lookups must read every batch.
    const invented = Array.from({ length: 1200 }, (_, i) => `invented-${i}`)
    const draft = randomUUID()
    await saveDraft(site, alice, draft, { title: 'Many Tags', version_name: '1', tags: [...invented, 'ADVENTURE', 'space'] })
    const page = await site.app.inject({ url: `/create/${draft}/`, headers: alice.headers })
    assert.equal(page.statusCode, 200)
    assert.match(page.body, /<li data-tag="Adventure"><span class="chip cat-kind">Adventure/, 'the chip has the tag\'s spelling and color')
    assert.match(page.body, /<li data-tag="Space"><span class="chip cat-theme">Space/)
    assert.match(page.body, /<li data-tag="invented-1199"><span class="chip">invented-1199/, 'an unknown name: a plain chip')
    await upload(site, alice, 'version', await datapack(48), { draft })
    const res = await publish(alice, { draft })
    assert.equal(res.statusCode, 201, res.body)
    assert.deepEqual((res.json() as PackJson).tags.map((t) => t.name), ['Adventure', 'Space'])
  })

  test('missing title, version_name and version upload: 400 naming each, draft kept', async () => {
    const draft = randomUUID()
    await saveDraft(site, alice, draft, { summary: 'nothing else' })
    const detail = expectError(await publish(alice, { draft }), 400)
    assert.match(detail, /title/)
    assert.match(detail, /version_name/)
    assert.match(detail, /version upload/)

    await saveDraft(site, alice, draft, { title: '   ', version_name: '2.0' })
    await upload(site, alice, 'media', png(), { draft })
    const second = expectError(await publish(alice, { draft }), 400)
    assert.match(second, /missing: title, a version upload$/)

    await saveDraft(site, alice, draft, { title: 'Has Title' })
    await upload(site, alice, 'version', await datapack(48), { draft })
    expectError(await publish(alice, { draft }), 400, /missing: version_name$/)
    assert.equal((await site.app.inject({ url: `/api/draft/?draft=${draft}`, headers: alice.headers })).statusCode, 200)
  })

  test('more than one version upload is 400', async () => {
    const draft = randomUUID()
    await saveDraft(site, alice, draft, { title: 'Two Archives', version_name: '1' })
    await upload(site, alice, 'version', await datapack(48), { draft })
    await upload(site, alice, 'version', await datapack(57), { draft })
    expectError(await publish(alice, { draft }), 400, /2 version uploads/)
  })

  test('a title without a letter or digit is 400', async () => {
    const draft = randomUUID()
    await saveDraft(site, alice, draft, { title: '!!! ???', version_name: '1' })
    await upload(site, alice, 'version', await datapack(48), { draft })
    expectError(await publish(alice, { draft }), 400, /title must contain a letter or digit/)
  })

  test('a pack id already taken in the namespace is 409 and changes nothing', async () => {
    await publishPack(site, alice, { title: 'Taken Name' })
    const draft = randomUUID()
    await saveDraft(site, alice, draft, { title: 'TAKEN   name!', version_name: '9' })
    const u = await upload(site, alice, 'version', await datapack(48), { draft })
    const packs = await countRows('packs')
    const files = await storedFiles(site)

    expectError(await publish(alice, { draft }), 409, /alice:taken-name/)
    assert.equal(await countRows('packs'), packs)
    assert.deepEqual(await storedFiles(site), files)
    const kept = await site.app.inject({ url: `/api/draft/?draft=${draft}`, headers: alice.headers })
    assert.equal(kept.statusCode, 200)
    assert.deepEqual((kept.json() as { uploads: { uuid: string }[] }).uploads.map((x) => x.uuid), [u.uuid])

    // The same title in another namespace is a different pack.
    const other = await publishPack(site, bob, { title: 'Taken Name' })
    assert.equal(other.id, 'bob:taken-name')
  })

  test('a failure inside the transaction leaves draft, uploads, files and packs unchanged', async () => {
    const draft = randomUUID()
    await saveDraft(site, alice, draft, { title: 'Doomed Publish', version_name: '1', tags: ['Space'] })
    await upload(site, alice, 'thumbnail', png(), { draft })
    await upload(site, alice, 'thumbnail', png(2, 2), { draft })
    await upload(site, alice, 'media', png(), { draft })
    await upload(site, alice, 'version', await datapack(48), { draft })
    const counts = async () => Promise.all((['packs', 'versions', 'pack_tags', 'pack_media', 'uploads', 'drafts', 'files'] as const).map(countRows))
    const before = await counts()
    const files = await storedFiles(site)
    // The last insert of the publish fails (a trigger stands in for, say, a lost connection).
    if (onPostgres) {
      await sql`create function fail_versions() returns trigger language plpgsql as $$ begin raise exception 'injected failure'; end $$`.execute(site.app.db)
      await sql`create trigger fail_versions before insert on versions for each row execute function fail_versions()`.execute(site.app.db)
    } else {
      await sql`create trigger fail_versions before insert on versions begin select raise(abort, 'injected failure'); end`.execute(site.app.db)
    }
    try {
      const res = await publish(alice, { draft })
      expectError(res, 500, /internal server error/)
    } finally {
      await sql`drop trigger fail_versions${onPostgres ? sql` on versions` : sql``}`.execute(site.app.db)
      if (onPostgres) await sql`drop function fail_versions()`.execute(site.app.db)
    }
    assert.deepEqual(await counts(), before)
    assert.deepEqual(await storedFiles(site), files, 'not even the extra thumbnail was deleted')
    const res = await publish(alice, { draft })
    assert.equal(res.statusCode, 201, 'the same draft publishes once the fault is gone')
  })

  test('a missing, foreign or malformed draft', async () => {
    expectError(await publish(alice, { draft: randomUUID() }), 404, /draft not found/)
    expectError(await publish(alice, { draft: 'abc' }), 400, /draft/)
    expectError(await publish(alice, {}), 400, /draft/)
    const draft = randomUUID()
    await saveDraft(site, alice, draft, { title: 'Not Bobs', version_name: '1' })
    await upload(site, alice, 'version', await datapack(48), { draft })
    expectError(await publish(bob, { draft }), 404, /draft not found/)
    assert.equal((await site.app.inject({ url: `/api/draft/?draft=${draft}`, headers: alice.headers })).statusCode, 200)
  })

  test('a published draft cannot be published again', async () => {
    const draft = randomUUID()
    await saveDraft(site, alice, draft, { title: 'Once Only', version_name: '1' })
    await upload(site, alice, 'version', await datapack(48), { draft })
    assert.equal((await publish(alice, { draft })).statusCode, 201)
    expectError(await publish(alice, { draft }), 404)
  })
})
