// Managing versions: edit a changelog, yank and
// un-yank (still downloadable, never latest anywhere), delete a version (its
// file goes unless still used). Owner and staff only; anyone else gets 404, as
// for drafts. Deleting whole packs: ./pack-delete.test.ts.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { until } from '../helpers/wait.js'
import { buildApp } from '../../src/app.js'
import type { App } from '../../src/http/types.js'
import { expectError, siteWith, storedFiles, type TestSite, type TestUser } from '../helpers/app.js'
import { datapack, multipart } from '../helpers/fixtures.js'
import { pathOf, publishPack, type PackJson } from '../helpers/packs.js'

let site: TestSite
let alice: TestUser
let bob: TestUser
let root: TestUser

before(async () => {
  ;({ site, alice, bob, root } = await siteWith({ users: ['alice', 'bob'], staff: ['root'] }))
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

  test('yanking every version leaves no latest: the update-check is 404 saying so; the listing shows null, search leaves it out', async () => {
    const solo = await publishPack(site, alice, { title: 'Solo', version_name: 'only' })
    assert.equal((await patchVersion(solo, solo.versions[0]!.id, alice.headers, { yanked: true })).statusCode, 200)
    expectError(await latest(solo), 404, /no version to offer/)
    const listed = await site.app.inject({ url: '/api/packs/?member=alice&per_page=50', headers: site.gate })
    assert.equal(listed.json().items.find((p: { pack_id: string }) => p.pack_id === 'solo').latest_version, null)
    // A search finds packs a player can install: one with no public version is no hit.
    assert.equal((await site.app.inject({ url: '/api/packs/?q=solo', headers: site.gate })).json().total, 0)
    assert.equal((await patchVersion(solo, solo.versions[0]!.id, alice.headers, { yanked: false })).statusCode, 200)
    assert.equal((await latest(solo)).json().version, 'only')
    assert.equal((await site.app.inject({ url: '/api/packs/?q=solo', headers: site.gate })).json().total, 1, 'found again once a version is public')
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

describe('the pack page and the audit log', () => {
  let pack: PackJson
  before(async () => {
    pack = await publishPack(site, alice, { title: 'Page Marks', version_name: 'old' })
    pack = await addVersion(alice, pack, 'new')
    assert.equal((await patchVersion(pack, versionNamed(pack, 'new').id, alice.headers, { yanked: true })).statusCode, 200)
  })
  const page = (headers: Headers) =>
    site.app.inject({ url: `/packs/${pack.namespace}/${pack.pack_id}/`, headers: { ...headers, accept: 'text/html' } })
  const versionItem = (body: string, name: string) => {
    const item = body.split('<li class="').find((li) => li.includes(`class="version-name" id="vh-`) && li.includes(`>${name}</h3>`))
    assert.ok(item, `the page lists version ${name}`)
    return item
  }

  test('everyone sees the yanked version marked and the one before it as Latest', async () => {
    for (const headers of [site.gate, bob.headers, alice.headers]) {
      const res = await page(headers)
      assert.equal(res.statusCode, 200)
      const yanked = versionItem(res.body, 'new')
      assert.match(yanked, /^version yanked"/)
      assert.match(yanked, /class="yanked-badge"[^>]*>Yanked</)
      assert.doesNotMatch(yanked, /latest-badge/)
      assert.match(versionItem(res.body, 'old'), /class="latest-badge">Latest</)
    }
  })

  test('owner and staff get the version controls and the Delete pack link; others do not', async () => {
    const versionUrl = `/api/packs/alice/page-marks/versions/${versionNamed(pack, 'new').id}/`
    for (const [who, headers] of [['alice', alice.headers], ['root', root.headers]] as const) {
      const body = (await page(headers)).body
      assert.ok(body.includes(`action="${versionUrl}"`), `${who} gets the forms`)
      assert.match(versionItem(body, 'new'), />Un-yank</)
      assert.match(versionItem(body, 'old'), />Yank</)
      assert.match(body, /data-method="DELETE"/)
      assert.match(body, /href="\/packs\/alice\/page-marks\/delete\/"/)
    }
    for (const headers of [site.gate, bob.headers]) {
      const body = (await page(headers)).body
      assert.ok(!body.includes(versionUrl), 'no controls')
      assert.doesNotMatch(body, /\/delete\//)
    }
  })

  test('yank, un-yank and delete are in the audit log, with who did them', async () => {
    const v = versionNamed(pack, 'old')
    assert.equal((await patchVersion(pack, v.id, root.headers, { yanked: true })).statusCode, 200)
    assert.equal((await patchVersion(pack, v.id, alice.headers, { yanked: false })).statusCode, 200)
    // Asking for what is already so changes nothing and records nothing.
    assert.equal((await patchVersion(pack, v.id, alice.headers, { yanked: false })).statusCode, 200)
    assert.equal((await deleteVersion(pack, versionNamed(pack, 'new').id, alice.headers)).statusCode, 204)
    const audit = await site.app.inject({ url: '/api/audit/?target=alice:page-marks', headers: root.headers })
    assert.equal(audit.statusCode, 200, audit.body)
    const entries = (audit.json() as { items: { action: string; actor: string; target: string }[] }).items
      .map((e) => `${e.action} ${e.actor} ${e.target}`)
    assert.deepEqual(entries.filter((e) => !e.startsWith('version.publish') && !e.startsWith('pack.publish')), [
      'version.delete alice alice:page-marks@new',
      'version.unyank alice alice:page-marks@old',
      'version.yank root alice:page-marks@old',
      'version.yank alice alice:page-marks@new',
    ])
  })

  test('a version of another pack is not found through this one', async () => {
    const other = await publishPack(site, alice, { title: 'Other Pack', version_name: 'x' })
    expectError(await patchVersion(pack, other.versions[0]!.id, alice.headers, { yanked: true }), 404, /version not found/)
    expectError(await deleteVersion(pack, other.versions[0]!.id, alice.headers), 404, /version not found/)
    assert.equal((await getPack(other)).versions.length, 1)
  })

  test('a read-only token may not yank or delete (403, naming what it may do)', async () => {
    const login = await site.app.inject({ method: 'POST', url: '/login/', headers: site.gate, payload: { username: alice.username, password: alice.password } })
    assert.equal(login.statusCode, 200, login.body)
    const cookie = `packs_session=${login.cookies.find((c) => c.name === 'packs_session')!.value}`
    const created = await site.app.inject({
      method: 'POST', url: '/api/tokens/', headers: { cookie, 'x-csrf-token': (login.json() as { csrf_token: string }).csrf_token },
      payload: { name: 'read', scope: 'read' },
    })
    assert.equal(created.statusCode, 201, created.body)
    const read = { authorization: (created.json() as { authorization: string }).authorization }
    const v = versionNamed(pack, 'old')
    expectError(await patchVersion(pack, v.id, read, { yanked: true }), 403, /read-only/)
    expectError(await deleteVersion(pack, v.id, read), 403, /read-only/)
    assert.equal(versionNamed(await getPack(pack), 'old').yanked, false)
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

describe('on every instance', () => {
  test('a yank or a delete through one instance changes the other\'s update-check as soon as the change reaches it', async (t) => {
    if (site.config.redisUrl === null) return t.skip('needs REDIS_URL (the scaled combination): one instance alone has nothing to share')
    const other = await buildApp(site.config, { logger: false, sweep: false })
    try {
      await other.ready()
      let pack = await publishPack(site, alice, { title: 'Two Instances', version_name: 'v1' })
      pack = await addVersion(alice, pack, 'v2')
      assert.equal((await latest(pack, other)).json().version, 'v2', 'the other instance caches v2')
      // Each change reaches the other instance by Redis pub/sub, within milliseconds (update-check-feed.test.ts).
      const otherSays = (check: (res: Awaited<ReturnType<typeof latest>>) => boolean, what: string) =>
        until(async () => check(await latest(pack, other)) || undefined, what, 3000)
      assert.equal((await patchVersion(pack, versionNamed(pack, 'v2').id, alice.headers, { yanked: true })).statusCode, 200)
      await otherSays((res) => res.statusCode === 200 && res.json().version === 'v1', 'v1 after the yank')
      assert.equal((await deleteVersion(pack, versionNamed(pack, 'v1').id, alice.headers)).statusCode, 204)
      await otherSays((res) => res.statusCode === 404 && /no version to offer/.test(res.body), 'no version after the delete')
      assert.equal((await site.app.inject({ method: 'DELETE', url: packUrl(pack), headers: alice.headers })).statusCode, 204)
      await otherSays((res) => res.statusCode === 404 && /pack not found/.test(res.body), 'not found after the pack\'s deletion')
    } finally {
      await other.close()
    }
  })
})
