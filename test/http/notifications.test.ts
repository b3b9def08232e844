// Notifications, each caused through the real API that causes it: a new version of a followed pack (not to its
// publisher, not while the pack is hidden), staff hiding and showing a pack (with their reason), staff yanking a
// version, an invitation into a team. Marking one or all read; someone else's id is 404; bad input a clear 400;
// each user keeps the newest 100 (the oldest go first). The pages: the header's bell counts the unread ones, and
// /notifications/ lists them with Mark read and Mark all read forms that work without JavaScript.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { LightMyRequestResponse } from 'fastify'
import type { NotificationBody, NotificationListBody } from '../../src/api/notifications.js'
import { expectError, siteWith, type TestSite, type TestUser, signIn, type Session } from '../helpers/app.js'
import { datapack, multipart } from '../helpers/fixtures.js'
import { publishPack, type PackJson } from '../helpers/packs.js'
import { until } from '../helpers/wait.js'
import { countFanouts } from '../../src/notifications/repository.js'

const HTML = { accept: 'text/html,application/xhtml+xml' }

let site: TestSite
let alice: TestUser, bob: TestUser, cara: TestUser, dan: TestUser, root: TestUser
// The team's invitations run on the site's clock; a test moves it so each notice has its own time.
let now = Date.now()

before(async () => {
  ;({ site, alice, bob, cara, dan, root } = await siteWith({ users: ['alice', 'bob', 'cara', 'dan'], staff: ['root'], clock: () => now }))
})
after(() => site.close())

const call = (method: string, url: string, user: TestUser | null, payload?: object) =>
  site.app.inject({ method: method as 'GET', url, headers: user ? user.headers : site.gate, ...(payload ? { payload } : {}) })

async function ok(res: Promise<LightMyRequestResponse>, status = 200): Promise<LightMyRequestResponse> {
  const r = await res
  assert.equal(r.statusCode, status, r.body)
  return r
}
const packApi = (p: Pick<PackJson, 'namespace' | 'pack_id'>, rest = '') => `/api/packs/${p.namespace}/${p.pack_id}/${rest}`
const inbox = async (user: TestUser, query = '') => (await ok(call('GET', `/api/notifications/${query}`, user))).json() as NotificationListBody
const kinds = async (user: TestUser) => (await inbox(user)).items.map((n) => n.kind)

async function addVersion(user: TestUser, pack: PackJson, name: string): Promise<PackJson> {
  const body = multipart([
    { name: 'version_name', value: name },
    { name: 'file', value: await datapack(61), filename: `${name}.zip`, contentType: 'application/zip' },
  ])
  const res = await site.app.inject({ method: 'POST', url: packApi(pack, 'versions/'), headers: { ...user.headers, ...body.headers }, payload: body.payload })
  assert.equal(res.statusCode, 201, res.body)
  // Followers are told just after the publish's commit, a batch at a time (src/notifications/fanout.ts).
  await until(async () => ((await countFanouts(site.app.db)) === 0 ? true : undefined), 'the followers told')
  return res.json() as PackJson
}

/** Everything but the id and time, which differ on every run. */
function shape(n: NotificationBody): Omit<NotificationBody, 'id' | 'created_at'> {
  const { id: _id, created_at: _created, ...rest } = n
  return rest
}

describe('what causes a notification', () => {
  test('a followed pack\'s new version reaches its followers, not its publisher, and not while the pack is hidden', async () => {
    const pack = await publishPack(site, alice, { title: 'Glow Moss' })
    await ok(call('POST', packApi(pack, 'follow/'), bob))
    await ok(call('POST', packApi(pack, 'follow/'), alice))
    await addVersion(alice, pack, '2.0')
    const [notice, ...rest] = (await inbox(bob)).items
    assert.equal(rest.length, 0)
    assert.deepEqual(shape(notice!), {
      kind: 'version.published', read_at: null, text: 'Glow Moss has a new version, 2.0', link: '/packs/alice/glow-moss/#version-2.0',
      pack: { namespace: 'alice', pack_id: 'glow-moss', title: 'Glow Moss' }, version: '2.0', reason: null,
    })
    assert.deepEqual(await kinds(alice), [], 'the publisher, though following, hears nothing of their own version')
    assert.deepEqual(await kinds(cara), [], 'nor does anyone who does not follow it')
    // The link leads to the version on the pack's page.
    const page = await site.app.inject({ url: '/packs/alice/glow-moss/', headers: { ...site.gate, ...HTML } })
    assert.match(page.body, /<div class="version-head" id="version-2\.0">/)

    // Hidden by staff, its new versions stay with its team.
    await ok(call('POST', packApi(pack, 'hide/'), root, { reason: 'checking' }))
    await addVersion(alice, pack, '3.0')
    assert.deepEqual((await inbox(bob)).items.map((n) => n.version), ['2.0'])
    await ok(call('POST', packApi(pack, 'unhide/'), root, { reason: 'fine' }))
    await addVersion(alice, pack, '4.0')
    assert.deepEqual((await inbox(bob)).items.map((n) => n.version), ['4.0', '2.0'])
    // Unfollowed, nothing more.
    await ok(call('DELETE', packApi(pack, 'follow/'), bob))
    await addVersion(alice, pack, '5.0')
    assert.equal((await inbox(bob)).total, 2)
  })

  test('a team member\'s new version reaches the owner who follows, not the member who published', async () => {
    const pack = await publishPack(site, alice, { title: 'Team Torches' })
    await ok(call('POST', packApi(pack, 'team/'), alice, { username: 'dan', role: 'uploader' }), 201)
    await ok(call('POST', packApi(pack, 'team/accept/'), dan))
    for (const user of [alice, dan]) await ok(call('POST', packApi(pack, 'follow/'), user))
    const danBefore = (await inbox(dan)).total
    await addVersion(dan, pack, '1.1')
    assert.equal((await inbox(alice)).items[0]!.text, 'Team Torches has a new version, 1.1')
    assert.equal((await inbox(dan)).total, danBefore)
  })

  test('staff hiding and showing a pack tell its owner, with the reason; the owner\'s own changes do not', async () => {
    const erin = await site.user('erin')
    const pack = await publishPack(site, erin, { title: 'Loud Banners' })
    await ok(call('POST', packApi(pack, 'hide/'), root, { reason: 'Reported as spam' }))
    await ok(call('POST', packApi(pack, 'unhide/'), root, { reason: 'Looked again: fine' }))
    await ok(call('POST', packApi(pack, 'unhide/'), root, { reason: 'twice' }))
    const list = await inbox(erin)
    assert.deepEqual(list.items.map(shape), [
      {
        kind: 'pack.shown', read_at: null, text: 'Staff showed your pack Loud Banners again: Looked again: fine', link: '/packs/erin/loud-banners/',
        pack: { namespace: 'erin', pack_id: 'loud-banners', title: 'Loud Banners' }, version: null, reason: 'Looked again: fine',
      },
      {
        kind: 'pack.hidden', read_at: null, text: 'Staff hid your pack Loud Banners: Reported as spam', link: '/packs/erin/loud-banners/',
        pack: { namespace: 'erin', pack_id: 'loud-banners', title: 'Loud Banners' }, version: null, reason: 'Reported as spam',
      },
    ], 'showing a shown pack changes nothing and tells nothing')
    assert.equal(list.unread, 2)
    // Without a reason the sentence ends at the pack.
    await ok(call('POST', packApi(pack, 'hide/'), root, {}))
    assert.equal((await inbox(erin)).items[0]!.text, 'Staff hid your pack Loud Banners')
  })

  test('staff yanking a version tells the owner; the owner yanking their own does not', async () => {
    const fay = await site.user('fay')
    let pack = await publishPack(site, fay, { title: 'Old Glass' })
    pack = await addVersion(fay, pack, '2.0')
    const v1 = pack.versions.find((v) => v.name === '1.0.0')!
    const v2 = pack.versions.find((v) => v.name === '2.0')!
    await ok(call('PATCH', packApi(pack, `versions/${v1.id}/`), fay, { yanked: true }))
    assert.deepEqual(await kinds(fay), [])
    await ok(call('PATCH', packApi(pack, `versions/${v2.id}/`), root, { yanked: true }))
    const [notice] = (await inbox(fay)).items
    assert.deepEqual(shape(notice!), {
      kind: 'version.yanked', read_at: null, text: 'Staff yanked version 2.0 of your pack Old Glass', link: '/packs/fay/old-glass/',
      pack: { namespace: 'fay', pack_id: 'old-glass', title: 'Old Glass' }, version: '2.0', reason: null,
    })
    // Un-yanking is no news.
    await ok(call('PATCH', packApi(pack, `versions/${v2.id}/`), root, { yanked: false }))
    assert.equal((await inbox(fay)).total, 1)
  })

  test('an invitation into a team tells the invitee and links the invitations page', async () => {
    const gus = await site.user('gus')
    const pack = await publishPack(site, alice, { title: 'Shared Roofs' })
    await ok(call('POST', packApi(pack, 'team/'), alice, { username: 'gus', role: 'maintainer' }), 201)
    const [notice] = (await inbox(gus)).items
    assert.deepEqual(shape(notice!), {
      kind: 'team.invited', read_at: null, text: 'alice invited you into the team of Shared Roofs as maintainer', link: '/invitations/',
      pack: { namespace: 'alice', pack_id: 'shared-roofs', title: 'Shared Roofs' }, version: null, reason: null,
    })
  })
})

describe('reading notifications', () => {
  test('one or all are marked read; someone else\'s or an unknown id is 404; unread=true lists the unread', async () => {
    const hal = await site.user('hal')
    const pack = await publishPack(site, alice, { title: 'Many Notes' })
    await ok(call('POST', packApi(pack, 'follow/'), hal))
    for (const name of ['a', 'b', 'c']) await addVersion(alice, pack, name)
    const list = await inbox(hal)
    assert.deepEqual([list.total, list.unread], [3, 3])
    assert.deepEqual(list.items.map((n) => n.version), ['c', 'b', 'a'], 'newest first')
    const [c, b] = list.items
    // A follower's notice has the longest ids there are: the fan-out's and the follower's.
    assert.match(b!.id, /^[0-9a-z]{9}-[0-9a-f]{12}:[0-9a-f-]{36}$/)

    await ok(call('POST', `/api/notifications/${encodeURIComponent(b!.id)}/read/`, hal), 204)
    await ok(call('POST', `/api/notifications/${encodeURIComponent(b!.id)}/read/`, hal), 204)
    const after = await inbox(hal)
    assert.deepEqual([after.total, after.unread], [3, 2])
    assert.ok(after.items[1]!.read_at !== null && !Number.isNaN(Date.parse(after.items[1]!.read_at)))
    assert.deepEqual((await inbox(hal, '?unread=true')).items.map((n) => n.version), ['c', 'a'])
    assert.deepEqual((await inbox(hal, '?limit=1&offset=1')).items.map((n) => n.version), ['b'])

    // Not hal's own: bob cannot mark it, and it stays unread.
    expectError(await call('POST', `/api/notifications/${encodeURIComponent(c!.id)}/read/`, bob), 404, /notification not found/)
    expectError(await call('POST', '/api/notifications/no-such-notice/read/', hal), 404)
    assert.equal((await inbox(hal)).items[0]!.read_at, null)

    await ok(call('POST', '/api/notifications/read/', hal), 204)
    assert.equal((await inbox(hal)).unread, 0)
    assert.deepEqual((await inbox(hal, '?unread=true')).items, [])
    await ok(call('POST', '/api/notifications/read/', hal), 204)
  })

  test('without a user it is 401; bad input is a clear 400, never a 500', async () => {
    expectError(await call('GET', '/api/notifications/', null), 401)
    expectError(await call('POST', '/api/notifications/read/', null), 401)
    expectError(await call('POST', '/api/notifications/x/read/', null), 401)
    for (const query of ['?limit=0', '?limit=101', '?limit=x', '?offset=-1', '?offset=101', '?unread=maybe', '?limit=1&limit=2', `?limit=${'9'.repeat(500)}`]) {
      expectError(await call('GET', `/api/notifications/${query}`, bob), 400)
    }
    expectError(await call('POST', `/api/notifications/${'n'.repeat(100)}/read/`, bob), 404, /notification not found/)
    // Past the router's bound on a path segment (100 characters) the route is not even matched.
    for (const length of [101, 5000]) expectError(await call('POST', `/api/notifications/${'n'.repeat(length)}/read/`, bob), 404)
    expectError(await call('POST', `/api/notifications/${encodeURIComponent('\u202e\u{1F4A9}')}/read/`, bob), 404)
  })

  test('each user keeps the newest 100: the 105th notice leaves the newest 100, the oldest gone first', async () => {
    const ivy = await site.user('ivy')
    const pack = await publishPack(site, alice, { title: 'Revolving Door' })
    const times: string[] = []
    for (let i = 0; i < 105; i++) {
      now += 1000
      times.push(new Date(now).toISOString())
      await ok(call('POST', packApi(pack, 'team/'), alice, { username: 'ivy', role: 'uploader' }), 201)
      await ok(call('DELETE', packApi(pack, 'team/ivy/'), alice), 204)
    }
    const list = await inbox(ivy, '?limit=100')
    assert.equal(list.total, 100)
    assert.equal(list.unread, 100)
    assert.deepEqual(list.items.map((n) => n.created_at), times.slice(5).reverse())
    const rows = await site.app.db.selectFrom('notifications').innerJoin('users', 'users.id', 'notifications.user_id')
      .select((eb) => eb.fn.countAll<number | string>().as('n')).where('users.username', '=', 'ivy').executeTakeFirstOrThrow()
    assert.equal(Number(rows.n), 100, 'the oldest rows are gone, not just left out of the list')
  })
})


const page = (url: string, who: Session | null) => site.app.inject({ url, headers: { ...HTML, ...site.gate, ...(who ? { cookie: who.cookie } : {}) } })

function form(url: string, who: Session, csrf = true) {
  return site.app.inject({
    method: 'POST', url,
    headers: { ...HTML, ...site.gate, cookie: who.cookie, 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams(csrf ? { csrf_token: who.csrf } : {}).toString(),
  })
}

/** The header's bell: its accessible name, and whether it is marked the current page. */
function bell(body: string): { name: string; current: boolean } | null {
  const match = /<a class="bell[^"]*" href="\/notifications\/" aria-label="([^"]+)"( aria-current="page")?>/.exec(body)
  return match ? { name: match[1]!, current: match[2] !== undefined } : null
}

/** The notifications page's items: "unread|read text -> link". */
function items(body: string): string[] {
  return [...body.matchAll(/<li class="card notification( unread)?"[^>]*>([\s\S]*?)<\/li>/g)].map(([, unread, item]) => {
    const link = /<a href="([^"]+)">([^<]+)<\/a>/.exec(item!)!
    return `${unread ? 'unread' : 'read'} ${link[2]} -> ${link[1]}`
  })
}

describe('notifications on the pages', () => {
  test('the header\'s bell counts the unread ones; none for anyone signed out', async () => {
    const jo = await site.user('jo')
    const pack = await publishPack(site, alice, { title: 'Bell Tower' })
    const j = await signIn(site, jo)
    assert.deepEqual(bell((await page('/', j)).body), { name: 'Notifications, none unread', current: false })
    assert.equal(bell((await page('/', null)).body), null, 'signed out: no bell')

    await ok(call('POST', packApi(pack, 'follow/'), jo))
    await addVersion(alice, pack, '1.1')
    await addVersion(alice, pack, '1.2')
    await addVersion(alice, pack, '1.3')
    for (const url of ['/', '/packs/alice/bell-tower/', '/users/jo/', '/invitations/']) {
      const res = await page(url, j)
      assert.equal(res.statusCode, 200, `${url}: ${res.body}`)
      assert.deepEqual(bell(res.body), { name: 'Notifications, 3 unread', current: false }, url)
      assert.match(res.body, /<span class="bell-count" aria-hidden="true">3<\/span><\/a>/)
    }
    // An error page has the bell too.
    assert.equal(bell((await page('/packs/alice/no-such-pack/', j)).body)?.name, 'Notifications, 3 unread')
    await ok(call('POST', '/api/notifications/read/', jo), 204)
    assert.equal(bell((await page('/', j)).body)?.name, 'Notifications, none unread')
  })

  test('/notifications/ lists them newest first, the unread marked, with Mark read and Mark all read forms', async () => {
    const kim = await site.user('kim')
    const k = await signIn(site, kim)
    const emptyPage = await page('/notifications/', k)
    assert.equal(emptyPage.statusCode, 200)
    assert.match(emptyPage.body, /You have no notifications\./)
    assert.doesNotMatch(emptyPage.body, /Mark all read/)
    assert.deepEqual(bell(emptyPage.body), { name: 'Notifications, none unread', current: true })

    const pack = await publishPack(site, alice, { title: 'Hanging Signs' })
    await ok(call('POST', packApi(pack, 'follow/'), kim))
    await addVersion(alice, pack, 'one')
    await addVersion(alice, pack, 'two')
    await ok(call('POST', packApi(pack, 'team/'), alice, { username: 'kim', role: 'uploader' }), 201)

    const full = await page('/notifications/', k)
    assert.deepEqual(items(full.body), [
      'unread alice invited you into the team of Hanging Signs as uploader -> /invitations/',
      'unread Hanging Signs has a new version, two -> /packs/alice/hanging-signs/#version-two',
      'unread Hanging Signs has a new version, one -> /packs/alice/hanging-signs/#version-one',
    ])
    assert.match(full.body, /3 notifications, 3 unread\./)
    assert.match(full.body, /<form method="post" action="\/notifications\/read\/" class="mark-all"><input type="hidden" name="csrf_token" value="[^"]+"><button type="submit" class="secondary">Mark all read<\/button><\/form>/)
    assert.equal([...full.body.matchAll(/>Mark read<\/button>/g)].length, 3)
    // Each Mark read button is described by its notice's sentence.
    assert.match(full.body, /<p class="notification-text" id="notification-2">[\s\S]*?aria-describedby="notification-2">Mark read<\/button>/)

    const list = await inbox(kim)
    const second = list.items[1]!
    const action = `/notifications/${encodeURIComponent(second.id)}/read/`
    assert.ok(full.body.includes(`action="${action}"`), 'the form posts to the notice\'s own address')
    assert.equal((await form(action, k, false)).statusCode, 403, 'not without the CSRF token')
    const marked = await form(action, k)
    assert.equal(marked.statusCode, 303, marked.body)
    assert.equal(marked.headers.location, '/notifications/?done=read')
    const afterOne = await page('/notifications/?done=read', k)
    assert.match(afterOne.body, /role="status">Marked read\./)
    assert.deepEqual(items(afterOne.body).map((i) => i.split(' ')[0]), ['unread', 'read', 'unread'])
    assert.equal([...afterOne.body.matchAll(/>Mark read<\/button>/g)].length, 2)
    assert.equal(bell(afterOne.body)?.name, 'Notifications, 2 unread')

    // Someone else's notice through the page: the 404 page, and it stays unread.
    const lee = await signIn(site, await site.user('lee'))
    assert.equal((await form(`/notifications/${encodeURIComponent(list.items[0]!.id)}/read/`, lee)).statusCode, 404)
    assert.equal((await inbox(kim)).items[0]!.read_at, null)

    const all = await form('/notifications/read/', k)
    assert.equal(all.statusCode, 303)
    assert.equal(all.headers.location, '/notifications/?done=all-read')
    const afterAll = await page('/notifications/?done=all-read', k)
    assert.deepEqual(items(afterAll.body).map((i) => i.split(' ')[0]), ['read', 'read', 'read'])
    assert.doesNotMatch(afterAll.body, /Mark all read|>Mark read</)
    assert.equal(bell(afterAll.body)?.name, 'Notifications, none unread')
    // A crafted ?done= puts no words on the page.
    assert.doesNotMatch((await page('/notifications/?done=%3Cb%3Epwned', k)).body, /pwned/)
    // Signed out, the page sends the browser to sign in first.
    const signedOut = await page('/notifications/', null)
    assert.equal(signedOut.statusCode, 303)
    assert.equal(signedOut.headers.location, '/login/?next=%2Fnotifications%2F')
  })
})
