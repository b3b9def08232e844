// The browse (home) page through app.inject: order, pagination, search and
// filters, chips, empty states, bad input, the gate, CSP and escaping.
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { setTimeout as delay } from 'node:timers/promises'
import { after, before, describe, test } from 'node:test'
import { makeSite, siteWith, type TestSite, type TestUser } from '../helpers/app.js'
import { datapack, multipart } from '../helpers/fixtures.js'
import { createTag } from '../../src/packs/tags.js'
import { publishPack, saveDraft, seedTags, upload, type PackJson } from '../helpers/packs.js'

const HTML = { accept: 'text/html,application/xhtml+xml' }

function browse(site: TestSite, url: string, headers: Record<string, string> = site.gate) {
  return site.app.inject({ url, headers: { ...HTML, ...headers } })
}

/** Titles of the cards on a page, in order. */
function cardTitles(body: string): string[] {
  return [...body.matchAll(/<h2 class="pack-title"><a href="[^"]*">([^<]*)<\/a><\/h2>/g)].map((m) => m[1]!)
}

/** The markup of the card whose title is `title`. */
function cardOf(body: string, title: string): string {
  const card = body.split('<article class="card pack-card">').slice(1).find((c) => c.includes(`>${title}</a></h2>`))
  assert.ok(card, `a card titled ${title}`)
  return card.slice(0, card.indexOf('</article>'))
}

/** The href of the link whose text is exactly `text` (the pager's Previous / Next), or undefined. */
function linkHref(body: string, text: string): string | undefined {
  const match = new RegExp(`<a [^>]*href="([^"]*)"[^>]*>${text}</a>`).exec(body)
  return match?.[1]?.replaceAll('&amp;', '&')
}

/** A title after a pause, so every pack has its own updated_at. */
async function publishInOrder(site: TestSite, user: TestUser, data: Record<string, unknown>, options: { thumbnail?: boolean } = {}): Promise<PackJson> {
  await delay(3)
  return publishPack(site, user, data, options)
}

describe('browse page', () => {
  let site: TestSite
  let alice: TestUser
  let bob: TestUser
  let quest: PackJson

  before(async () => {
    ;({ site, alice, bob } = await siteWith({ users: ['alice', 'bob'] }))
    await seedTags(site)
    await publishInOrder(site, alice, { title: 'Castle Walls', summary: 'Stone walls', category: 'theme', tags: ['Medieval'] })
    await publishInOrder(site, bob, { title: 'Rocket Parts', summary: 'Go up', category: 'theme', tags: ['Space', 'Adventure'] })
    quest = await publishInOrder(site, alice, { title: 'Quest Book', category: 'kind', tags: ['Adventure'] }, { thumbnail: true })
  })
  after(() => site.close())

  test('lists packs most recently updated first; a new version moves a pack to the top', async () => {
    const first = await browse(site, '/')
    assert.equal(first.statusCode, 200, first.body)
    assert.match(String(first.headers['content-type']), /^text\/html/)
    assert.deepEqual(cardTitles(first.body), ['Quest Book', 'Rocket Parts', 'Castle Walls'])
    assert.doesNotMatch(first.body, /class="pagination"/, 'one page: no pager')

    await delay(3)
    const body = multipart([
      { name: 'version_name', value: '2.0.0' },
      { name: 'file', value: await datapack(61), filename: 'v2.zip', contentType: 'application/zip' },
    ])
    const added = await site.app.inject({
      method: 'POST', url: '/api/packs/alice/castle-walls/versions/', headers: { ...alice.headers, ...body.headers }, payload: body.payload,
    })
    assert.equal(added.statusCode, 201, added.body)
    const later = await browse(site, '/')
    assert.deepEqual(cardTitles(later.body), ['Castle Walls', 'Quest Book', 'Rocket Parts'])
    // The card shows the newest version with the Minecraft releases it is for.
    const castle = cardOf(later.body, 'Castle Walls')
    assert.match(castle, /<strong class="version-name">2\.0\.0<\/strong>/)
    assert.match(castle, /<span class="game-versions" title="pack_format 61">Minecraft 1\.21\.4 \(data pack\)<\/span>/)
  })

  test('each card: link to the pack page, namespace:pack_id, summary, chips, owner, updated time', async () => {
    const res = await browse(site, '/')
    const card = cardOf(res.body, 'Rocket Parts')
    assert.match(card, /<a href="\/packs\/bob\/rocket-parts\/">Rocket Parts<\/a>/)
    assert.match(card, /<p class="pack-ref mono">bob:rocket-parts<\/p>/)
    assert.match(card, /<p class="summary">Go up<\/p>/)
    assert.match(card, /<a class="chip cat-theme" href="\/\?category=theme">Theme/)
    assert.match(card, /<a class="chip cat-theme" href="\/\?tag=Space">Space<\/a>/)
    assert.match(card, /<a class="chip cat-kind" href="\/\?tag=Adventure">Adventure<\/a>/)
    assert.match(card, /by <a class="owner" href="\/users\/bob\/">bob<\/a>/)
    assert.match(card, /<time datetime="\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"/)
    // No thumbnail: a placeholder, never an external image.
    assert.match(card, /<span class="pack-thumb placeholder" aria-hidden="true">R<\/span>/)
  })

  test('a card with a thumbnail shows it from our own files', async () => {
    const res = await browse(site, '/')
    const card = cardOf(res.body, 'Quest Book')
    assert.ok(quest.thumbnail_url)
    assert.match(card, new RegExp(`<img class="pack-thumb" src="${quest.thumbnail_url}" alt=""`))
    const image = await site.app.inject({ url: quest.thumbnail_url, headers: site.gate })
    assert.equal(image.statusCode, 200)
    assert.equal(image.headers['content-type'], 'image/png')
  })

  test('search by title (case-insensitive) shows only matching packs and keeps the text in the box', async () => {
    const res = await browse(site, '/?q=ROCK')
    assert.equal(res.statusCode, 200)
    assert.deepEqual(cardTitles(res.body), ['Rocket Parts'])
    assert.match(res.body, /<label for="search-q">Search packs<\/label>/)
    assert.match(res.body, /<input type="search" id="search-q" name="q" value="ROCK"/)
    assert.match(res.body, /1 pack with “ROCK” in the title/)
    // "%" is text, not a wildcard.
    assert.deepEqual(cardTitles((await browse(site, '/?q=%25')).body), [])
  })

  test('tag filter (by name) and category filter (by key) show only matching packs; the active chip is marked', async () => {
    const tagged = await browse(site, '/?tag=adventure')
    assert.deepEqual(cardTitles(tagged.body).sort(), ['Quest Book', 'Rocket Parts'])
    // The filter chip of the active tag is selected and links to "off"; others keep the tag when adding a category.
    assert.match(tagged.body, /<a class="chip cat-kind selected" href="\/" aria-current="true">/)
    assert.match(tagged.body, /<a class="chip cat-theme" href="\/\?tag=adventure&amp;category=theme">/)
    assert.match(tagged.body, /<a href="\/">Clear filters<\/a>/)
    // The search form keeps the active filters.
    assert.match(tagged.body, /<input type="hidden" name="tag" value="adventure">/)

    const kind = await browse(site, '/?category=kind')
    assert.deepEqual(cardTitles(kind.body), ['Quest Book'])
    assert.match(kind.body, /<a class="chip cat-kind selected" href="\/" aria-current="true">/)

    const both = await browse(site, '/?category=theme&tag=Medieval')
    assert.deepEqual(cardTitles(both.body), ['Castle Walls'])
    const none = await browse(site, '/?category=kind&tag=Medieval')
    assert.deepEqual(cardTitles(none.body), [])
    assert.match(none.body, /No packs match/)
  })

  test('filter chips: every category and the used tags, in their category colors; unused tags left out', async () => {
    const res = await browse(site, '/')
    const filters = res.body.slice(res.body.indexOf('<section class="filters"'), res.body.indexOf('</section>', res.body.indexOf('<section class="filters"')))
    assert.match(filters, /<a class="chip cat-theme" href="\/\?category=theme">Theme<\/a>/)
    assert.match(filters, /<a class="chip cat-kind" href="\/\?category=kind">Kind<\/a>/)
    assert.match(filters, /<a class="chip cat-kind" href="\/\?tag=Adventure">Adventure<\/a>/)
    assert.match(filters, /<a class="chip cat-theme" href="\/\?tag=Medieval">Medieval<\/a>/)
    assert.doesNotMatch(filters, /Clear filters/)
    // Adventure is on two packs: the most used tag comes first.
    assert.ok(filters.indexOf('?tag=Adventure') < filters.indexOf('?tag=Medieval'))
    // The categories stylesheet that colors them is linked.
    assert.match(res.body, /<link rel="stylesheet" href="\/assets\/categories.css">/)
  })

  test('a tag on no pack is no filter chip, until it is the active filter: then it comes first, selected', async () => {
    await createTag(site.app.db, 'Underwater', 'theme')
    const filtersOf = (body: string) => body.slice(body.indexOf('<section class="filters"'), body.indexOf('</section>', body.indexOf('<section class="filters"')))
    assert.doesNotMatch(filtersOf((await browse(site, '/')).body), /Underwater/)
    const res = await browse(site, '/?tag=underwater')
    assert.equal(res.statusCode, 200)
    const filters = filtersOf(res.body)
    // Shown as the site spells it, in its category's color, and the link switches it off.
    assert.match(filters, /<h2 class="filter-label" id="filter-tags">Popular tags<\/h2><ul class="chips" aria-labelledby="filter-tags"><li><a class="chip cat-theme selected" href="\/" aria-current="true"><span aria-hidden="true">✓<\/span>Underwater<\/a><\/li><li>/)
    assert.match(res.body, /No packs match/)
  })

  test('/assets/categories.css colors each category, revalidated by its ETag', async () => {
    const res = await site.app.inject({ url: '/assets/categories.css', headers: site.gate })
    assert.equal(res.statusCode, 200)
    assert.equal(res.headers['content-type'], 'text/css; charset=utf-8')
    assert.equal(res.headers['cache-control'], 'no-cache')
    assert.equal(res.body, '.cat-kind{--chip-bg:#0055aa;--chip-fg:#ffffff}\n.cat-theme{--chip-bg:#aa5500;--chip-fg:#ffffff}\n')
    const etag = String(res.headers.etag)
    const again = await site.app.inject({ url: '/assets/categories.css', headers: { ...site.gate, 'if-none-match': etag } })
    assert.equal(again.statusCode, 304)
    assert.equal(again.body, '')
    assert.equal(again.headers.etag, etag)
  })

  test('the site has an icon: every page links it, and /favicon.ico answers it without the gate', async () => {
    const page = await browse(site, '/')
    const href = /<link rel="icon" type="image\/svg\+xml" href="(\/assets\/favicon-[0-9A-Z]+\.svg)">/.exec(page.body)?.[1]
    assert.ok(href, 'the page links the icon')
    const linked = await site.app.inject({ url: href })
    assert.equal(linked.statusCode, 200)
    assert.equal(linked.headers['content-type'], 'image/svg+xml')
    assert.match(linked.body, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/)
    // The gate page shows it too: no gate password, no cookie.
    const toGate = await site.app.inject({ url: '/', headers: { accept: 'text/html' } })
    const gatePage = toGate.headers.location ? await site.app.inject({ url: String(toGate.headers.location), headers: { accept: 'text/html' } }) : toGate
    assert.equal(gatePage.statusCode, 200)
    assert.match(gatePage.body, /<link rel="icon" /)
    const ico = await site.app.inject({ url: '/favicon.ico' })
    assert.equal(ico.statusCode, 200)
    assert.equal(ico.headers['content-type'], 'image/svg+xml')
    assert.equal(ico.headers['cache-control'], 'public, max-age=86400')
    assert.equal(ico.body, linked.body)
  })

  test('bad page parameters give a clear 400 page, never a 500', async () => {
    for (const page of ['abc', '0', '-1', '1.5', '1e3', '9999999999']) {
      const res = await browse(site, `/?page=${page}`)
      assert.equal(res.statusCode, 400, `page=${page}: ${res.body.slice(0, 200)}`)
      assert.match(String(res.headers['content-type']), /^text\/html/)
      assert.match(res.body, /<h1>Bad request<\/h1>/)
      assert.match(res.body, /&quot;page&quot; must be a whole number from 1/)
    }
    const twice = await browse(site, '/?page=1&page=2')
    assert.equal(twice.statusCode, 400)
    assert.match(twice.body, /&quot;page&quot; may be given only once/)
    assert.equal((await browse(site, '/?tag=a&tag=b')).statusCode, 400)
    const long = await browse(site, `/?q=${'x'.repeat(201)}`)
    assert.equal(long.statusCode, 400)
    assert.match(long.body, /search text is longer than 200 characters/)
    // A page past the end says so.
    const past = await browse(site, '/?page=7')
    assert.equal(past.statusCode, 404)
    assert.match(past.body, /There is no page 7 of these packs; the last one is page 1\./)
  })

  test('without the gate: a redirect to the gate page that comes back here', async () => {
    const res = await site.app.inject({ url: '/?tag=Space', headers: HTML })
    assert.equal(res.statusCode, 303)
    assert.equal(res.headers.location, `/gate/?next=${encodeURIComponent('/?tag=Space')}`)
  })

  test('the page has a CSP without inline script, and no inline script or style', async () => {
    const res = await browse(site, '/')
    const csp = String(res.headers['content-security-policy'])
    assert.match(csp, /script-src 'self'(;|$)/)
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/)
    assert.doesNotMatch(res.body, /<script(?![^>]*\ssrc=)[^>]*>/)
    assert.doesNotMatch(res.body, /\sstyle="/)
    assert.doesNotMatch(res.body, /https?:\/\/(?!localhost)/, 'no external URL')
  })

  test('signed in, the page still works and offers nothing it should not', async () => {
    const res = await browse(site, '/', alice.headers)
    assert.equal(res.statusCode, 200)
    assert.equal(cardTitles(res.body).length, 3)
  })
})

describe('browse page: pagination', () => {
  let site: TestSite

  before(async () => {
    site = await makeSite()
    const carol = await site.user('carol')
    const titles = [...Array.from({ length: 25 }, (_, i) => `Bulk ${String(i + 1).padStart(2, '0')}`), 'Other']
    // As publishPack makes them, but the drafts and their version uploads all at once (their order decides
    // nothing), then the publications one by one, in order, each after a pause: publishing sets updated_at.
    const archive = await datapack(48)
    const drafts = await Promise.all(titles.map(async (title) => {
      const draft = randomUUID()
      await saveDraft(site, carol, draft, { title, version_name: '1.0.0' })
      await upload(site, carol, 'version', archive, { draft })
      return draft
    }))
    for (const draft of drafts) {
      await delay(3)
      const res = await site.app.inject({ method: 'POST', url: '/api/draft/publish/', headers: carol.headers, payload: { draft } })
      assert.equal(res.statusCode, 201, res.body)
    }
  })
  after(() => site.close())

  test('20 to a page, newest first, with Previous / Next and "Page x of y"', async () => {
    const first = await browse(site, '/')
    const titles = cardTitles(first.body)
    assert.equal(titles.length, 20)
    assert.equal(titles[0], 'Other')
    assert.equal(titles[1], 'Bulk 25')
    assert.match(first.body, /26 packs/)
    assert.match(first.body, /Page 1 of 2/)
    assert.equal(linkHref(first.body, 'Next'), '/?page=2')
    assert.equal(linkHref(first.body, 'Previous'), undefined)
    assert.match(first.body, /<span class="button secondary" aria-disabled="true">Previous<\/span>/)

    const second = await browse(site, '/?page=2')
    assert.deepEqual(cardTitles(second.body), ['Bulk 06', 'Bulk 05', 'Bulk 04', 'Bulk 03', 'Bulk 02', 'Bulk 01'])
    assert.match(second.body, /Page 2 of 2/)
    assert.equal(linkHref(second.body, 'Previous'), '/')
    assert.equal(linkHref(second.body, 'Next'), undefined)
  })

  test('pager links keep the search', async () => {
    const first = await browse(site, '/?q=bulk')
    assert.equal(cardTitles(first.body).length, 20)
    assert.match(first.body, /25 packs with “bulk” in the title/)
    const next = linkHref(first.body, 'Next')
    assert.equal(next, '/?q=bulk&page=2')
    const second = await browse(site, next!)
    assert.deepEqual(cardTitles(second.body), ['Bulk 05', 'Bulk 04', 'Bulk 03', 'Bulk 02', 'Bulk 01'])
    assert.equal(linkHref(second.body, 'Previous'), '/?q=bulk')
  })
})

describe('browse page: empty states and escaping', () => {
  let site: TestSite

  before(async () => {
    site = await makeSite()
  })
  after(() => site.close())

  test('no packs yet', async () => {
    const res = await browse(site, '/')
    assert.equal(res.statusCode, 200)
    assert.match(res.body, /No packs yet/)
    assert.doesNotMatch(res.body, /class="pagination"/)
    assert.match((await browse(site, '/?q=anything')).body, /No packs match/)
  })

  test('a title, summary and version name with markup appear as text', async () => {
    const mallory = await site.user('mallory')
    await publishPack(site, mallory, {
      title: '<script>alert(1)</script>',
      summary: '<img src=x onerror="alert(2)">',
      version_name: '<b>1.0</b>',
    })
    const res = await browse(site, '/')
    assert.match(res.body, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/)
    assert.match(res.body, /&lt;img src=x onerror=&quot;alert\(2\)&quot;&gt;/)
    assert.match(res.body, /&lt;b&gt;1\.0&lt;\/b&gt;/)
    assert.doesNotMatch(res.body, /<script>alert/)
    assert.doesNotMatch(res.body, /<img src=x/)
    // Searching for it echoes the text escaped too.
    const search = await browse(site, `/?q=${encodeURIComponent('<script>')}`)
    assert.equal(cardTitles(search.body).length, 1)
    assert.match(search.body, /value="&lt;script&gt;"/)
    assert.doesNotMatch(search.body, /<script>alert/)
  })
})
