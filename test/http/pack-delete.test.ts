// Deleting a pack: the pack, its versions, tags,
// gallery, thumbnail and their files go (a file still used elsewhere stays),
// token reaches to it go, its namespace:pack_id is refused to every new pack
// for 30 days and free after. Owner and staff; anyone else gets 404, as for
// drafts. The typed-confirmation page checks the id on the server too.
import { randomUUID } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { expectError, siteWith, storedFiles, type TestSite, type TestUser } from '../helpers/app.js'
import { datapack, multipart, png } from '../helpers/fixtures.js'
import { pathOf, publishPack, saveDraft, seedTags, upload, type PackJson } from '../helpers/packs.js'

const DAY = 86_400_000
let now = Date.parse('2026-11-23T12:00:00Z')
let site: TestSite
let alice: TestUser
let bob: TestUser
let root: TestUser

before(async () => {
  ;({ site, alice, bob, root } = await siteWith({ users: ['alice', 'bob'], staff: ['root'], clock: () => now }))
  await seedTags(site)
})
after(() => site.close())

type Headers = Record<string, string>
const packUrl = (pack: Pick<PackJson, 'namespace' | 'pack_id'>) => `/api/packs/${pack.namespace}/${pack.pack_id}/`
const deletePack = (pack: PackJson, headers: Headers) => site.app.inject({ method: 'DELETE', url: packUrl(pack), headers })
const latest = (pack: PackJson) => site.app.inject({ url: `${packUrl(pack)}latest`, headers: site.gate })

interface Session { cookie: string; csrf: string }
async function sessionOf(user: TestUser): Promise<Session> {
  const res = await site.app.inject({ method: 'POST', url: '/login/', headers: site.gate, payload: { username: user.username, password: user.password } })
  assert.equal(res.statusCode, 200, res.body)
  return {
    cookie: `packs_session=${res.cookies.find((c) => c.name === 'packs_session')!.value}`,
    csrf: (res.json() as { csrf_token: string }).csrf_token,
  }
}

async function auditOf(target: string): Promise<{ action: string; actor: string; details: Record<string, unknown> }[]> {
  const res = await site.app.inject({ url: `/api/audit/?target=${encodeURIComponent(target)}`, headers: root.headers })
  assert.equal(res.statusCode, 200, res.body)
  return (res.json() as { items: { action: string; actor: string; details: Record<string, unknown> }[] }).items
}

/** A draft of `title` with a version, ready to publish; returns the publish call. */
async function draftOf(user: TestUser, title: string): Promise<() => Promise<Parameters<typeof expectError>[0]>> {
  const draft = randomUUID()
  await saveDraft(site, user, draft, { title, version_name: '1' })
  await upload(site, user, 'version', await datapack(48), { draft })
  return () => site.app.inject({ method: 'POST', url: '/api/draft/publish/', headers: user.headers, payload: { draft } })
}

describe('deleting a pack', () => {
  test('pack, versions, tags, gallery, thumbnail and files go; token reaches to it go; the audit log says what went', async () => {
    const draft = randomUUID()
    await saveDraft(site, alice, draft, { title: 'Full House', version_name: '1', category: 'theme', tags: ['Medieval'] })
    await upload(site, alice, 'version', await datapack(48), { draft })
    await upload(site, alice, 'thumbnail', png(), { draft })
    await upload(site, alice, 'media', png(2, 2), { draft, filename: 'a.png' })
    await upload(site, alice, 'media', png(3, 3), { draft, filename: 'b.png' })
    const published = await site.app.inject({ method: 'POST', url: '/api/draft/publish/', headers: alice.headers, payload: { draft } })
    assert.equal(published.statusCode, 201, published.body)
    let pack = published.json() as PackJson
    const body = multipart([
      { name: 'version_name', value: '2' },
      { name: 'file', value: await datapack(61), filename: '2.zip', contentType: 'application/zip' },
    ])
    const added = await site.app.inject({ method: 'POST', url: `${packUrl(pack)}versions/`, headers: { ...alice.headers, ...body.headers }, payload: body.payload })
    assert.equal(added.statusCode, 201, added.body)
    pack = added.json() as PackJson
    assert.equal(pack.versions.length, 2)
    assert.deepEqual(pack.tags.map((t) => t.name), ['Medieval'])
    assert.equal(pack.media.length, 2)
    assert.ok(pack.thumbnail_url)

    // A publish token for this pack and another: deleting the pack takes it off the token.
    const session = await sessionOf(alice)
    const other = await publishPack(site, alice, { title: 'Kept Pack' })
    const token = await site.app.inject({
      method: 'POST', url: '/api/tokens/', headers: { cookie: session.cookie, 'x-csrf-token': session.csrf },
      payload: { name: 'ci', scope: 'publish', packs: ['alice:full-house', 'alice:kept-pack'] },
    })
    assert.equal(token.statusCode, 201, token.body)
    const tokenId = (token.json() as { id: string }).id

    const fileIds = [
      ...pack.versions.map((v) => pathOf(v.download_url).split('/')[3]!),
      ...pack.media.map((m) => m.id),
    ]
    const { id: rowId } = await site.app.db.selectFrom('packs').select('id').where('namespace', '=', 'alice').where('pack_id', '=', 'full-house').executeTakeFirstOrThrow()
    const filesBefore = (await storedFiles(site)).length
    const res = await deletePack(pack, alice.headers)
    assert.equal(res.statusCode, 204, res.body)
    assert.equal(res.body, '')
    const gone = fileIds.length + 1
    assert.equal((await storedFiles(site)).length, filesBefore - gone, 'archives, gallery and thumbnail are gone from storage')
    for (const id of fileIds) expectError(await site.app.inject({ url: `/api/files/${id}/`, headers: site.gate }), 404)
    expectError(await site.app.inject({ url: packUrl(pack), headers: site.gate }), 404, /pack not found/)
    expectError(await latest(pack), 404, /pack not found/)
    const listed = await site.app.inject({ url: '/api/packs/?q=full%20house', headers: site.gate })
    assert.equal(listed.json().total, 0)

    const db = site.app.db
    assert.equal((await db.selectFrom('versions').select('id').where('id', 'in', pack.versions.map((v) => v.id)).execute()).length, 0)
    assert.equal((await db.selectFrom('files').select('id').where('id', 'in', fileIds).execute()).length, 0)
    for (const table of ['pack_tags', 'pack_media'] as const) {
      assert.equal((await db.selectFrom(table).select('pack_id').where('pack_id', '=', rowId).execute()).length, 0, table)
    }
    const reach = await db.selectFrom('token_packs').innerJoin('packs', 'packs.id', 'token_packs.pack_id')
      .select('packs.pack_id').where('token_packs.token_id', '=', tokenId).execute()
    assert.deepEqual(reach.map((r) => r.pack_id), ['kept-pack'], 'the token keeps only the pack that is left')
    assert.equal((await site.app.inject({ url: packUrl(other), headers: site.gate })).statusCode, 200)

    const hold = await db.selectFrom('pack_id_holds').selectAll().where('namespace', '=', 'alice').where('pack_id', '=', 'full-house').executeTakeFirst()
    assert.equal(hold && Date.parse(hold.held_until), now + 30 * DAY, 'held for 30 days from the app clock')
    const [entry] = await auditOf('alice:full-house')
    assert.equal(entry?.action, 'pack.delete')
    assert.equal(entry.actor, 'alice')
    assert.equal(entry.details.title, 'Full House')
    assert.equal(entry.details.versions, pack.versions.length)

    expectError(await deletePack(pack, alice.headers), 404, /pack not found/)
  })

  test('a file another pack still uses is kept', async () => {
    const doomed = await publishPack(site, alice, { title: 'Doomed' }, { thumbnail: true })
    const keeper = await publishPack(site, alice, { title: 'Keeper' })
    const thumbId = /\/api\/files\/([0-9a-f-]{36})\//.exec(doomed.thumbnail_url!)![1]!
    // Another record using the same file (as an import, or a later feature, could make it).
    await site.app.db.updateTable('packs').set({ thumbnail_file_id: thumbId }).where('namespace', '=', 'alice').where('pack_id', '=', 'keeper').execute()
    const filesBefore = (await storedFiles(site)).length
    assert.equal((await deletePack(doomed, alice.headers)).statusCode, 204)
    assert.equal((await storedFiles(site)).length, filesBefore - 1, 'only the archive went')
    assert.equal((await site.app.inject({ url: `/api/files/${thumbId}/`, headers: site.gate })).statusCode, 200, 'the shared thumbnail stays')
    assert.ok((await site.app.inject({ url: packUrl(keeper), headers: site.gate })).json().thumbnail_url)
  })

  test("someone else's pack is 404; no user is 401; a read-only token is 403; staff may delete anyone's", async () => {
    const pack = await publishPack(site, bob, { title: 'Taken Down' })
    expectError(await deletePack(pack, alice.headers), 404, /pack not found/)
    expectError(await deletePack(pack, site.gate), 401)
    const session = await sessionOf(bob)
    const token = await site.app.inject({
      method: 'POST', url: '/api/tokens/', headers: { cookie: session.cookie, 'x-csrf-token': session.csrf }, payload: { name: 'r', scope: 'read' },
    })
    expectError(await deletePack(pack, { authorization: (token.json() as { authorization: string }).authorization }), 403, /read-only/)
    assert.equal((await site.app.inject({ url: packUrl(pack), headers: site.gate })).statusCode, 200, 'still there')
    assert.equal((await deletePack(pack, root.headers)).statusCode, 204)
    const [entry] = await auditOf('bob:taken-down')
    assert.equal(entry?.action, 'pack.delete')
    assert.equal(entry.actor, 'root')
  })

  test('a hidden pack (only its owner and staff see it) can be deleted by them and is 404 to others', async () => {
    const pack = await publishPack(site, bob, { title: 'Hidden One' })
    await site.app.db.updateTable('packs').set({ hidden_at: new Date(now).toISOString() }).where('namespace', '=', 'bob').where('pack_id', '=', 'hidden-one').execute()
    expectError(await deletePack(pack, alice.headers), 404, /pack not found/)
    assert.equal((await deletePack(pack, bob.headers)).statusCode, 204)
  })
})

describe('the id hold', () => {
  test('the id is refused to a new pack for 30 days, with the date it is free, then accepted', async () => {
    const pack = await publishPack(site, alice, { title: 'Gone Soon' })
    const heldFrom = now
    assert.equal((await deletePack(pack, alice.headers)).statusCode, 204)
    const freeOn = new Date(heldFrom + 30 * DAY).toISOString()

    // A title that makes the same id, within the 30 days: refused, naming the date.
    const publish = await draftOf(alice, 'Gone  Soon!')
    now = heldFrom + 29 * DAY
    const refused = expectError(await publish(), 409, /held until/)
    assert.ok(refused.includes(freeOn), refused)
    now = heldFrom + 30 * DAY - 1
    expectError(await publish(), 409, /held until/)
    // Another owner's namespace is another id: not held.
    const bobs = await (await draftOf(bob, 'Gone Soon'))()
    assert.equal(bobs.statusCode, 201, bobs.body)
    // Past the hold: free again, and the draft that was refused publishes as it was.
    now = heldFrom + 30 * DAY + 1
    const again = await publish()
    assert.equal(again.statusCode, 201, again.body)
    assert.equal((again.json() as PackJson).pack_id, 'gone-soon')
    assert.equal((await latest(again.json() as PackJson)).statusCode, 200)
  })

  test('deleting the id again after a hold ran out holds it again', async () => {
    const first = await publishPack(site, alice, { title: 'Twice' })
    assert.equal((await deletePack(first, alice.headers)).statusCode, 204)
    now += 31 * DAY
    const second = await publishPack(site, alice, { title: 'Twice' })
    assert.equal((await deletePack(second, root.headers)).statusCode, 204)
    now += 10 * DAY
    expectError(await (await draftOf(alice, 'Twice'))(), 409, /held until/)
  })
})

describe('the delete page', () => {
  const pageUrl = '/packs/alice/page-delete/delete/'
  let pack: PackJson
  before(async () => {
    pack = await publishPack(site, alice, { title: 'Page Delete' }, { thumbnail: true })
  })
  const html = (headers: Headers) => ({ ...site.gate, ...headers, accept: 'text/html' })

  test('owner and staff get it; someone else gets the 404 page; no one signed in is sent to sign in', async () => {
    const owner = await sessionOf(alice)
    const page = await site.app.inject({ url: pageUrl, headers: html({ cookie: owner.cookie }) })
    assert.equal(page.statusCode, 200)
    assert.match(page.body, /Type the pack id <code>page-delete<\/code> to confirm/)
    assert.match(page.body, /held for 30 days/)
    assert.match(page.body, /its 1 version\(s\), its gallery,\s+its thumbnail and their 2 stored file\(s\)/)
    assert.match(page.body, /data-api="\/api\/packs\/alice\/page-delete\/"/)
    assert.equal((await site.app.inject({ url: pageUrl, headers: html({ cookie: (await sessionOf(root)).cookie }) })).statusCode, 200)
    const other = await site.app.inject({ url: pageUrl, headers: html({ cookie: (await sessionOf(bob)).cookie }) })
    assert.equal(other.statusCode, 404)
    assert.doesNotMatch(other.body, /Page Delete/)
    const anonymous = await site.app.inject({ url: pageUrl, headers: html({}) })
    assert.ok([302, 303, 401].includes(anonymous.statusCode), `${anonymous.statusCode}`)
  })

  test('the server checks the typed id and the CSRF token; then deletes and goes to the profile, which says so', async () => {
    const owner = await sessionOf(alice)
    const post = (confirm: string, csrf = owner.csrf, cookie = owner.cookie) => site.app.inject({
      method: 'POST', url: pageUrl, headers: html({ cookie }), payload: { confirm, csrf_token: csrf },
    })
    const wrong = await post('page-delet')
    assert.equal(wrong.statusCode, 400)
    assert.match(wrong.body, /type the pack id &quot;page-delete&quot; to confirm|type the pack id "page-delete" to confirm/)
    assert.equal((await post('page-delete', 'not-the-token')).statusCode, 403)
    const bobs = await sessionOf(bob)
    assert.equal((await post('page-delete', bobs.csrf, bobs.cookie)).statusCode, 404, "someone else's pack")
    assert.equal((await site.app.inject({ url: packUrl(pack), headers: site.gate })).statusCode, 200, 'nothing deleted yet')

    const done = await post('  Page-Delete ')
    assert.equal(done.statusCode, 303, done.body)
    assert.equal(done.headers.location, '/users/alice/?deleted=alice%3Apage-delete')
    expectError(await site.app.inject({ url: packUrl(pack), headers: site.gate }), 404)
    const profile = await site.app.inject({ url: String(done.headers.location), headers: html({ cookie: owner.cookie }) })
    assert.equal(profile.statusCode, 200)
    assert.match(profile.body, /class="notice" role="status">Pack alice:page-delete deleted\. Its id is held for 30 days/)
  })

  test('the profile notice names only a pack id of that profile (a crafted link cannot put words on it)', async () => {
    for (const query of ['?deleted=bob%3Aanything', '?deleted=alice%3ASend%20money', '?deleted=alice:x&deleted=alice:y', `?deleted=alice:${'a'.repeat(65)}`]) {
      const res = await site.app.inject({ url: `/users/alice/${query}`, headers: html({}) })
      assert.equal(res.statusCode, 200, query)
      assert.doesNotMatch(res.body, /class="notice"/, query)
    }
  })
})
