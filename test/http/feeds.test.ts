// The Atom feeds (/feeds/…) and the feed token that opens them in a feed reader (GET, POST, DELETE
// /api/me/feed-token/, Settings → Feeds). Each feed is read by @rowanmanning/feed-parser, a feed reader's own
// parser, and by saxes, a strict XML parser, as test/unit/atom.test.ts reads the renderer's output. The token
// opens feeds and nothing else; a reset or a revocation ends the old one at once; hidden packs and yanked
// versions stay out of sight; and the token never reaches the access log of a real server.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import type { LightMyRequestResponse } from 'fastify'
import { parseFeed } from '@rowanmanning/feed-parser'
import { SaxesParser } from 'saxes'
import type { FeedTokenBody } from '../../src/api/notifications.js'
import { csrfTokenFor } from '../../src/auth/csrf.js'
import { packFeedUrlFor } from '../../src/feeds/service.js'
import { expectError, siteWith, type TestSite, type TestUser } from '../helpers/app.js'
import { datapack, multipart } from '../helpers/fixtures.js'
import { publishPack, type PackJson } from '../helpers/packs.js'
import { startServer, suiteBackends, type RunningServer, type SuiteBackends } from '../helpers/server.js'

const TOKEN_SHAPE = /^pkf_[A-Za-z0-9_-]{43}$/
const HOSTILE_CHANGELOG = 'Fixes <script>alert(1)</script> & **bold** "quotes" tom & jerry'

interface Session {
  cookie: string
  csrf: string
}

async function signIn(site: TestSite, user: TestUser): Promise<Session> {
  const login = await site.app.inject({ method: 'POST', url: '/login/', headers: site.gate, payload: { username: user.username, password: user.password } })
  assert.equal(login.statusCode, 200, login.body)
  const cookie = login.cookies.find((c) => c.name === 'packs_session')!.value
  return { cookie, csrf: csrfTokenFor(site.app.gate.siteSecret, cookie) }
}

function asSession(site: TestSite, session: Session, method: 'GET' | 'POST' | 'DELETE', url: string, withCsrf = true) {
  return site.app.inject({ method, url, cookies: { packs_session: session.cookie }, headers: withCsrf ? { 'x-csrf-token': session.csrf } : {} })
}

async function newFeedToken(site: TestSite, session: Session): Promise<FeedTokenBody> {
  const res = await asSession(site, session, 'POST', '/api/me/feed-token/')
  assert.equal(res.statusCode, 201, res.body)
  return res.json() as FeedTokenBody
}

async function addVersion(site: TestSite, user: TestUser, pack: PackJson, name: string, changelog: string): Promise<PackJson> {
  const body = multipart([
    { name: 'version_name', value: name },
    { name: 'changelog', value: changelog },
    { name: 'file', value: await datapack(61), filename: `${name}.zip`, contentType: 'application/zip' },
  ])
  const res = await site.app.inject({
    method: 'POST', url: `/api/packs/${pack.namespace}/${pack.pack_id}/versions/`, headers: { ...user.headers, ...body.headers }, payload: body.payload,
  })
  assert.equal(res.statusCode, 201, res.body)
  return res.json() as PackJson
}

/** The strict parse: any well-formedness error throws. Returns the text of every element by name, in order. */
function strictTexts(xml: string): Map<string, string[]> {
  const parser = new SaxesParser({ xmlns: true })
  const texts = new Map<string, string[]>()
  const open: Array<{ name: string; text: string }> = []
  let failure: Error | null = null
  parser.on('error', (error) => { failure ??= error })
  parser.on('opentag', (tag) => { open.push({ name: tag.local, text: '' }) })
  parser.on('text', (text) => { if (open.length > 0) open.at(-1)!.text += text })
  parser.on('closetag', () => {
    const element = open.pop()!
    texts.set(element.name, [...(texts.get(element.name) ?? []), element.text])
  })
  parser.write(xml).close()
  if (failure) throw failure
  return texts
}

/** A 200 Atom answer, checked strictly, then read as a feed reader reads it. */
function readFeed(res: LightMyRequestResponse) {
  assert.equal(res.statusCode, 200, res.body)
  assert.equal(res.headers['content-type'], 'application/atom+xml; charset=utf-8')
  assert.equal(res.headers['cache-control'], 'no-store')
  assert.equal(res.headers['x-content-type-options'], 'nosniff')
  assert.match(String(res.headers.etag), /^"[0-9a-f]{32}"$/)
  assert.ok(!Number.isNaN(Date.parse(String(res.headers['last-modified']))))
  strictTexts(res.body)
  return parseFeed(res.body)
}

describe('feeds and the feed token', () => {
  let site: TestSite
  let alice: TestUser
  let bob: TestUser
  let root: TestUser
  let aliceSession: Session
  let bobSession: Session
  let faithful: PackJson
  let secret: PackJson
  let bobs: PackJson
  /** alice's feed token: the tests below reset and revoke it, each leaving a live one behind. */
  let token = ''
  // Absolute links start at the public origin; a set one keeps the port out of what the parser normalises.
  const origin = 'https://packs.example'

  const feed = (path: string, feedToken: string | null = token, headers: Record<string, string> = {}) =>
    site.app.inject({ url: feedToken === null ? path : `${path}${path.includes('?') ? '&' : '?'}feed_token=${feedToken}`, headers })

  before(async () => {
    ;({ site, alice, bob, root } = await siteWith({ users: ['alice', 'bob'], staff: ['root'], env: { PACKS_BASE_URL: origin } }))
    aliceSession = await signIn(site, alice)
    bobSession = await signIn(site, bob)
    faithful = await publishPack(site, alice, { title: 'Faithful 32x', version_name: '1.0', changelog: 'First release', summary: 'Crisp textures' })
    faithful = await addVersion(site, alice, faithful, '1.1', HOSTILE_CHANGELOG)
    faithful = await addVersion(site, alice, faithful, '1.2', 'Broken build')
    const yanked = faithful.versions.find((v) => v.name === '1.2')!
    const yank = await site.app.inject({
      method: 'PATCH', url: `/api/packs/alice/${faithful.pack_id}/versions/${yanked.id}/`, headers: alice.headers, payload: { yanked: true },
    })
    assert.equal(yank.statusCode, 200, yank.body)
    secret = await publishPack(site, alice, { title: 'Secret Pack', version_name: '0.1', changelog: 'hush' })
    const hide = await site.app.inject({ method: 'POST', url: `/api/packs/alice/${secret.pack_id}/hide/`, headers: root.headers, payload: {} })
    assert.equal(hide.statusCode, 200, hide.body)
    bobs = await publishPack(site, bob, { title: 'Bob\'s Blocks', version_name: '2.0', changelog: 'Blocks' })
    token = (await newFeedToken(site, aliceSession)).token!
  })
  after(() => site.close())

  describe('the feed token API', () => {
    test('GET shows nulls without a token; POST makes one (201) with absolute feed addresses; GET shows it again', async () => {
      const none = await asSession(site, bobSession, 'GET', '/api/me/feed-token/')
      assert.equal(none.statusCode, 200, none.body)
      assert.deepEqual(none.json(), { token: null, created_at: null, last_used_at: null, feeds: null })

      const made = await newFeedToken(site, bobSession)
      assert.match(made.token!, TOKEN_SHAPE)
      assert.match(made.created_at!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
      assert.equal(made.last_used_at, null)
      assert.deepEqual(made.feeds, {
        new_packs: `${origin}/feeds/new/?feed_token=${made.token}`,
        your_packs: `${origin}/feeds/users/bob/?feed_token=${made.token}`,
        pack: `${origin}/feeds/packs/{namespace}/{pack_id}/?feed_token=${made.token}`,
        user: `${origin}/feeds/users/{username}/?feed_token=${made.token}`,
      })
      const again = await asSession(site, bobSession, 'GET', '/api/me/feed-token/')
      assert.deepEqual(again.json(), made)

      // Stored only as its SHA-256 and a sealed copy.
      const row = await site.app.db.selectFrom('feed_tokens').selectAll().innerJoin('users', 'users.id', 'feed_tokens.user_id')
        .where('users.username', '=', 'bob').executeTakeFirstOrThrow()
      assert.ok(!JSON.stringify(row).includes(made.token!), 'the raw token is not stored')
      assert.match(row.token_hash, /^[0-9a-f]{64}$/)
      assert.match(row.sealed, /^v1\./)
    })

    test('showing or making one needs a browser session: an API token gets 403, and a session needs its CSRF token', async () => {
      expectError(await site.app.inject({ url: '/api/me/feed-token/', headers: alice.headers }), 403, /signed-in browser session/)
      expectError(await site.app.inject({ method: 'POST', url: '/api/me/feed-token/', headers: alice.headers }), 403, /signed-in browser session/)
      expectError(await asSession(site, aliceSession, 'POST', '/api/me/feed-token/', false), 403, /CSRF/)
      expectError(await site.app.inject({ url: '/api/me/feed-token/', headers: site.gate }), 401)
      // None of these replaced alice's token.
      readFeed(await feed('/feeds/new/'))
    })

    test('a reset makes the old token fail at once, and the new one works', async () => {
      const old = token
      const made = await newFeedToken(site, aliceSession)
      assert.notEqual(made.token, old)
      expectError(await feed('/feeds/new/', old), 401, /invalid or revoked feed token/)
      readFeed(await feed('/feeds/new/', made.token))
      token = made.token!
    })

    test('DELETE revokes (204, also with none left); the token fails; GET shows nulls; feeds still open in the browser', async () => {
      const res = await asSession(site, bobSession, 'GET', '/api/me/feed-token/')
      const bobToken = (res.json() as FeedTokenBody).token!
      readFeed(await feed('/feeds/new/', bobToken))
      const revoked = await asSession(site, bobSession, 'DELETE', '/api/me/feed-token/')
      assert.equal(revoked.statusCode, 204, revoked.body)
      assert.equal(revoked.body, '')
      expectError(await feed('/feeds/new/', bobToken), 401)
      assert.deepEqual((await asSession(site, bobSession, 'GET', '/api/me/feed-token/')).json(), { token: null, created_at: null, last_used_at: null, feeds: null })
      assert.equal((await asSession(site, bobSession, 'DELETE', '/api/me/feed-token/')).statusCode, 204)
      // An API token may revoke too (it only takes access away).
      assert.equal((await site.app.inject({ method: 'DELETE', url: '/api/me/feed-token/', headers: bob.headers })).statusCode, 204)
      readFeed(await site.app.inject({ url: '/feeds/new/', cookies: { packs_session: bobSession.cookie } }))
    })
  })

  describe('what the feeds say', () => {
    test('a pack\'s feed: its versions newest first, yanked ones left out, changelogs as safe HTML, absolute links', async () => {
      const res = await feed('/feeds/packs/Alice/FAITHFUL-32x/')
      const parsed = readFeed(res)
      assert.equal(parsed.meta.type, 'atom')
      assert.equal(parsed.title, 'Faithful 32x: new versions')
      assert.equal(parsed.description, 'Crisp textures')
      assert.equal(parsed.url, `${origin}/packs/alice/faithful-32x/`)
      assert.equal(parsed.self, `${origin}/feeds/packs/Alice/FAITHFUL-32x/?feed_token=${token}`, 'self: the address as asked for, token included')
      assert.equal(strictTexts(res.body).get('id')![0], `${origin}/feeds/packs/alice/faithful-32x/`, 'the id: the address without its token, which a reset does not change')
      assert.deepEqual(parsed.authors.map((a) => [a.name, a.url]), [['alice', `${origin}/users/alice/`]])
      assert.deepEqual(parsed.items.map((i) => i.title), ['Faithful 32x 1.1', 'Faithful 32x 1.0'], 'the yanked 1.2 is left out')
      const byName = new Map(faithful.versions.map((v) => [v.name, v]))
      for (const [index, name] of ['1.1', '1.0'].entries()) {
        const item = parsed.items[index]!
        const version = byName.get(name)!
        assert.equal(item.id, `urn:uuid:${version.id}`)
        assert.equal(item.url, `${origin}/packs/alice/faithful-32x/#version-${name}`)
        assert.equal(item.published?.toISOString(), version.created_at)
        assert.equal(item.updated?.toISOString(), version.created_at)
        assert.deepEqual(item.authors.map((a) => a.name), ['alice'])
      }
      assert.equal(parsed.updated?.toISOString(), byName.get('1.1')!.created_at, 'the feed changed when its newest entry came')
      // The changelog's own markup was escaped by the Markdown renderer: the HTML a reader gets shows it as text
      // and runs nothing. The strict parser reads that HTML exactly; the feed parser decodes entities in it once
      // more (its textContentNormalized, as it does for titles), so it sees them decoded.
      const html = '<p>Fixes &lt;script&gt;alert(1)&lt;/script&gt; &amp; <strong>bold</strong> &quot;quotes&quot; tom &amp; jerry</p>'
      assert.equal(strictTexts(res.body).get('content')![0], `${html}\n`)
      assert.doesNotMatch(res.body, /<script/i)
      assert.equal(parsed.items[0]!.content, '<p>Fixes <script>alert(1)</script> & <strong>bold</strong> "quotes" tom & jerry</p>')
      assert.equal(parsed.items[1]!.content, '<p>First release</p>')
      assert.equal(res.headers['content-security-policy'], "default-src 'none'; sandbox")
    })

    test('a user\'s feed: the versions of the packs they own, newest first, their hidden pack only to them and staff', async () => {
      const mine = readFeed(await feed('/feeds/users/ALICE/'))
      assert.equal(mine.title, 'Packs by alice: new versions')
      assert.equal(mine.url, `${origin}/users/alice/`)
      assert.deepEqual(mine.items.map((i) => i.title), ['Secret Pack 0.1', 'Faithful 32x 1.1', 'Faithful 32x 1.0'])
      const dates = mine.items.map((i) => i.published!.getTime())
      assert.deepEqual(dates, [...dates].sort((a, b) => b - a))
      const asBob = readFeed(await site.app.inject({ url: '/feeds/users/alice/', cookies: { packs_session: bobSession.cookie } }))
      assert.deepEqual(asBob.items.map((i) => i.title), ['Faithful 32x 1.1', 'Faithful 32x 1.0'])
      const asStaff = readFeed(await site.app.inject({ url: '/feeds/users/alice/', headers: root.headers }))
      assert.equal(asStaff.items.length, 3)
      // Only the packs they own: bob's feed has his pack alone.
      assert.deepEqual(readFeed(await feed('/feeds/users/bob/')).items.map((i) => i.title), ['Bob\'s Blocks 2.0'])
    })

    test('new packs: newest first; a hidden pack is absent for others but present for its owner\'s token and for staff', async () => {
      const forOthers = readFeed(await feed('/feeds/new/', null, site.gate))
      assert.equal(forOthers.title, 'New packs')
      assert.equal(forOthers.url, `${origin}/?sort=created`)
      assert.deepEqual(forOthers.items.map((i) => i.title), ['Bob\'s Blocks', 'Faithful 32x'])
      assert.equal(forOthers.items[0]!.url, `${origin}/packs/bob/${bobs.pack_id}/`)
      const bobsRow = await site.app.db.selectFrom('packs').select('id').where('pack_id', '=', bobs.pack_id).executeTakeFirstOrThrow()
      assert.equal(forOthers.items[0]!.id, `urn:uuid:${bobsRow.id}`)
      assert.deepEqual(forOthers.items[0]!.authors.map((a) => a.name), ['bob'])
      assert.equal(forOthers.items[1]!.description, 'Crisp textures')
      const forBob = readFeed(await site.app.inject({ url: '/feeds/new/', cookies: { packs_session: bobSession.cookie } }))
      assert.deepEqual(forBob.items.map((i) => i.title), ['Bob\'s Blocks', 'Faithful 32x'])
      const forAlice = readFeed(await feed('/feeds/new/'))
      assert.deepEqual(forAlice.items.map((i) => i.title), ['Bob\'s Blocks', 'Secret Pack', 'Faithful 32x'])
      const forStaff = readFeed(await site.app.inject({ url: '/feeds/new/', headers: root.headers }))
      assert.deepEqual(forStaff.items.map((i) => i.title), ['Bob\'s Blocks', 'Secret Pack', 'Faithful 32x'])
    })

    test('a hidden pack\'s own feed: 404 to others, as its page is; open to its owner\'s token', async () => {
      expectError(await feed(`/feeds/packs/alice/${secret.pack_id}/`, null, site.gate), 404)
      expectError(await site.app.inject({ url: `/feeds/packs/alice/${secret.pack_id}/`, headers: bob.headers }), 404)
      assert.deepEqual(readFeed(await feed(`/feeds/packs/alice/${secret.pack_id}/`)).items.map((i) => i.title), ['Secret Pack 0.1'])
    })

    test('ETag: If-None-Match gets 304 until what the viewer sees changes', async () => {
      const first = await feed('/feeds/packs/alice/faithful-32x/')
      const etag = String(first.headers.etag)
      const again = await feed('/feeds/packs/alice/faithful-32x/', token, { 'if-none-match': etag })
      assert.equal(again.statusCode, 304)
      assert.equal(again.body, '')
      assert.equal(again.headers.etag, etag)
      assert.equal((await feed('/feeds/packs/alice/faithful-32x/', token, { 'if-none-match': `W/${etag}` })).statusCode, 304)
      const edit = await site.app.inject({
        method: 'PATCH', url: `/api/packs/alice/faithful-32x/versions/${faithful.versions.find((v) => v.name === '1.0')!.id}/`,
        headers: alice.headers, payload: { changelog: 'First release, now with notes' },
      })
      assert.equal(edit.statusCode, 200, edit.body)
      const changed = await feed('/feeds/packs/alice/faithful-32x/', token, { 'if-none-match': etag })
      assert.equal(changed.statusCode, 200)
      assert.notEqual(changed.headers.etag, etag)
      assert.equal(readFeed(changed).items[1]!.content, '<p>First release, now with notes</p>')
    })

    test('an empty feed is still a valid feed', async () => {
      const { site: empty, carol } = await siteWith({ users: ['carol'] })
      try {
        const parsed = readFeed(await empty.app.inject({ url: '/feeds/users/carol/', headers: carol.headers }))
        assert.equal(parsed.items.length, 0)
        assert.equal(readFeed(await empty.app.inject({ url: '/feeds/new/', headers: empty.gate })).items.length, 0)
      } finally {
        await empty.close()
      }
    })

    test('the feed address for a pack page\'s head carries the viewer\'s token when they have one', async () => {
      const pack = { namespace: 'alice', packId: 'faithful-32x' }
      const aliceId = (await site.app.db.selectFrom('users').select('id').where('username', '=', 'alice').executeTakeFirstOrThrow()).id
      const bobId = (await site.app.db.selectFrom('users').select('id').where('username', '=', 'bob').executeTakeFirstOrThrow()).id
      assert.equal(await packFeedUrlFor(site.app.db, site.app.gate.siteSecret, origin, pack, { id: aliceId }), `${origin}/feeds/packs/alice/faithful-32x/?feed_token=${token}`)
      assert.equal(await packFeedUrlFor(site.app.db, site.app.gate.siteSecret, origin, pack, { id: bobId }), `${origin}/feeds/packs/alice/faithful-32x/`)
      assert.equal(await packFeedUrlFor(site.app.db, site.app.gate.siteSecret, origin, pack, null), `${origin}/feeds/packs/alice/faithful-32x/`)
    })
  })

  describe('who may open them', () => {
    test('the token opens feeds and nothing else: the same parameter anywhere else is ignored (401 as without it)', async () => {
      for (const url of ['/api/packs/', '/api/me/', '/api/me/feed-token/', `/api/packs/alice/${faithful.pack_id}/`, '/api/tokens/']) {
        expectError(await site.app.inject({ url: `${url}?feed_token=${token}` }), 401)
      }
      // Past the gate with the password, the API still has no user for it.
      expectError(await site.app.inject({ url: `/api/me/?feed_token=${token}`, headers: site.gate }), 401, /authentication required/)
      // Nor as a credential of its own.
      expectError(await site.app.inject({ url: '/api/me/', headers: { ...site.gate, authorization: `Bearer alice ${token}` } }), 401)
      expectError(await site.app.inject({ url: '/api/me/', headers: { ...site.gate, authorization: token } }), 401)
      // A page sends the browser to the gate, as without it.
      const page = await site.app.inject({ url: `/settings/feeds/?feed_token=${token}`, headers: { accept: 'text/html' } })
      assert.equal(page.statusCode, 303)
      assert.match(String(page.headers.location), /^\/gate\//)
    })

    test('without a token: a browser past the gate opens the public feeds; a feed reader gets 401; a browser is sent to the gate', async () => {
      assert.equal((await site.app.inject({ url: '/feeds/new/', headers: site.gate })).statusCode, 200)
      expectError(await site.app.inject({ url: '/feeds/new/' }), 401, /feed_token/)
      expectError(await site.app.inject({ url: '/feeds/packs/alice/faithful-32x/', headers: { accept: 'application/atom+xml' } }), 401)
      const browser = await site.app.inject({ url: '/feeds/new/', headers: { accept: 'text/html' } })
      assert.equal(browser.statusCode, 303)
      assert.equal(browser.headers.location, `/gate/?next=${encodeURIComponent('/feeds/new/')}`)
    })

    test('bad tokens and bad names: 4xx with a detail, never a 500', async () => {
      const bad = [
        '', 'x', 'pkf_', `pkf_${'A'.repeat(43)}`, `pkf_${'A'.repeat(44)}`, `packs_${'A'.repeat(43)}`, `pkf_${'é'.repeat(43)}`,
        'pkf_%00', 'a'.repeat(5000), '%F0%9F%98%80', `${token}x`, token.slice(0, -1),
      ]
      // Each from an address of its own: wrong tokens are counted, and the limit is the next describe's.
      let client = 0
      const from = (url: string) => site.app.inject({ url, remoteAddress: `198.18.0.${++client}` })
      for (const candidate of bad) expectError(await from(`/feeds/new/?feed_token=${candidate}`), 401)
      expectError(await from(`/feeds/new/?feed_token=${token}&feed_token=${token}`), 401)
      // The token counts only as written: an encoded spelling of it is refused, so the access log's redaction sees every one that works.
      expectError(await from(`/feeds/new/?feed%5Ftoken=${token}`), 401)
      expectError(await from(`/feeds/new/?feed_token=${token.replace('_', '%5F')}`), 401)

      for (const path of [
        `/feeds/packs/${'a'.repeat(90)}/${'b'.repeat(90)}/`, `/feeds/packs/${'a'.repeat(300)}/x/`, '/feeds/packs/alice/nothing/',
        '/feeds/packs/al%20ice/faithful-32x/', '/feeds/packs/%E2%80%AE/x/', `/feeds/users/${'u'.repeat(33)}/`, `/feeds/users/${'u'.repeat(500)}/`,
        '/feeds/users/nobody/', '/feeds/users/a%2Fb/',
      ]) {
        const res = await feed(path)
        assert.ok(res.statusCode >= 400 && res.statusCode < 500, `${path}: ${res.statusCode}`)
        expectError(res, res.statusCode)
      }
      expectError(await feed('/feeds/packs/alice/faithful-32x/?x=%00'), 400)
    })
  })

  describe('Settings → Feeds', () => {
    test('the page shows the addresses to copy; Reset and Revoke post with the CSRF token', async () => {
      const { site: own, dora } = await siteWith({ users: ['dora'] })
      try {
        const session = await signIn(own, dora)
        const form = (action: string, csrf = session.csrf) => own.app.inject({
          method: 'POST', url: action, cookies: { packs_session: session.cookie },
          headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams({ csrf_token: csrf }).toString(),
        })
        const empty = await own.app.inject({ url: '/settings/feeds/', cookies: { packs_session: session.cookie } })
        assert.equal(empty.statusCode, 200)
        assert.match(empty.body, /Make a feed token/)
        assert.match(empty.body, /action="\/settings\/feeds\/reset\/"/)

        expectError(await form('/settings/feeds/reset/', 'wrong'), 403, /CSRF/)
        const made = await form('/settings/feeds/reset/')
        assert.equal(made.statusCode, 303)
        assert.equal(made.headers.location, '/settings/feeds/?done=reset')
        const page = await own.app.inject({ url: '/settings/feeds/?done=reset', cookies: { packs_session: session.cookie } })
        const api = (await asSession(own, session, 'GET', '/api/me/feed-token/')).json() as FeedTokenBody
        // Without PACKS_BASE_URL the addresses start at the request's own origin.
        assert.ok(page.body.includes(`http://localhost:80/feeds/new/?feed_token=${api.token}`))
        assert.ok(page.body.includes(`http://localhost:80/feeds/users/dora/?feed_token=${api.token}`))
        assert.match(page.body, /data-copy="#feed-new"/)
        assert.match(page.body, /Reset token/)
        assert.match(page.body, /Revoke token/)
        assert.match(page.body, /New feed token made/)
        readFeed(await own.app.inject({ url: `/feeds/new/?feed_token=${api.token}` }))

        // The form's reset needs a session too.
        const withToken = await own.app.inject({ method: 'POST', url: '/settings/feeds/reset/', headers: { ...dora.headers, 'content-type': 'application/x-www-form-urlencoded' }, payload: '' })
        assert.equal(withToken.statusCode, 403)

        const revoked = await form('/settings/feeds/revoke/')
        assert.equal(revoked.statusCode, 303)
        assert.equal(revoked.headers.location, '/settings/feeds/?done=revoked')
        expectError(await own.app.inject({ url: `/feeds/new/?feed_token=${api.token}` }), 401)
        const after = await own.app.inject({ url: '/settings/feeds/?done=revoked', cookies: { packs_session: session.cookie } })
        assert.match(after.body, /Feed token revoked/)
        assert.match(after.body, /Make a feed token/)
        assert.ok(!after.body.includes(api.token!))
      } finally {
        await own.close()
      }
    })
  })
})

describe('wrong tokens are counted; uses are noted at most once a minute; a disabled account\'s token stops', () => {
  let now = Date.parse('2026-12-02T10:00:00.000Z')
  let site: TestSite
  let erin: TestUser
  let root: TestUser
  let token = ''

  before(async () => {
    ;({ site, erin, root } = await siteWith({ users: ['erin'], staff: ['root'], env: { PACKS_AUTH_FAILURE_LIMIT: '3' }, clock: () => now }))
    token = (await newFeedToken(site, await signIn(site, erin))).token!
  })
  after(() => site.close())

  const lastUsed = async () => (await site.app.db.selectFrom('feed_tokens').select('last_used_at').executeTakeFirstOrThrow()).last_used_at

  test('last_used_at: written on the first use, then not again within a minute', async () => {
    assert.equal(await lastUsed(), null)
    readFeed(await site.app.inject({ url: `/feeds/new/?feed_token=${token}` }))
    assert.equal(await lastUsed(), '2026-12-02T10:00:00.000Z')
    now += 30_000
    readFeed(await site.app.inject({ url: `/feeds/new/?feed_token=${token}` }))
    assert.equal(await lastUsed(), '2026-12-02T10:00:00.000Z', 'not a write per request')
    now += 31_000
    readFeed(await site.app.inject({ url: `/feeds/new/?feed_token=${token}` }))
    assert.equal(await lastUsed(), '2026-12-02T10:01:01.000Z')
  })

  test('after the limit of wrong tokens an address gets 429, even for the right token; the gate and other addresses are untouched', async () => {
    const from = (remoteAddress: string, candidate: string) => site.app.inject({ url: `/feeds/new/?feed_token=${candidate}`, remoteAddress })
    for (let i = 0; i < 3; i++) expectError(await from('203.0.113.7', `pkf_${String(i).repeat(43)}`), 401)
    const blocked = await from('203.0.113.7', `pkf_${'9'.repeat(43)}`)
    expectError(blocked, 429, /feed tokens/)
    assert.ok(Number(blocked.headers['retry-after']) > 0)
    expectError(await from('203.0.113.7', token), 429)
    // The site password from that address is counted apart, and so is everyone else.
    assert.equal((await site.app.inject({ url: '/feeds/new/', remoteAddress: '203.0.113.7', headers: site.gate })).statusCode, 200)
    assert.equal((await from('198.51.100.1', token)).statusCode, 200)
  })

  test('a disabled account\'s token is refused, saying why; enabled again, it works', async () => {
    assert.equal((await site.app.inject({ method: 'POST', url: '/api/users/erin/disable/', headers: root.headers, payload: {} })).statusCode, 200)
    expectError(await site.app.inject({ url: `/feeds/new/?feed_token=${token}`, remoteAddress: '192.0.2.1' }), 401, /disabled/)
    assert.equal((await site.app.inject({ method: 'POST', url: '/api/users/erin/enable/', headers: root.headers, payload: {} })).statusCode, 200)
    readFeed(await site.app.inject({ url: `/feeds/new/?feed_token=${token}`, remoteAddress: '192.0.2.1' }))
  })
})

describe('the access log of a real server', () => {
  const PASSWORD = 'feeds-access-log-password'
  let backends: SuiteBackends
  let server: RunningServer

  before(async () => {
    backends = await suiteBackends()
    server = await startServer({ env: { PACKS_MASTER_PASSWORD: PASSWORD, ...backends.env } })
  })
  after(async () => {
    await server?.stop()
    if (server) fs.rmSync(server.dataDir, { recursive: true, force: true })
    await backends?.release()
  })

  test('never shows a feed token: feeds, wrong tokens, other paths and the gate\'s next= all read [redacted]', async () => {
    const gate = { 'x-master-password': PASSWORD }
    const signup = await fetch(`${server.url}/signup/`, {
      method: 'POST', redirect: 'manual', headers: { ...gate, 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'fay', password: 'fay-password-1', password_repeat: 'fay-password-1' }),
    })
    assert.equal(signup.status, 303, await signup.text())
    const cookie = signup.headers.getSetCookie().map((c) => c.split(';')[0]!).join('; ')
    const me = await fetch(`${server.url}/api/me/`, { headers: { cookie } })
    const { csrf_token: csrf } = await me.json() as { csrf_token: string }
    const made = await fetch(`${server.url}/api/me/feed-token/`, { method: 'POST', headers: { cookie, 'x-csrf-token': csrf } })
    assert.equal(made.status, 201)
    const body = await made.json() as FeedTokenBody
    const token = body.token!
    assert.match(token, TOKEN_SHAPE)

    assert.equal(body.feeds!.new_packs, `${server.url}/feeds/new/?feed_token=${token}`)
    const feedRes = await fetch(body.feeds!.new_packs)
    assert.equal(feedRes.status, 200, await feedRes.text())
    assert.equal((await fetch(`${server.url}/feeds/users/fay/?mark=1&feed_token=${token}`)).status, 200)
    assert.equal((await fetch(`${server.url}/feeds/new/?feed_token=${token}x`)).status, 401)
    assert.equal((await fetch(`${server.url}/api/me/?feed_token=${token}`)).status, 401)
    // A browser sent to the gate carries the address it came from in next=, percent-encoded.
    const toGate = await fetch(`${server.url}/settings/tokens/?feed_token=${token}&x=1`, { redirect: 'manual', headers: { accept: 'text/html' } })
    assert.equal(toGate.status, 303)
    const location = toGate.headers.get('location')!
    assert.equal((await fetch(`${server.url}${location}`, { headers: { accept: 'text/html' } })).status, 200)
    // Everything so far has reached the log once the gate page's own line is there.
    await server.waitForStdout(/"url":"\/gate\/\?next=[^"]*"/)
    const log = server.stdout()
    assert.ok(!log.includes(token.slice(4)), 'no feed token in the log')
    const urls = log.split('\n').filter((line) => line.includes('"msg":"request"')).map((line) => (JSON.parse(line) as { url: string }).url)
    assert.ok(urls.includes('/feeds/new/?feed_token=[redacted]'), urls.join('\n'))
    assert.ok(urls.includes('/feeds/users/fay/?mark=1&feed_token=[redacted]'))
    assert.ok(urls.includes('/api/me/?feed_token=[redacted]'))
    assert.ok(urls.some((url) => /^\/gate\/\?next=.*feed_token%3D\[redacted\]%26x%3D1/.test(url)), urls.join('\n'))
    assert.ok(!server.stderr().includes(token.slice(4)))
  })
})
