// The audit log: who did what to which pack, version or
// account, and when; GET /api/audit/ and the page /staff/audit/, staff only.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { expectError, siteWith, type TestSite, type TestUser } from '../helpers/app.js'
import { datapack, multipart } from '../helpers/fixtures.js'
import { publishPack, type PackJson } from '../helpers/packs.js'
import { recordAudit, userTarget } from '../../src/audit/service.js'

const HTML = { accept: 'text/html' }

interface Entry { id: string; created_at: string; actor: string; action: string; target_type: string; target: string; details: Record<string, unknown> }
interface AuditList { items: Entry[]; page: number; per_page: number; total: number }

let site: TestSite
let alice: TestUser
let bob: TestUser
let root: TestUser
let pack: PackJson

async function addVersion(user: TestUser, p: PackJson, name: string): Promise<void> {
  const body = multipart([{ name: 'version_name', value: name }, { name: 'file', value: await datapack(48), filename: 'v.zip', contentType: 'application/zip' }])
  const res = await site.app.inject({ method: 'POST', url: `/api/packs/${p.namespace}/${p.pack_id}/versions/`, headers: { ...user.headers, ...body.headers }, payload: body.payload })
  assert.equal(res.statusCode, 201, res.body)
}

const list = (query: string, headers: Record<string, string> = root.headers) => site.app.inject({ url: `/api/audit/${query}`, headers })
async function entries(query = ''): Promise<AuditList> {
  const res = await list(query)
  assert.equal(res.statusCode, 200, res.body)
  return res.json() as AuditList
}

before(async () => {
  ;({ site, alice, bob, root } = await siteWith({ users: ['alice', 'bob'], staff: ['root'] }))
  pack = await publishPack(site, alice, { title: 'Logged Pack', version_name: '1.0' })
  await addVersion(alice, pack, '1.1-Beta')
  await publishPack(site, bob, { title: 'Other Pack' })
  const hide = await site.app.inject({ method: 'POST', url: '/api/packs/bob/other-pack/hide/', headers: root.headers, payload: { reason: 'spam <b>links</b>' } })
  assert.equal(hide.statusCode, 200, hide.body)
  const disable = await site.app.inject({ method: 'POST', url: '/api/users/Bob/disable/', headers: root.headers, payload: {} })
  assert.equal(disable.statusCode, 200, disable.body)
})
after(() => site.close())

describe('GET /api/audit/', () => {
  test('publishing, new versions, hiding and disabling are recorded, newest first, with who, what, which and when', async () => {
    const all = await entries()
    assert.equal(all.total, 5)
    assert.equal(all.page, 1)
    assert.equal(all.per_page, 50)
    assert.deepEqual(all.items.map((e) => [e.actor, e.action, e.target_type, e.target]), [
      ['root', 'user.disable', 'user', 'bob'],
      ['root', 'pack.hide', 'pack', 'bob:other-pack'],
      ['bob', 'pack.publish', 'pack', 'bob:other-pack'],
      ['alice', 'version.publish', 'version', 'alice:logged-pack@1.1-Beta'],
      ['alice', 'pack.publish', 'pack', 'alice:logged-pack'],
    ])
    assert.deepEqual(all.items[4]!.details, { title: 'Logged Pack', version: '1.0' })
    assert.deepEqual(all.items[1]!.details, { reason: 'spam <b>links</b>' })
    const times = all.items.map((e) => e.created_at)
    assert.deepEqual([...times].sort().reverse(), times, 'newest first')
    for (const e of all.items) {
      assert.match(e.id, /^[0-9a-f-]{36}$/)
      assert.match(e.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    }
  })

  test('filters: a pack includes its versions, in any case; a version exactly; target_type; actor in any case; action; they combine', async () => {
    const targets = async (query: string) => (await entries(query)).items.map((e) => `${e.action} ${e.target}`)
    assert.deepEqual(await targets('?target=ALICE:Logged-Pack'), ['version.publish alice:logged-pack@1.1-Beta', 'pack.publish alice:logged-pack'])
    assert.deepEqual(await targets('?target=alice:logged-pack@1.1-Beta'), ['version.publish alice:logged-pack@1.1-Beta'])
    assert.deepEqual(await targets('?target=alice:logged-pack@1.1-beta'), [], 'a version name keeps its case')
    assert.deepEqual(await targets('?target=alice:logged'), [], 'no prefix matching')
    assert.deepEqual(await targets('?target_type=version'), ['version.publish alice:logged-pack@1.1-Beta'])
    assert.deepEqual(await targets('?target=BOB'), ['user.disable bob'])
    assert.deepEqual(await targets('?actor=ROOT'), ['user.disable bob', 'pack.hide bob:other-pack'])
    assert.deepEqual(await targets('?actor=root&action=pack.hide'), ['pack.hide bob:other-pack'])
    assert.deepEqual(await targets('?actor=alice&target_type=pack'), ['pack.publish alice:logged-pack'])
    assert.deepEqual(await targets('?actor=nobody'), [])
    assert.deepEqual(await targets('?target=50%25_%25'), [], '% and _ are plain characters')
    const filtered = await entries('?actor=alice')
    assert.equal(filtered.total, 2)
  })

  test('owners\' and staff\'s changes to versions and packs are recorded: changelog, yank, un-yank, delete', async () => {
    const managed = await publishPack(site, alice, { title: 'Managed Pack', version_name: '1.0' })
    await addVersion(alice, managed, '2.0')
    const versions = ((await site.app.inject({ url: `/api/packs/alice/managed-pack/`, headers: alice.headers })).json() as PackJson).versions
    const [v2, v1] = versions.map((v) => v.id)
    const call = async (method: 'PATCH' | 'DELETE', url: string, headers: Record<string, string>, payload?: Record<string, unknown>) => {
      const res = await site.app.inject({ method, url, headers, ...(payload ? { payload } : {}) })
      assert.ok(res.statusCode === 200 || res.statusCode === 204, `${method} ${url}: ${res.statusCode} ${res.body}`)
    }
    await call('PATCH', `/api/packs/alice/managed-pack/versions/${v2}/`, alice.headers, { changelog: 'Better now' })
    await call('PATCH', `/api/packs/alice/managed-pack/versions/${v2}/`, alice.headers, { yanked: true })
    await call('PATCH', `/api/packs/alice/managed-pack/versions/${v2}/`, root.headers, { yanked: false })
    await call('DELETE', `/api/packs/alice/managed-pack/versions/${v1}/`, alice.headers)
    await call('DELETE', `/api/packs/alice/managed-pack/`, root.headers)
    const log = (await entries('?target=alice:managed-pack')).items.map((e) => [e.actor, e.action, e.target])
    assert.deepEqual(log, [
      ['root', 'pack.delete', 'alice:managed-pack'],
      ['alice', 'version.delete', 'alice:managed-pack@1.0'],
      ['root', 'version.unyank', 'alice:managed-pack@2.0'],
      ['alice', 'version.yank', 'alice:managed-pack@2.0'],
      ['alice', 'version.edit', 'alice:managed-pack@2.0'],
      ['alice', 'version.publish', 'alice:managed-pack@2.0'],
      ['alice', 'pack.publish', 'alice:managed-pack'],
    ])
    // The record outlives the pack: the log still names it after the deletion.
    assert.equal((await entries('?target_type=version&actor=alice')).items.filter((e) => e.target.startsWith('alice:managed-pack@')).length, 4)
  })

  test('the admin CLI is an actor of its own', async () => {
    await recordAudit(site.app.db, { id: null, username: '(admin CLI)', isStaff: true }, 'user.enable', userTarget('bob'), {})
    const res = await entries(`?actor=${encodeURIComponent('(admin CLI)')}`)
    assert.deepEqual(res.items.map((e) => [e.actor, e.action, e.target]), [['(admin CLI)', 'user.enable', 'bob']])
  })

  test('pagination: per_page and page, the same total on every page, no entry twice', async () => {
    const total = (await entries()).total
    const seen: string[] = []
    for (let page = 1; page <= Math.ceil(total / 2); page++) {
      const res = await entries(`?per_page=2&page=${page}`)
      assert.equal(res.total, total)
      assert.equal(res.page, page)
      assert.equal(res.per_page, 2)
      assert.ok(res.items.length <= 2 && res.items.length > 0)
      seen.push(...res.items.map((e) => e.id))
    }
    assert.equal(new Set(seen).size, total)
    assert.deepEqual(seen, (await entries()).items.map((e) => e.id), 'pages follow the same order')
    assert.deepEqual((await entries('?page=999')).items, [])
  })

  test('staff only: other users 403, the gate alone or nothing 401', async () => {
    expectError(await list('', alice.headers), 403, /staff only/)
    expectError(await list('', site.gate), 401)
    expectError(await list('', {}), 401)
  })

  test('bad queries are 400s with a detail', async () => {
    for (const query of ['?page=0', '?page=abc', '?per_page=101', '?per_page=0', '?target_type=team', `?target=${'x'.repeat(301)}`, `?actor=${'y'.repeat(33)}`, `?action=${'z'.repeat(41)}`, '?page=100001']) {
      expectError(await list(query), 400)
    }
  })
})

describe('the audit page', () => {
  const view = (query: string, headers: Record<string, string>) => site.app.inject({ url: `/staff/audit/${query}`, headers: { ...HTML, ...headers } })

  test('staff see the entries with filters, links and pagination; values are escaped', async () => {
    const res = await view('', root.headers)
    assert.equal(res.statusCode, 200)
    assert.match(String(res.headers['content-type']), /^text\/html/)
    assert.match(res.body, /<h1>Audit log<\/h1>/)
    assert.match(res.body, /<code class="audit-action">pack\.hide<\/code>/)
    assert.match(res.body, /spam &lt;b&gt;links&lt;\/b&gt;/)
    assert.doesNotMatch(res.body, /<b>links<\/b>/)
    assert.match(res.body, /href="\/packs\/bob\/other-pack\/"/, 'links the pack page')
    assert.match(res.body, /href="\/staff\/audit\/\?target=bob%3Aother-pack"/, 'filters by a target')
    assert.match(res.body, /href="\/staff\/audit\/\?actor=root"/, 'filters by an actor')
    assert.match(res.body, /<a href="\/staff\/audit\/" aria-current="page">Audit log<\/a>/, 'in the staff navigation')
    assert.ok(!/ style=/.test(res.body), 'no style attributes (CSP)')

    const filtered = await view('?target=alice%3Alogged-pack&action=version.publish', root.headers)
    assert.equal(filtered.statusCode, 200)
    assert.match(filtered.body, /1 entry match/)
    assert.match(filtered.body, /alice:logged-pack@1\.1-Beta/)
    assert.doesNotMatch(filtered.body, /pack\.hide<\/code>/)
    assert.match(filtered.body, /<option value="version.publish" selected>/)
    assert.match(filtered.body, /value="alice:logged-pack"/)
  })

  test('pagination links keep the filters', async () => {
    // 50 to a page: enough entries for a second one.
    for (let i = 0; i < 50; i++) await recordAudit(site.app.db, { id: null, username: '(admin CLI)', isStaff: true }, 'pack.hide', { targetType: 'pack', target: `x:p${i}` }, {})
    const first = await view('?action=pack.hide', root.headers)
    assert.match(first.body, /Page 1 of 2/)
    assert.match(first.body, /rel="next" href="\/staff\/audit\/\?action=pack.hide&amp;page=2"/)
    const second = await view('?action=pack.hide&page=2', root.headers)
    assert.equal(second.statusCode, 200)
    assert.match(second.body, /Page 2 of 2/)
    assert.match(second.body, /rel="prev" href="\/staff\/audit\/\?action=pack.hide"/)
    // The API answers an empty page past the end (the page explains it with a 404, below).
    assert.deepEqual((await entries('?action=pack.hide&page=3&per_page=50')).items, [])
  })

  test('others get the 403 page; bad filters and pages past the end are explained', async () => {
    const forbidden = await view('', alice.headers)
    assert.equal(forbidden.statusCode, 403)
    assert.match(forbidden.body, /Staff only/)
    assert.doesNotMatch(forbidden.body, /audit-action/)
    assert.doesNotMatch((await site.app.inject({ url: '/', headers: { ...HTML, ...alice.headers } })).body, /\/staff\/audit\//, 'no link for non-staff')
    const anonymous = await view('', site.gate)
    assert.equal(anonymous.statusCode, 303)
    assert.match(String(anonymous.headers.location), /^\/login\/\?next=/)

    for (const [query, detail] of [
      ['?page=0', /whole number/], ['?target_type=team', /pack, version, user, site or archive/], ['?action=nope', /no action &quot;nope&quot;/],
      ['?page=1&page=2', /only once/], [`?target=${'x'.repeat(301)}`, /longer than 300/],
    ] as const) {
      const res = await view(query, root.headers)
      assert.equal(res.statusCode, 400, query)
      assert.match(res.body, detail)
    }
    const past = await view('?page=40', root.headers)
    assert.equal(past.statusCode, 404)
    assert.match(past.body, /the last one is page/)
  })
})
