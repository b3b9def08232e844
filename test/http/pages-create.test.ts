// The create page and My drafts as the server renders them, and GET /api/drafts/.
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { after, before, describe, test } from 'node:test'
import { expectError, siteWith, type TestSite, type TestUser } from '../helpers/app.js'
import { datapack, png } from '../helpers/fixtures.js'
import { saveDraft, seedTags, upload } from '../helpers/packs.js'

let site: TestSite
let alice: TestUser
let bob: TestUser

before(async () => {
  ;({ site, alice, bob } = await siteWith({ users: ['alice', 'bob'] }))
  await seedTags(site)
})
after(() => site.close())

const HTML = { accept: 'text/html,application/xhtml+xml' }

function page(url: string, user: TestUser | null) {
  return site.app.inject({ method: 'GET', url, headers: { ...HTML, ...(user ? user.headers : site.gate) } })
}

const UUID = /^\/create\/([0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12})\/$/

describe('GET /create/', () => {
  test('redirects (303) to a new random draft UUID each time', async () => {
    const first = await page('/create/', alice)
    const second = await page('/create', alice)
    assert.equal(first.statusCode, 303)
    assert.equal(second.statusCode, 303)
    const a = UUID.exec(String(first.headers.location))?.[1]
    const b = UUID.exec(String(second.headers.location))?.[1]
    assert.ok(a && b, `redirects to /create/<uuid v4>/: ${first.headers.location}, ${second.headers.location}`)
    assert.notEqual(a, b)
  })

  test('anonymous visitors past the gate are sent to sign in and back; visitors before the gate to the gate', async () => {
    const draft = randomUUID()
    for (const path of ['/create/', `/create/${draft}/`, '/drafts/']) {
      const res = await page(path, null)
      assert.equal(res.statusCode, 303, path)
      assert.equal(res.headers.location, `/login/?next=${encodeURIComponent(path)}`)
      const outside = await site.app.inject({ url: path, headers: HTML })
      assert.equal(outside.statusCode, 303, path)
      assert.match(String(outside.headers.location), /^\/gate\/\?next=/)
    }
  })
})

describe('GET /create/{draft}/', () => {
  const LABELS: Array<[string, string]> = [
    ['title', 'Title'], ['summary', 'Summary'], ['category', 'Category'], ['description', 'Description'], ['tags', 'Tags'],
    ['version_name', 'Version name'], ['changelog', 'Changelog'],
    ['file-thumbnail', 'Thumbnail'], ['file-version', 'Version archive (ZIP)'], ['file-media', 'Media'], ['team', 'Add a co-author'],
  ]

  test('a new UUID: the empty form with every labelled field, the save state, Publish, and create.js', async () => {
    const draft = randomUUID()
    const res = await page(`/create/${draft}/`, alice)
    assert.equal(res.statusCode, 200, res.body)
    assert.match(String(res.headers['content-type']), /^text\/html/)
    const body = res.body
    for (const [id, label] of LABELS) {
      const escaped = label.replace(/[()]/g, '\\$&')
      assert.match(body, new RegExp(`<label for="${id}">${escaped}</label>`), `label "${label}"`)
      assert.match(body, new RegExp(`<(input|select|textarea)[^>]* id="${id}"`), `control #${id}`)
    }
    assert.match(body, /<input id="title"[^>]* value=""/, 'empty title')
    assert.match(body, /<input id="file-media"[^>]* multiple/, 'several media files at once')
    assert.match(body, /<input id="file-thumbnail"[^>]* type="file"/)
    assert.match(body, /id="save-state"[^>]*role="status"/)
    assert.match(body, /<button type="button" id="publish">Publish<\/button>/, 'a plain button: Enter in a field never publishes')
    assert.match(body, new RegExp(`data-draft="${draft}"`))
    assert.match(body, /<script type="module" src="\/assets\/create-[A-Za-z0-9_-]+\.js"><\/script>/)
    // The category select offers the site's categories and "No category".
    assert.match(body, /<option value="" selected>No category<\/option>/)
    assert.match(body, /<option value="theme">Theme<\/option>/)
    assert.match(body, /<option value="kind">Kind<\/option>/)
    // Upload limits come from the configuration.
    assert.match(body, /at most 5 MiB/)
    // A new draft is not created by looking at it.
    const api = await site.app.inject({ url: `/api/draft/?draft=${draft}`, headers: alice.headers })
    expectError(api, 404)
  })

  test('the Team field: the user picker\'s box, listbox and live region, the author to skip, what an invitation means', async () => {
    const res = await page(`/create/${randomUUID()}/`, alice)
    assert.equal(res.statusCode, 200, res.body)
    const body = res.body
    const section = /<section class="card" aria-labelledby="team-heading">[\s\S]*?<\/section>/.exec(body)?.[0]
    assert.ok(section, 'a Team section')
    assert.match(section, /<h2 id="team-heading">Team<\/h2>/)
    // What the user picker (src/web/client/lib/user-picker.ts) needs: the box, the listbox it controls, a live region.
    const box = /<input id="team"[^>]*>/.exec(section)?.[0] ?? ''
    for (const attribute of ['type="text"', 'maxlength="64"', 'autocomplete="off"', 'spellcheck="false"', 'autocapitalize="none"', 'aria-describedby="team-hint team-error"']) {
      assert.ok(box.includes(attribute), `the box has ${attribute}: ${box}`)
    }
    assert.doesNotMatch(box, /\bname=/, 'the box is never part of a form submission')
    assert.match(section, /<ul id="team-options" class="tag-options user-options" role="listbox" aria-label="Matching users" hidden><\/ul>/)
    assert.match(section, /<span id="team-live" class="visually-hidden" role="status"><\/span>/)
    assert.match(section, /<p class="field-error" id="team-error" role="alert" hidden><\/p>/)
    // The author is never offered (nor accepted) as a co-author; the draft's limit is the server's.
    assert.match(section, /<div class="field team-field" id="field-team" data-author="alice" data-max="20">/)
    assert.match(section, /<ul class="team-people" id="team-people" aria-label="Co-authors to invite"><\/ul>/, 'nobody yet')
    const text = section.replace(/<[^>]+>/g, '').replace(/\s+/g, ' ')
    assert.match(text, /The invitations go out when the pack is published, and each person joins the team only once they accept/)
    assert.match(text, /At most 20 people/)
    // Without JavaScript nothing on the form submits, as before: every button is a plain button, the form has no action.
    const form = /<form id="create-form"[^>]*>/.exec(body)?.[0] ?? ''
    assert.doesNotMatch(form, /\b(action|method)=/)
    const buttons = body.slice(body.indexOf('<form id="create-form"')).match(/<button\b[^>]*>/g) ?? []
    assert.ok(buttons.length > 0 && buttons.every((b) => b.includes('type="button"')), buttons.join(' '))
    assert.match(body, /<noscript><p class="error">This page needs JavaScript to save your draft, upload files and publish.<\/p><\/noscript>/)
  })

  test('a saved team is rendered as the people to invite, each with the saved role and a Remove button', async () => {
    const draft = randomUUID()
    await saveDraft(site, alice, draft, {
      title: 'Together', team: [{ username: 'bob', role: 'maintainer' }, { username: ' carol ', role: 'uploader' }, { username: 'BOB', role: 'uploader' }],
    })
    const res = await page(`/create/${draft}/`, alice)
    assert.equal(res.statusCode, 200, res.body)
    const rows = res.body.match(/<li class="team-person"[\s\S]*?<\/li>/g) ?? []
    // As publishing reads it: names trimmed, each person once (the last entry for a name wins, as publishing invites).
    assert.equal(rows.length, 2, rows.join('\n'))
    const [first, second] = rows as [string, string]
    assert.match(first, /^<li class="team-person" data-username="BOB"><span class="member-name">BOB<\/span>/)
    assert.match(first, /<label class="team-role"><span class="visually-hidden">Role of BOB<\/span><select><option value="uploader" selected>Uploader<\/option><option value="maintainer">Maintainer<\/option><\/select><\/label>/)
    assert.match(first, /<button type="button" class="secondary team-remove">Remove<span class="visually-hidden"> BOB<\/span><\/button>/)
    assert.match(second, /data-username="carol"/)
    assert.match(second, /<option value="uploader" selected>Uploader/)
  })

  test("the saved draft is rendered: values, category, tag chips in their colors, uploads with previews", async () => {
    const draft = randomUUID()
    await saveDraft(site, alice, draft, {
      title: 'Castle walls', summary: 'Stone everywhere', category: 'theme', description: 'Line one\nLine two',
      tags: ['Medieval', 'Adventure', 'Gone'], version_name: '1.2.3', changelog: 'First', revision: 1234,
    })
    const thumb = await upload(site, alice, 'thumbnail', png(), { draft, filename: 'icon.png' })
    const archive = await upload(site, alice, 'version', await datapack(48), { draft, filename: 'castle.zip' })
    // The draft's id in upper case is the same draft.
    const res = await page(`/create/${draft.toUpperCase()}/`, alice)
    assert.equal(res.statusCode, 200, res.body)
    const body = res.body
    assert.match(body, /<input id="title"[^>]* value="Castle walls"/)
    assert.match(body, /<input id="summary"[^>]* value="Stone everywhere"/)
    assert.match(body, /<input id="version_name"[^>]* value="1.2.3"/)
    assert.match(body, /<textarea id="description"[^>]*>Line one\nLine two<\/textarea>/)
    assert.match(body, /<textarea id="changelog"[^>]*>First<\/textarea>/)
    assert.match(body, /<option value="theme" selected>Theme<\/option>/)
    assert.match(body, /<li data-tag="Medieval"><span class="chip cat-theme">Medieval<button type="button" class="chip-remove" aria-label="Remove Medieval">/)
    assert.match(body, /<li data-tag="Adventure"><span class="chip cat-kind">Adventure/)
    assert.match(body, /<li data-tag="Gone"><span class="chip">Gone/, 'a name that is no tag any more: a plain chip')
    assert.match(body, new RegExp(`data-draft="${draft}" data-revision="1234"`))
    assert.match(body, new RegExp(`<li class="upload" data-upload="${thumb.uuid}" data-kind="thumbnail">\\s*<img class="upload-preview" src="${thumb.url}" alt="Preview of icon.png">`))
    assert.match(body, new RegExp(`<li class="upload" data-upload="${archive.uuid}" data-kind="version">`))
    assert.match(body, /<span class="upload-name">castle.zip<\/span>/)
    assert.equal((body.match(/class="danger delete-upload"/g) ?? []).length, 2)
    assert.match(body, /data-saved-at="\d{4}-\d\d-\d\dT[\d:.]+Z"/)
    assert.match(body, /<title>Castle walls · Packs<\/title>/)
  })

  test('saved values are escaped, not markup', async () => {
    const draft = randomUUID()
    const evil = '"><script>alert(1)</script>'
    await saveDraft(site, alice, draft, {
      title: evil, summary: `' onfocus='alert(2)`, description: '</textarea><script>alert(3)</script>', tags: ['<b>x</b>'],
      changelog: '<img src=x onerror=alert(4)>', category: '"><script>alert(5)</script>',
      team: [{ username: '"><img src=x onerror=alert(6)>', role: 'maintainer' }],
    })
    const res = await page(`/create/${draft}/`, alice)
    assert.equal(res.statusCode, 200)
    const scripts = res.body.match(/<script\b[^>]*>/g) ?? []
    assert.ok(scripts.every((s) => /^<script type="module" src="\/assets\//.test(s)), `only our module scripts: ${scripts.join(' ')}`)
    assert.doesNotMatch(res.body, /<img src=x/)
    assert.doesNotMatch(res.body, /<b>x<\/b>/)
    assert.match(res.body, /value="&quot;&gt;&lt;script&gt;alert\(1\)&lt;\/script&gt;"/)
    assert.match(res.body, /value="&#39; onfocus=&#39;alert\(2\)"/)
    assert.match(res.body, /&lt;\/textarea&gt;&lt;script&gt;alert\(3\)&lt;\/script&gt;<\/textarea>/)
    assert.match(res.body, /<li class="team-person" data-username="&quot;&gt;&lt;img src=x onerror=alert\(6\)&gt;">/)
  })

  test("someone else's draft is a 404 page that shows nothing of it", async () => {
    const draft = randomUUID()
    await saveDraft(site, bob, draft, { title: 'Bob secret plans' })
    const res = await page(`/create/${draft}/`, alice)
    assert.equal(res.statusCode, 404)
    assert.match(String(res.headers['content-type']), /^text\/html/)
    assert.match(res.body, /<h1>Not found<\/h1>/)
    assert.doesNotMatch(res.body, /Bob secret plans|create-form/)
    // Bob still sees it.
    const own = await page(`/create/${draft}/`, bob)
    assert.equal(own.statusCode, 200)
    assert.match(own.body, /value="Bob secret plans"/)
  })

  test('a malformed draft id is a 404 page', async () => {
    for (const bad of ['not-a-uuid', '123', `${randomUUID()}x`, 'zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz']) {
      const res = await page(`/create/${bad}/`, alice)
      assert.equal(res.statusCode, 404, bad)
      assert.match(String(res.headers['content-type']), /^text\/html/)
      assert.match(res.body, /<h1>Not found<\/h1>/)
    }
  })
})

describe('My drafts', () => {
  let carol: TestUser
  const drafts = { older: randomUUID(), newer: randomUUID(), untitled: randomUUID() }

  before(async () => {
    carol = await site.user('carol')
    await saveDraft(site, carol, drafts.older, { title: '  Older draft  ' })
    await sleep(5)
    await saveDraft(site, carol, drafts.untitled, { title: '   ' })
    await upload(site, carol, 'media', png(), { draft: drafts.untitled })
    await upload(site, carol, 'media', png(), { draft: drafts.untitled })
    await sleep(5)
    await saveDraft(site, carol, drafts.newer, { title: 'Newer <draft>' })
    await sleep(5)
    await saveDraft(site, bob, randomUUID(), { title: 'Not carol' })
  })

  test('GET /api/drafts/ lists only the caller\'s drafts, newest first, with title, time and upload count', async () => {
    const res = await site.app.inject({ url: '/api/drafts/', headers: carol.headers })
    assert.equal(res.statusCode, 200, res.body)
    const list = res.json() as Array<{ draft: string; title: string | null; updated_at: string; uploads: number }>
    assert.deepEqual(list.map((d) => [d.draft, d.title, d.uploads]), [
      [drafts.newer, 'Newer <draft>', 0],
      [drafts.untitled, null, 2],
      [drafts.older, 'Older draft', 0],
    ])
    for (const d of list) assert.match(d.updated_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    assert.ok(list[0]!.updated_at >= list[1]!.updated_at && list[1]!.updated_at >= list[2]!.updated_at)

    // Saving an older draft moves it to the top.
    await sleep(5)
    await saveDraft(site, carol, drafts.older, { title: 'Older draft, edited' })
    const again = (await site.app.inject({ url: '/api/drafts/', headers: carol.headers })).json() as typeof list
    assert.deepEqual(again.map((d) => d.draft), [drafts.older, drafts.newer, drafts.untitled])

    const dave = await site.user('dave')
    const none = await site.app.inject({ url: '/api/drafts/', headers: dave.headers })
    assert.equal(none.statusCode, 200)
    assert.deepEqual(none.json(), [])
  })

  test('GET /api/drafts/ needs a user: 401 for gate-only and anonymous requests', async () => {
    expectError(await site.app.inject({ url: '/api/drafts/', headers: site.gate }), 401)
    expectError(await site.app.inject({ url: '/api/drafts/' }), 401)
  })

  test('GET /api/drafts/ is documented with bearerAuth, its fields and 401', async () => {
    const doc = (await site.app.inject({ url: '/api/schema/', headers: site.gate })).json() as {
      paths: Record<string, Record<string, { security?: Array<Record<string, unknown>>; responses: Record<string, { content?: Record<string, { schema?: { type?: string; items?: { properties?: Record<string, unknown> } } }> }> }>>
    }
    const op = doc.paths['/api/drafts/']?.get
    assert.ok(op, 'GET /api/drafts/ is in the OpenAPI document')
    assert.ok((op.security ?? []).some((s) => 'bearerAuth' in s))
    assert.ok(op.responses['401'])
    const schema = op.responses['200']?.content?.['application/json']?.schema
    assert.equal(schema?.type, 'array')
    assert.deepEqual(Object.keys(schema?.items?.properties ?? {}).sort(), ['draft', 'title', 'updated_at', 'uploads'])
  })

  test('the page lists the drafts with Resume links and Delete buttons, titles escaped', async () => {
    const res = await page('/drafts/', carol)
    assert.equal(res.statusCode, 200, res.body)
    const body = res.body
    assert.match(body, /<h1>My drafts<\/h1>/)
    assert.match(body, /<script type="module" src="\/assets\/drafts-[A-Za-z0-9_-]+\.js"><\/script>/)
    const order = [drafts.older, drafts.newer, drafts.untitled].map((d) => body.indexOf(`data-draft="${d}"`))
    assert.ok(order.every((i) => i > 0) && order[0]! < order[1]! && order[1]! < order[2]!, 'newest first')
    for (const d of Object.values(drafts)) assert.match(body, new RegExp(`<a class="button secondary" href="/create/${d}/">Resume`))
    assert.match(body, /Newer &lt;draft&gt;/)
    assert.doesNotMatch(body, /Newer <draft>/)
    assert.match(body, /Untitled draft/)
    assert.match(body, /2 uploads/)
    assert.equal((body.match(/class="danger delete-draft"/g) ?? []).length, 3)
    assert.doesNotMatch(body, /Not carol/)
    assert.match(body, /id="drafts-empty" class="muted" hidden/)
  })

  test('with no drafts the page says so', async () => {
    const erin = await site.user('erin')
    const res = await page('/drafts/', erin)
    assert.equal(res.statusCode, 200)
    assert.match(res.body, /<p id="drafts-empty" class="muted">You have no drafts.<\/p>/)
  })
})
