// The pack page through app.inject: what it shows, versions newest first
// with the Minecraft releases they are for and working download links, the
// owner's new-version form (and nobody else's), 404, the gate, CSP and
// escaping of everything a user wrote.
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { setTimeout as delay } from 'node:timers/promises'
import { after, before, describe, test } from 'node:test'
import { siteWith, type TestSite, type TestUser } from '../helpers/app.js'
import { datapack, mp4, multipart, png } from '../helpers/fixtures.js'
import { pathOf, publishPack, saveDraft, seedTags, upload, type PackJson } from '../helpers/packs.js'

const HTML = { accept: 'text/html,application/xhtml+xml' }

let site: TestSite
let alice: TestUser
let bob: TestUser
let pack: PackJson
const archives: Record<string, Buffer> = {}

function packPage(url: string, headers: Record<string, string> = site.gate) {
  return site.app.inject({ url, headers: { ...HTML, ...headers } })
}

async function addVersion(user: TestUser, name: string, archive: Buffer, changelog?: string) {
  const body = multipart([
    { name: 'version_name', value: name },
    ...(changelog === undefined ? [] : [{ name: 'changelog', value: changelog }]),
    { name: 'file', value: archive, filename: `${name}.zip`, contentType: 'application/zip' },
  ])
  const res = await site.app.inject({
    method: 'POST', url: `/api/packs/${pack.namespace}/${pack.pack_id}/versions/`, headers: { ...user.headers, ...body.headers }, payload: body.payload,
  })
  assert.equal(res.statusCode, 201, res.body)
}

/** The <li class="version"> items of a page, in order. */
function versions(body: string): string[] {
  return body.split('<li class="version">').slice(1).map((item) => item.slice(0, item.indexOf('</li>')))
}

before(async () => {
  ;({ site, alice, bob } = await siteWith({ users: ['alice', 'bob'] }))
  await seedTags(site)

  const draft = randomUUID()
  archives['1.0.0'] = await datapack(48)
  await saveDraft(site, alice, draft, {
    title: 'Castle Walls',
    summary: 'Tall stone walls for every castle',
    description: '## Features\n\n- **Stone** walls\n- Gates\n\nSee [the wiki](https://example.org/wiki) or <https://example.org/a>.',
    category: 'theme',
    tags: ['Medieval', 'Adventure'],
    version_name: '1.0.0',
    changelog: 'First release',
  })
  await upload(site, alice, 'version', archives['1.0.0'], { draft, filename: 'castle.zip' })
  await upload(site, alice, 'thumbnail', png(4, 4), { draft, filename: 'icon.png' })
  await upload(site, alice, 'media', png(8, 8, [0, 128, 0]), { draft, filename: 'screenshot.png' })
  await upload(site, alice, 'media', mp4(), { draft, filename: 'tour.mp4' })
  const published = await site.app.inject({ method: 'POST', url: '/api/draft/publish/', headers: alice.headers, payload: { draft } })
  assert.equal(published.statusCode, 201, published.body)
  pack = published.json() as PackJson

  await delay(2)
  archives['2.0.0'] = await datapack(61, { 'data/test/function/two.mcfunction': 'say two' })
  await addVersion(alice, '2.0.0', archives['2.0.0'], 'Line one\nLine two')
  await delay(2)
  archives['3.0.0-beta'] = await datapack(null)
  await addVersion(alice, '3.0.0-beta', archives['3.0.0-beta'])
})
after(() => site.close())

describe('pack page', () => {
  test('shows title, namespace:pack_id with a copy button, summary, owner, chips, thumbnail', async () => {
    const res = await packPage('/packs/alice/castle-walls/')
    assert.equal(res.statusCode, 200, res.body)
    assert.match(String(res.headers['content-type']), /^text\/html/)
    assert.match(res.body, /<title>Castle Walls · Packs<\/title>/)
    assert.match(res.body, /<h1>Castle Walls<\/h1>/)
    assert.match(res.body, /<code id="pack-id">alice:castle-walls<\/code>/)
    assert.match(res.body, /<button type="button" class="secondary" data-copy="#pack-id">Copy id<\/button>/)
    assert.match(res.body, /paste this id into the in-game mod/)
    assert.match(res.body, /<p class="summary">Tall stone walls for every castle<\/p>/)
    assert.match(res.body, /by <a class="owner" href="\/users\/alice\/">alice<\/a>/)
    assert.match(res.body, /<a class="chip cat-theme" href="\/\?category=theme">Theme/)
    assert.match(res.body, /<a class="chip cat-theme" href="\/\?tag=Medieval">Medieval<\/a>/)
    assert.match(res.body, /<a class="chip cat-kind" href="\/\?tag=Adventure">Adventure<\/a>/)
    assert.match(res.body, new RegExp(`<img class="pack-icon" src="${pack.thumbnail_url}" alt="Thumbnail of Castle Walls"`))
  })

  test('answers to any case of namespace and pack id, with or without the trailing slash', async () => {
    for (const url of ['/packs/ALICE/Castle-Walls/', '/packs/alice/castle-walls']) {
      const res = await packPage(url)
      assert.equal(res.statusCode, 200, url)
      assert.match(res.body, /<code id="pack-id">alice:castle-walls<\/code>/)
    }
  })

  test('the description is rendered from Markdown, with headings below the page\'s own and safe links', async () => {
    const res = await packPage('/packs/alice/castle-walls/')
    const description = res.body.slice(res.body.indexOf('<div class="markdown">'), res.body.indexOf('</section>', res.body.indexOf('<div class="markdown">')))
    assert.match(description, /<h4>Features<\/h4>/)
    assert.match(description, /<li><strong>Stone<\/strong> walls<\/li>/)
    assert.match(description, /<a href="https:\/\/example.org\/wiki" rel="nofollow ugc noopener noreferrer">the wiki<\/a>/)
    assert.match(description, /<a href="https:\/\/example.org\/a" rel="nofollow ugc noopener noreferrer">https:\/\/example.org\/a<\/a>/)
  })

  test('media gallery: images as <img> and videos as <video controls preload="metadata">, each with a name', async () => {
    const res = await packPage('/packs/alice/castle-walls/')
    const [image, video] = pack.media
    assert.equal(image!.content_type, 'image/png')
    assert.equal(video!.content_type, 'video/mp4')
    assert.match(res.body, new RegExp(`<img src="${image!.url}" alt="Image 1 of 2: screenshot.png" loading="lazy">`))
    assert.match(res.body, new RegExp(`<video controls preload="metadata" src="${video!.url}" aria-label="Video 2 of 2: tour.mp4">`))
  })

  test('versions newest first, each with name, Minecraft releases (or an unknown format), changelog and a Download link', async () => {
    const res = await packPage('/packs/alice/castle-walls/')
    const items = versions(res.body)
    assert.equal(items.length, 3)
    assert.match(items[0]!, /<h3 class="version-name" id="vh-1">3\.0\.0-beta<\/h3><span class="latest-badge">Latest<\/span>/)
    assert.match(items[0]!, /<span class="game-versions" title="pack_format unknown">pack format unknown<\/span>/)
    assert.match(items[0]!, /No changelog\./)
    assert.match(items[1]!, />2\.0\.0<\/h3>/)
    assert.match(items[1]!, /<span class="game-versions" title="pack_format 61">Minecraft 1\.21\.4 \(data pack\)<\/span>/)
    // The changelog keeps its line break (shown by CSS white-space: pre-wrap).
    assert.match(items[1]!, /<div class="changelog">Line one\nLine two<\/div>/)
    assert.match(items[2]!, />1\.0\.0<\/h3>/)
    assert.match(items[2]!, /<span class="game-versions" title="pack_format 48">Minecraft 1\.21 – 1\.21\.1 \(data pack\)<\/span>/)
    assert.match(items[2]!, /First release/)
    for (const item of items) assert.match(item, /<time datetime="[^"]+Z"/)
  })

  test('each Download link is the absolute download_url and gives that version\'s exact bytes', async () => {
    const res = await packPage('/packs/alice/castle-walls/')
    const api = (await site.app.inject({ url: '/api/packs/alice/castle-walls/', headers: site.gate })).json() as PackJson
    const names = ['3.0.0-beta', '2.0.0', '1.0.0']
    const items = versions(res.body)
    for (const [i, name] of names.entries()) {
      const href = /<a class="download button" href="([^"]+)"[^>]*>Download<\/a>/.exec(items[i]!)?.[1]
      assert.ok(href, `a download link for ${name}`)
      assert.equal(href, api.versions[i]!.download_url)
      assert.match(href, /^http:\/\/localhost:80\/api\/files\/[0-9a-f-]{36}\/\?download=1$/)
      const file = await site.app.inject({ url: pathOf(href), headers: site.gate })
      assert.equal(file.statusCode, 200)
      assert.match(String(file.headers['content-disposition']), /^attachment/)
      assert.ok(file.rawPayload.equals(archives[name]!), `the bytes of ${name}`)
    }
  })

  test('the owner sees the new-version form; other users and gate-only visitors do not', async () => {
    const owner = await packPage('/packs/alice/castle-walls/', alice.headers)
    assert.match(owner.body, /<form id="new-version"[^>]* action="\/api\/packs\/alice\/castle-walls\/versions\/"/)
    assert.match(owner.body, /<label for="nv-file">Version archive \(ZIP\)<\/label>\s*<input type="file" id="nv-file" name="file"/)
    assert.match(owner.body, /<label for="nv-name">Version name<\/label>\s*<input type="text" id="nv-name" name="version_name"/)
    assert.match(owner.body, /<label for="nv-changelog">Changelog<\/label>\s*<textarea id="nv-changelog" name="changelog"/)
    assert.match(owner.body, /<progress id="nv-progress"/)
    assert.match(owner.body, /<p id="nv-error" class="field-error" role="alert">/)
    assert.match(owner.body, />Upload version<\/button>/)
    // The form's script is loaded for the owner only.
    assert.match(owner.body, /<script type="module" src="\/assets\/pack-[A-Za-z0-9]+\.js">/)

    for (const [who, headers] of [['bob', bob.headers], ['gate only', site.gate]] as const) {
      const res = await packPage('/packs/alice/castle-walls/', headers)
      assert.equal(res.statusCode, 200, who)
      assert.doesNotMatch(res.body, /new-version/, who)
      assert.doesNotMatch(res.body, /Upload version/, who)
      assert.doesNotMatch(res.body, /\/assets\/pack-/, who)
    }
  })

  test('an unknown pack is a 404 page; JSON clients still get JSON', async () => {
    const res = await packPage('/packs/alice/no-such-pack/')
    assert.equal(res.statusCode, 404)
    assert.match(String(res.headers['content-type']), /^text\/html/)
    assert.match(res.body, /<h1>Not found<\/h1>/)
    assert.match(res.body, /There is no pack &quot;alice:no-such-pack&quot;/)
    assert.equal((await packPage('/packs/nobody/castle-walls/')).statusCode, 404)
    const json = await site.app.inject({ url: '/packs/alice/no-such-pack/', headers: site.gate })
    assert.equal(json.statusCode, 404)
    assert.match(String(json.headers['content-type']), /^application\/json/)
  })

  test('without the gate: a redirect to the gate page that comes back here', async () => {
    const res = await site.app.inject({ url: '/packs/alice/castle-walls/', headers: HTML })
    assert.equal(res.statusCode, 303)
    assert.equal(res.headers.location, `/gate/?next=${encodeURIComponent('/packs/alice/castle-walls/')}`)
  })

  test('a CSP without inline script; no inline script or style in the page', async () => {
    const res = await packPage('/packs/alice/castle-walls/', alice.headers)
    const csp = String(res.headers['content-security-policy'])
    assert.match(csp, /script-src 'self'(;|$)/)
    assert.match(csp, /img-src 'self'/)
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/)
    assert.doesNotMatch(res.body, /<script(?![^>]*\ssrc=)[^>]*>/)
    assert.doesNotMatch(res.body, /\sstyle="/)
  })
})

describe('pack page: everything a user wrote is escaped', () => {
  let evil: PackJson

  before(async () => {
    const mallory = await site.user('mallory')
    evil = await publishPack(site, mallory, {
      title: '<script>alert(1)</script>',
      summary: '<img src=x onerror="alert(2)">',
      description: 'Hello <script>alert(3)</script> <img src=x onerror=alert(4)> <a href="javascript:alert(5)">a</a>\n\n'
        + '[click](javascript:alert(6)) [data](data:text/html,<script>alert(7)</script>) ![ext](https://evil.example/x.png)',
      version_name: '<i>1</i>',
      changelog: '</div><script>alert(8)</script>',
    })
  })

  test('title, summary, version name and changelog are text; raw HTML in the description is escaped; bad links are no links', async () => {
    const res = await packPage(`/packs/${evil.namespace}/${evil.pack_id}/`)
    assert.equal(res.statusCode, 200)
    const main = res.body.slice(res.body.indexOf('<main'), res.body.indexOf('</main>'))
    assert.match(main, /<h1>&lt;script&gt;alert\(1\)&lt;\/script&gt;<\/h1>/)
    assert.match(res.body, /<title>&lt;script&gt;alert\(1\)&lt;\/script&gt; · Packs<\/title>/)
    assert.match(main, /&lt;img src=x onerror=&quot;alert\(2\)&quot;&gt;/)
    assert.match(main, /&lt;script&gt;alert\(3\)&lt;\/script&gt;/)
    assert.match(main, /&lt;img src=x onerror=alert\(4\)&gt;/)
    assert.match(main, /&lt;a href=&quot;javascript:alert\(5\)&quot;&gt;/)
    assert.match(main, /\[click\]\(javascript:alert\(6\)\)/)
    assert.match(main, /">&lt;i&gt;1&lt;\/i&gt;<\/h3>/)
    assert.match(main, /<div class="changelog">&lt;\/div&gt;&lt;script&gt;alert\(8\)&lt;\/script&gt;<\/div>/)
    assert.doesNotMatch(main, /<script/)
    assert.doesNotMatch(main, /<img src=x/)
    assert.doesNotMatch(main, /href="(javascript|data):/i)
    assert.doesNotMatch(main, /evil\.example/, 'external images are dropped')
    assert.doesNotMatch(main, /<[^>]*\sonerror=/, 'no element with an onerror attribute')
  })
})
