// The browse (home) page through app.inject: order, pagination, search and
// the filter panel (its fields, their counts, the URL's state in the form, the
// same search and the same refusals as GET /api/packs/), "no results"
// suggestions, empty states, the gate, CSP and escaping.
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { setTimeout as delay } from 'node:timers/promises'
import { after, before, describe, test } from 'node:test'
import { makeSite, siteWith, type TestSite, type TestUser } from '../helpers/app.js'
import { datapack, multipart } from '../helpers/fixtures.js'
import { createCategory, createTag } from '../../src/packs/tags.js'
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

/** The count shown beside the option `value` of the field `name`; undefined when there is no such option. */
function optionCount(body: string, name: string, value: string): number | undefined {
  const escaped = value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
  const match = new RegExp(`<input type="(?:radio|checkbox)" name="${name}" value="${escaped}" form="browse-form"(?: checked)?> <span class="option-label">[^<]*</span> <span class="option-count">([0-9,]+)</span>`).exec(body)
  return match ? Number(match[1]!.replaceAll(',', '')) : undefined
}

/** The values of the ticked boxes or the chosen radio button of the field `name`. */
function checked(body: string, name: string): string[] {
  return [...body.matchAll(new RegExp(`<input type="(?:radio|checkbox)" name="${name}" value="([^"]*)" form="browse-form" checked>`, 'g'))].map((m) => m[1]!)
}

/** The Minecraft version select's options: value and text. */
function mcOptions(body: string): { value: string; text: string }[] {
  const select = body.slice(body.indexOf('<select id="filter-mc"'), body.indexOf('</select>', body.indexOf('<select id="filter-mc"')))
  return [...select.matchAll(/<option value="([^"]*)"(?: selected)?>([^<]*)<\/option>/g)].map((m) => ({ value: m[1]!, text: m[2]! }))
}

/** The "filters in use" links: href and what they drop. */
function activeFilters(body: string): [string, string][] {
  return [...body.matchAll(/<a class="active-filter" href="([^"]*)"><span class="visually-hidden">Remove <\/span>(.*?)<span aria-hidden="true"> ×<\/span><\/a>/g)]
    .map((m) => [m[1]!.replaceAll('&amp;', '&'), m[2]!])
}

/** "No results" suggestions: href and the line's text. */
function suggestions(body: string): [string, string][] {
  const list = /<ul class="drop-suggestions">(.*?)<\/ul>/s.exec(body)?.[1] ?? ''
  return [...list.matchAll(/<li><a href="([^"]*)">(.*?)<\/a>(.*?)<\/li>/g)].map((m) => [m[1]!.replaceAll('&amp;', '&'), `${m[2]}${m[3]}`])
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
    assert.match(card, /<a class="chip cat-theme" href="\/\?categories=theme">Theme/)
    assert.match(card, /<a class="chip cat-theme" href="\/\?tags=Space">Space<\/a>/)
    assert.match(card, /<a class="chip cat-kind" href="\/\?tags=Adventure">Adventure<\/a>/)
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

  test('search by words (any case, as prefixes) shows only matching packs and keeps the text in the box', async () => {
    const res = await browse(site, '/?q=ROCK')
    assert.equal(res.statusCode, 200)
    assert.deepEqual(cardTitles(res.body), ['Rocket Parts'])
    assert.match(res.body, /<label for="search-q">Search packs<\/label>/)
    assert.match(res.body, /<input type="search" id="search-q" name="q" value="ROCK"/)
    assert.match(res.body, /1 pack matching “ROCK”/)
    // Punctuation alone is no word: nothing to narrow by, and no relevance to order by.
    const punctuation = await browse(site, '/?q=%25')
    assert.equal(cardTitles(punctuation.body).length, 3)
    assert.match(punctuation.body, /<select id="sort" name="sort" form="browse-form"><option value="">Recently updated<\/option>/)
  })

  test('the filter panel: kind, Minecraft version, categories, tags and updated, each option with the count GET /api/packs/ gives', async () => {
    const res = await browse(site, '/')
    assert.equal(res.statusCode, 200)
    const api = await site.app.inject({ url: '/api/packs/?facets=true', headers: site.gate })
    assert.equal(api.statusCode, 200, api.body)
    const facets = (api.json() as { facets: Record<string, { value: string; count: number }[]> }).facets
    // The counts are real: three data packs, two of them in Theme, Adventure on two.
    assert.equal(optionCount(res.body, 'kind', 'data'), 3)
    assert.equal(optionCount(res.body, 'kind', 'resource'), 0)
    assert.equal(optionCount(res.body, 'categories', 'theme'), 2)
    assert.equal(optionCount(res.body, 'categories', 'kind'), 1)
    assert.equal(optionCount(res.body, 'tags', 'Adventure'), 2)
    assert.equal(optionCount(res.body, 'tags', 'Medieval'), 1)
    assert.equal(optionCount(res.body, 'updated', 'week'), 3)
    for (const name of ['kind', 'categories', 'tags', 'updated']) {
      for (const option of facets[name]!) assert.equal(optionCount(res.body, name, option.value), option.count, `${name}=${option.value}`)
    }
    // The releases the packs run on, newest first, with their counts; "Any version" first.
    assert.ok(facets.mc!.length > 0)
    assert.deepEqual(mcOptions(res.body), [{ value: '', text: 'Any version' }, ...facets.mc!.map((o) => ({ value: o.value, text: `${o.value} (${o.count})` }))])
    // "Any" is chosen where nothing is, and every field has a label.
    assert.match(res.body, /<input type="radio" name="kind" value="" form="browse-form" checked> <span class="option-label">Any kind<\/span>/)
    assert.match(res.body, /<input type="radio" name="updated" value="" form="browse-form" checked> <span class="option-label">Any time<\/span>/)
    assert.match(res.body, /<label for="filter-mc" class="filter-legend">Minecraft version<\/label>/)
    assert.match(res.body, /<label for="sort">Sort by<\/label> <select id="sort" name="sort" form="browse-form"><option value="">Recently updated<\/option>/)
    // The panel is a <details> whose summary says "Filters": on a phone it folds away without a script.
    assert.match(res.body, /<details id="filter-details" class="filter-details">\n<summary><span class="filter-summary">Filters<\/span><\/summary>/)
    // No filter in use: nothing to clear.
    assert.doesNotMatch(res.body, /class="active-filters"/)
    assert.doesNotMatch(res.body, /Clear all/)
  })

  test('the URL\'s state comes back in the form, and the search is the one GET /api/packs/ runs', async () => {
    const query = 'q=walls&kind=data&mc=1.21.4&categories=theme&tags=Medieval&updated=year&sort=title'
    const res = await browse(site, `/?${query}`)
    assert.equal(res.statusCode, 200, res.body)
    assert.deepEqual(cardTitles(res.body), ['Castle Walls'])
    const api = await site.app.inject({ url: `/api/packs/?${query}&facets=true`, headers: site.gate })
    assert.deepEqual((api.json() as { items: { title: string }[] }).items.map((p) => p.title), cardTitles(res.body))
    assert.match(res.body, /<input type="search" id="search-q" name="q" value="walls"/)
    assert.deepEqual(checked(res.body, 'kind'), ['data'])
    assert.deepEqual(checked(res.body, 'categories'), ['theme'])
    assert.deepEqual(checked(res.body, 'tags'), ['Medieval'])
    assert.deepEqual(checked(res.body, 'updated'), ['year'])
    assert.match(res.body, /<option value="1\.21\.4" selected>1\.21\.4 \(1\)<\/option>/)
    assert.match(res.body, /<option value="title" selected>Title, A to Z<\/option>/)
    // With words the default order is the best match.
    assert.match(res.body, /<select id="sort" name="sort" form="browse-form"><option value="">Best match<\/option>/)
    // Each filter in use is a link that drops it, and "Clear all" drops them all.
    assert.deepEqual(activeFilters(res.body), [
      ['/?kind=data&mc=1.21.4&categories=theme&tags=Medieval&updated=year&sort=title', 'the words “walls”'],
      ['/?q=walls&mc=1.21.4&categories=theme&tags=Medieval&updated=year&sort=title', 'data packs'],
      ['/?q=walls&kind=data&categories=theme&tags=Medieval&updated=year&sort=title', 'Minecraft 1.21.4'],
      ['/?q=walls&kind=data&mc=1.21.4&tags=Medieval&updated=year&sort=title', 'the category Theme'],
      ['/?q=walls&kind=data&mc=1.21.4&categories=theme&updated=year&sort=title', 'the tag Medieval'],
      ['/?q=walls&kind=data&mc=1.21.4&categories=theme&tags=Medieval&sort=title', 'updated in the last year'],
    ])
    assert.equal(linkHref(res.body, 'Clear all'), '/?sort=title')
    assert.match(res.body, /<span class="filter-active-count">\(6 in use\)<\/span>/)

    // A range is kept as given, as the option chosen.
    const range = await browse(site, `/?mc=${encodeURIComponent('>=1.21.2')}`)
    assert.deepEqual(cardTitles(range.body), ['Castle Walls'])
    assert.match(range.body, /<option value="&gt;=1\.21\.2" selected>&gt;=1\.21\.2<\/option>/)
  })

  test('what a form without a script sends works: empty fields mean "any", ticked boxes repeat their name; the old tag and category too', async () => {
    const empty = await browse(site, '/?q=&kind=&mc=&updated=&sort=')
    assert.equal(empty.statusCode, 200, empty.body)
    assert.deepEqual(cardTitles(empty.body), ['Castle Walls', 'Quest Book', 'Rocket Parts'])
    const repeated = await browse(site, '/?categories=kind&categories=theme&kind=')
    assert.deepEqual(cardTitles(repeated.body), ['Castle Walls', 'Quest Book', 'Rocket Parts'])
    assert.deepEqual(checked(repeated.body, 'categories').sort(), ['kind', 'theme'])
    const twoTags = await browse(site, '/?tags=Adventure&tags=space')
    assert.deepEqual(cardTitles(twoTags.body), ['Rocket Parts'])
    // Links written from that state use the API's comma-separated form.
    assert.equal(activeFilters(twoTags.body)[0]![0], '/?tags=space')

    const tagged = await browse(site, '/?tag=adventure')
    assert.deepEqual(cardTitles(tagged.body), ['Quest Book', 'Rocket Parts'])
    assert.deepEqual(checked(tagged.body, 'tags'), ['Adventure'])
    const category = await browse(site, '/?category=kind')
    assert.deepEqual(cardTitles(category.body), ['Quest Book'])
    assert.deepEqual(checked(category.body, 'categories'), ['kind'])
    // A card's chips keep the state: a tag narrows it further, a category replaces the one chosen.
    const card = cardOf(tagged.body, 'Rocket Parts')
    assert.match(card, /<a class="chip cat-theme" href="\/\?categories=theme&amp;tags=adventure">Theme/)
    assert.match(card, /<a class="chip cat-theme" href="\/\?tags=adventure%2CSpace">Space<\/a>/)
  })

  test('a chosen tag or category stays in the panel, ticked, even when no pack has it', async () => {
    await createTag(site.app.db, 'Underwater', 'theme')
    assert.equal(optionCount((await browse(site, '/')).body, 'tags', 'Underwater'), undefined)
    const res = await browse(site, '/?tags=underwater&categories=nowhere')
    assert.equal(res.statusCode, 200)
    assert.deepEqual(checked(res.body, 'tags'), ['underwater'])
    assert.deepEqual(checked(res.body, 'categories'), ['nowhere'])
    assert.equal(optionCount(res.body, 'tags', 'underwater'), 0)
    assert.match(res.body, /No packs match/)
  })

  test('no results: a link for each filter to drop, the one that brings back most packs first; one that brings none back is not offered', async () => {
    // Quest Book is the only "quest", in Kind; both Theme packs are recent, as all are.
    const res = await browse(site, '/?q=quest&categories=theme&updated=week')
    assert.equal(res.statusCode, 200)
    assert.deepEqual(cardTitles(res.body), [])
    assert.match(res.body, /<h2>No packs match<\/h2>/)
    assert.deepEqual(suggestions(res.body), [
      ['/?categories=theme&updated=week', 'Without the words “quest”: 2 packs'],
      ['/?q=quest&updated=week', 'Without the category Theme: 1 pack'],
    ])
    // Each suggestion is true.
    assert.deepEqual(cardTitles((await browse(site, '/?categories=theme&updated=week')).body), ['Castle Walls', 'Rocket Parts'])
    assert.deepEqual(cardTitles((await browse(site, '/?q=quest&updated=week')).body), ['Quest Book'])
    assert.match(res.body, /<a href="\/">Clear all filters<\/a>/)
    // Nothing any single drop would fix: said so.
    const hopeless = await browse(site, '/?q=zzzz&tags=Space,Medieval')
    assert.deepEqual(suggestions(hopeless.body), [])
    assert.match(hopeless.body, /No filter alone is the reason\./)
  })

  test('many categories are no wall: the twelve with most packs in view, the rest behind "more"', async () => {
    const other = await makeSite()
    try {
      const dave = await other.user('dave')
      for (let i = 0; i < 15; i++) await createCategory(other.app.db, `c${String(i).padStart(2, '0')}`, `Category ${i}`, '#336699')
      // c00 to c09 get two packs each, c10 to c14 one.
      for (let i = 0; i < 25; i++) await publishPack(other, dave, { title: `Pack ${i}`, category: `c${String(i % 15).padStart(2, '0')}` })
      const res = await browse(other, '/')
      assert.equal(res.statusCode, 200)
      const group = res.body.slice(res.body.indexOf('<legend>Categories (any of)</legend>'), res.body.indexOf('</fieldset>', res.body.indexOf('<legend>Categories (any of)</legend>')))
      const more = group.indexOf('<details class="more-options" id="more-categories"><summary>3 more</summary>')
      assert.ok(more > 0, group)
      const keys = (text: string) => [...text.matchAll(/name="categories" value="([^"]+)"/g)].map((m) => m[1])
      assert.deepEqual(keys(group.slice(0, more)), ['c00', 'c01', 'c02', 'c03', 'c04', 'c05', 'c06', 'c07', 'c08', 'c09', 'c10', 'c11'])
      assert.deepEqual(keys(group.slice(more)), ['c12', 'c13', 'c14'])
      assert.equal(optionCount(res.body, 'categories', 'c03'), 2)
      assert.equal(optionCount(res.body, 'categories', 'c13'), 1)
      // A chosen category from the rest moves into view, ticked, first.
      const chosen = await browse(other, '/?categories=c13')
      const chosenGroup = chosen.body.slice(chosen.body.indexOf('<legend>Categories (any of)</legend>'))
      assert.deepEqual(keys(chosenGroup.slice(0, chosenGroup.indexOf('<details'))).slice(0, 2), ['c13', 'c00'])
      assert.deepEqual(cardTitles(chosen.body), ['Pack 13'])
    } finally {
      await other.close()
    }
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

  test('bad parameters give the API\'s 400 as the site\'s error page, never a 500; unknown ones are ignored as the API ignores them', async () => {
    for (const page of ['abc', '0', '-1', '1.5', '1e3', '100001', '9999999999']) {
      const res = await browse(site, `/?page=${page}`)
      assert.equal(res.statusCode, 400, `page=${page}: ${res.body.slice(0, 200)}`)
      assert.match(String(res.headers['content-type']), /^text\/html/)
      assert.match(res.body, /<h1>Bad request<\/h1>/)
      assert.match(res.body, /&quot;page&quot; must be a whole number from 1 to 100000/)
      assert.equal((await site.app.inject({ url: `/api/packs/?page=${page}`, headers: site.gate })).statusCode, 400, `API page=${page}`)
    }
    const twice = await browse(site, '/?page=1&page=2')
    assert.equal(twice.statusCode, 400)
    assert.match(twice.body, /&quot;page&quot; may be given only once/)
    assert.equal((await browse(site, '/?tag=a&tag=b')).statusCode, 400)
    const long = await browse(site, `/?q=${'x'.repeat(201)}`)
    assert.equal(long.statusCode, 400)
    assert.match(long.body, /search text is longer than 200 characters/)

    // Where the search itself refuses (a release or range it cannot read, too many names), the page says what the API says.
    const manyCategories = Array.from({ length: 21 }, (_, i) => `k${i}`).join(',')
    for (const query of ['mc=banana', 'mc=9.9.9', 'mc=1.20..x', `categories=${manyCategories}`, 'tags=a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q,r,s,t,u']) {
      const page = await browse(site, `/?${query}`)
      const api = await site.app.inject({ url: `/api/packs/?${query}`, headers: site.gate })
      assert.equal(page.statusCode, 400, query)
      assert.equal(api.statusCode, 400, query)
      const detail = (api.json() as { detail: string }).detail
      const escaped = detail.replaceAll('&', '&amp;').replaceAll('"', '&quot;').replaceAll('<', '&lt;').replaceAll('>', '&gt;')
      assert.ok(page.body.includes(`<p class="error-detail">${escaped.charAt(0).toUpperCase()}${escaped.slice(1)}.</p>`), `${query}: ${detail}\n${page.body.slice(page.body.indexOf('<main'), page.body.indexOf('</main>'))}`)
    }
    // Values the API's schema refuses: 400 on both, the page in words.
    for (const [query, words] of [['kind=both', /&quot;kind&quot; must be one of resource, data/], ['sort=random', /&quot;sort&quot; must be one of relevance/], ['updated=decade', /&quot;updated&quot; must be one of week, month, year/], [`mc=${'1'.repeat(41)}`, /&quot;mc&quot; is longer than 40 characters/]] as const) {
      const page = await browse(site, `/?${query}`)
      assert.equal(page.statusCode, 400, query)
      assert.match(page.body, words)
      assert.equal((await site.app.inject({ url: `/api/packs/?${query}`, headers: site.gate })).statusCode, 400, `API ${query}`)
    }
    const unknown = await browse(site, '/?utm_source=mail&per_page=5')
    assert.equal(unknown.statusCode, 200)
    assert.equal(cardTitles(unknown.body).length, 3)
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

  test('pager links keep every parameter of the search', async () => {
    const first = await browse(site, '/?q=bulk&kind=data&updated=year&sort=updated')
    assert.equal(cardTitles(first.body).length, 20)
    assert.match(first.body, /25 packs matching “bulk”/)
    const next = linkHref(first.body, 'Next')
    assert.equal(next, '/?q=bulk&kind=data&updated=year&sort=updated&page=2')
    const second = await browse(site, next!)
    assert.deepEqual(cardTitles(second.body), ['Bulk 05', 'Bulk 04', 'Bulk 03', 'Bulk 02', 'Bulk 01'])
    assert.equal(linkHref(second.body, 'Previous'), '/?q=bulk&kind=data&updated=year&sort=updated')
    // The page's own controls say which page this is of which search.
    assert.match(second.body, /Page 2 of 2/)
    assert.deepEqual(checked(second.body, 'kind'), ['data'])
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
