// Managing versions and deleting packs (issue 10, items 2, 3 and 9): edit a
// changelog, yank and un-yank (still downloadable, never latest), delete a
// version (its file goes unless still used), delete a pack (its id held for
// 30 days). Owner and staff only; anyone else gets 404, as for drafts.
import { randomUUID } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { buildApp } from '../../src/app.js'
import type { App } from '../../src/http/types.js'
import { expectError, siteWith, storedFiles, type TestSite, type TestUser } from '../helpers/app.js'
import { datapack, multipart } from '../helpers/fixtures.js'
import { pathOf, publishPack, saveDraft, upload, type PackJson } from '../helpers/packs.js'

let now = Date.parse('2026-11-23T12:00:00Z')
let site: TestSite
let alice: TestUser
let bob: TestUser
let root: TestUser

before(async () => {
  ;({ site, alice, bob, root } = await siteWith({ users: ['alice', 'bob'], staff: ['root'], clock: () => now }))
})
after(() => site.close())

type Headers = Record<string, string>
const packUrl = (pack: PackJson) => `/api/packs/${pack.namespace}/${pack.pack_id}/`
const latest = (pack: PackJson, app: App = site.app) => app.inject({ url: `${packUrl(pack)}latest`, headers: site.gate })
const patchVersion = (pack: PackJson, versionId: string, headers: Headers, payload: Record<string, unknown>) =>
  site.app.inject({ method: 'PATCH', url: `${packUrl(pack)}versions/${versionId}/`, headers, payload })
const deleteVersion = (pack: PackJson, versionId: string, headers: Headers) =>
  site.app.inject({ method: 'DELETE', url: `${packUrl(pack)}versions/${versionId}/`, headers })
const getPack = async (pack: PackJson, headers: Headers = site.gate): Promise<PackJson> => {
  const res = await site.app.inject({ url: packUrl(pack), headers })
  assert.equal(res.statusCode, 200, res.body)
  return res.json() as PackJson
}

async function addVersion(user: TestUser, pack: PackJson, name: string): Promise<PackJson> {
  const body = multipart([
    { name: 'version_name', value: name },
    { name: 'file', value: await datapack(61), filename: `${name}.zip`, contentType: 'application/zip' },
  ])
  const res = await site.app.inject({ method: 'POST', url: `${packUrl(pack)}versions/`, headers: { ...user.headers, ...body.headers }, payload: body.payload })
  assert.equal(res.statusCode, 201, res.body)
  return res.json() as PackJson
}

const versionNamed = (pack: PackJson, name: string) => pack.versions.find((v) => v.name === name)!

describe('editing and yanking versions', () => {
  let pack: PackJson
  before(async () => {
    pack = await publishPack(site, alice, { title: 'Yank Me', version_name: '1.0', changelog: 'first' })
    pack = await addVersion(alice, pack, '2.0')
  })

  test('the owner edits a changelog; the answer is the pack, and the audit log records it', async () => {
    const res = await patchVersion(pack, versionNamed(pack, '1.0').id, alice.headers, { changelog: 'First release, *fixed* typo' })
    assert.equal(res.statusCode, 200, res.body)
    assert.equal(versionNamed(res.json() as PackJson, '1.0').changelog, 'First release, *fixed* typo')
    const audit = await site.app.inject({ url: '/api/audit/?target_type=version', headers: root.headers })
    assert.equal(audit.statusCode, 200, audit.body)
    assert.ok((audit.json() as { items: { action: string; target: string; actor: string }[] }).items
      .some((e) => e.action === 'version.edit' && e.target === 'alice:yank-me@1.0' && e.actor === 'alice'))
  })

  test('a yanked version is never latest, stays downloadable, and un-yanking restores it', async () => {
    const v2 = versionNamed(pack, '2.0')
    let check = await latest(pack)
    assert.equal(check.json().version, '2.0')
    const etag = String(check.headers.etag)

    const yanked = await patchVersion(pack, v2.id, alice.headers, { yanked: true })
    assert.equal(yanked.statusCode, 200, yanked.body)
    const after = yanked.json() as PackJson
    assert.equal(versionNamed(after, '2.0').yanked, true)
    check = await latest(pack)
    assert.equal(check.statusCode, 200)
    assert.equal(check.json().version, '1.0', 'the update-check skips the yanked version at once')
    assert.notEqual(check.headers.etag, etag)
    const listed = await site.app.inject({ url: '/api/packs/?q=yank%20me', headers: site.gate })
    assert.equal(listed.json().items[0].latest_version.name, '1.0', 'the listing skips it too')
    const download = await site.app.inject({ url: pathOf(v2.download_url), headers: site.gate })
    assert.equal(download.statusCode, 200, 'still downloadable by its file URL')
    const page = await site.app.inject({ url: `/packs/${pack.namespace}/${pack.pack_id}/`, headers: { ...site.gate, accept: 'text/html' } })
    assert.match(page.body, /Yanked/, 'the page marks it')

    const back = await patchVersion(pack, v2.id, alice.headers, { yanked: false })
    assert.equal(back.statusCode, 200, back.body)
    assert.equal((await latest(pack)).json().version, '2.0')
  })

  test('yanking every version leaves no latest: the update-check is 404 saying so; the listing shows null', async () => {
    const solo = await publishPack(site, alice, { title: 'Solo', version_name: 'only' })
    assert.equal((await patchVersion(solo, solo.versions[0]!.id, alice.headers, { yanked: true })).statusCode, 200)
    expectError(await latest(solo), 404, /no version to offer/)
    const listed = await site.app.inject({ url: '/api/packs/?q=solo', headers: site.gate })
    assert.equal(listed.json().items[0].latest_version, null)
    assert.equal((await patchVersion(solo, solo.versions[0]!.id, alice.headers, { yanked: false })).statusCode, 200)
    assert.equal((await latest(solo)).json().version, 'only')
  })

  test("someone else's pack is 404; staff may manage anyone's; bad ids and bodies are refused", async () => {
    const v1 = versionNamed(pack, '1.0')
    expectError(await patchVersion(pack, v1.id, bob.headers, { yanked: true }), 404, /pack not found/)
    expectError(await deleteVersion(pack, v1.id, bob.headers), 404, /pack not found/)
    expectError(await patchVersion(pack, v1.id, site.gate, { yanked: true }), 401)
    expectError(await patchVersion(pack, 'not-a-uuid', alice.headers, { yanked: true }), 404, /version not found/)
    expectError(await patchVersion(pack, '00000000-0000-4000-8000-000000000000', alice.headers, { yanked: true }), 404)
    expectError(await patchVersion(pack, v1.id, alice.headers, { yanked: 'maybe' }), 400)
    expectError(await patchVersion(pack, v1.id, alice.headers, { name: 'renamed' }), 400)
    expectError(await patchVersion(pack, v1.id, alice.headers, { changelog: 'x'.repeat(20_001) }), 400)
    const staff = await patchVersion(pack, v1.id, root.headers, { changelog: 'edited by staff' })
    assert.equal(staff.statusCode, 200, staff.body)
    assert.equal(versionNamed(staff.json() as PackJson, '1.0').changelog, 'edited by staff')
  })
})

describe('deleting versions', () => {
  test('the version and its file go; deleting the last one leaves a pack the update-check calls empty', async () => {
    let pack = await publishPack(site, alice, { title: 'Delete Versions', version_name: 'a' })
    pack = await addVersion(alice, pack, 'b')
    const b = versionNamed(pack, 'b')
    const filesBefore = (await storedFiles(site)).length
    const gone = await deleteVersion(pack, b.id, alice.headers)
    assert.equal(gone.statusCode, 204, gone.body)
    assert.equal(gone.body, '')
    assert.equal((await storedFiles(site)).length, filesBefore - 1, 'its stored bytes are gone')
    expectError(await site.app.inject({ url: pathOf(b.download_url), headers: site.gate }), 404)
    assert.equal((await latest(pack)).json().version, 'a')
    expectError(await deleteVersion(pack, b.id, alice.headers), 404, /version not found/)

    const staff = await deleteVersion(pack, versionNamed(pack, 'a').id, root.headers)
    assert.equal(staff.statusCode, 204, 'staff may delete anyone\'s version')
    expectError(await latest(pack), 404, /no version to offer/)
    assert.deepEqual((await getPack(pack)).versions, [])
  })

  test('a file another record still uses is kept', async () => {
    const pack = await publishPack(site, alice, { title: 'Shared File', version_name: 'one' })
    const v = pack.versions[0]!
    const fileId = pathOf(v.download_url).split('/')[3]!
    // Another record using the same file: the pack's thumbnail points at it (as an import or a future feature could).
    await site.app.db.updateTable('packs').set({ thumbnail_file_id: fileId }).where('namespace', '=', 'alice').where('pack_id', '=', 'shared-file').execute()
    assert.equal((await deleteVersion(pack, v.id, alice.headers)).statusCode, 204)
    const still = await site.app.inject({ url: `/api/files/${fileId}/`, headers: site.gate })
    assert.equal(still.statusCode, 200, 'the file stays while the thumbnail uses it')
  })
})

describe('deleting a pack', () => {
  test('pack, versions, media and files go; the id is refused to a new pack for 30 days, then free', async () => {
    const pack = await publishPack(site, alice, { title: 'Gone Soon', version_name: '1' }, { thumbnail: true })
    const filesBefore = (await storedFiles(site)).length
    expectError(await site.app.inject({ method: 'DELETE', url: packUrl(pack), headers: bob.headers }), 404, /pack not found/)
    const res = await site.app.inject({ method: 'DELETE', url: packUrl(pack), headers: alice.headers })
    assert.equal(res.statusCode, 204, res.body)
    assert.equal((await storedFiles(site)).length, filesBefore - 2, 'archive and thumbnail are gone from storage')
    expectError(await site.app.inject({ url: packUrl(pack), headers: site.gate }), 404)
    expectError(await latest(pack), 404, /pack not found/)

    // The same id, by the same owner, within 30 days: refused.
    now += 29 * 86_400_000
    const draft = randomUUID()
    await saveDraft(site, alice, draft, { title: 'Gone Soon', version_name: '2' })
    await upload(site, alice, 'version', await datapack(48), { draft })
    const publish = () => site.app.inject({ method: 'POST', url: '/api/draft/publish/', headers: alice.headers, payload: { draft } })
    expectError(await publish(), 409, /held until/)
    // Past the hold: free again.
    now += 2 * 86_400_000
    const again = await publish()
    assert.equal(again.statusCode, 201, again.body)
    assert.equal((again.json() as PackJson).pack_id, 'gone-soon')
  })

  test('staff may delete anyone\'s pack, and the audit log says who', async () => {
    const pack = await publishPack(site, bob, { title: 'Taken Down', version_name: '1' })
    assert.equal((await site.app.inject({ method: 'DELETE', url: packUrl(pack), headers: root.headers })).statusCode, 204)
    const audit = await site.app.inject({ url: '/api/audit/?target=bob:taken-down', headers: root.headers })
    const entries = (audit.json() as { items: { action: string; actor: string }[] }).items
    assert.ok(entries.some((e) => e.action === 'pack.delete' && e.actor === 'root'), audit.body)
  })
})

describe('on every instance', () => {
  test('a yank or a delete through one instance changes the other\'s update-check at once', async (t) => {
    if (site.config.redisUrl === null) return t.skip('needs REDIS_URL (the scaled combination): one instance alone has nothing to share')
    const other = await buildApp(site.config, { logger: false, sweep: false })
    try {
      await other.ready()
      let pack = await publishPack(site, alice, { title: 'Two Instances', version_name: 'v1' })
      pack = await addVersion(alice, pack, 'v2')
      assert.equal((await latest(pack, other)).json().version, 'v2', 'the other instance caches v2')
      assert.equal((await patchVersion(pack, versionNamed(pack, 'v2').id, alice.headers, { yanked: true })).statusCode, 200)
      assert.equal((await latest(pack, other)).json().version, 'v1')
      assert.equal((await deleteVersion(pack, versionNamed(pack, 'v1').id, alice.headers)).statusCode, 204)
      expectError(await latest(pack, other), 404, /no version to offer/)
      assert.equal((await site.app.inject({ method: 'DELETE', url: packUrl(pack), headers: alice.headers })).statusCode, 204)
      expectError(await latest(pack, other), 404, /pack not found/)
    } finally {
      await other.close()
    }
  })
})

describe('the delete page', () => {
  test('owner and staff get it, others 404; the server checks the typed id before it deletes', async () => {
    const pack = await publishPack(site, alice, { title: 'Page Delete', version_name: '1' })
    const login = async (user: TestUser) => {
      const res = await site.app.inject({ method: 'POST', url: '/login/', headers: site.gate, payload: { username: user.username, password: user.password } })
      const cookie = String(res.headers['set-cookie']).split(';')[0]!
      const page = await site.app.inject({ url: '/packs/alice/page-delete/delete/', headers: { ...site.gate, cookie, accept: 'text/html' } })
      return { cookie, page }
    }
    const bobView = await login(bob)
    assert.equal(bobView.page.statusCode, 404, 'someone else\'s pack: 404 page')
    const { cookie, page } = await login(alice)
    assert.equal(page.statusCode, 200)
    assert.match(page.body, /Type the pack id <code>page-delete<\/code> to confirm/)
    assert.match(page.body, /held for 30 days/)
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(page.body)![1]!
    const post = (confirm: string) => site.app.inject({
      method: 'POST', url: '/packs/alice/page-delete/delete/', headers: { ...site.gate, cookie, accept: 'text/html' }, payload: { confirm, csrf_token: csrf },
    })
    const wrong = await post('page-delet')
    assert.equal(wrong.statusCode, 400)
    assert.match(wrong.body, /type the pack id/)
    assert.equal((await getPack(pack)).title, 'Page Delete', 'nothing deleted')
    const done = await post('page-delete')
    assert.equal(done.statusCode, 303, done.body)
    assert.equal(done.headers.location, '/users/alice/?deleted=alice%3Apage-delete')
    expectError(await site.app.inject({ url: packUrl(pack), headers: site.gate }), 404)
  })
})
