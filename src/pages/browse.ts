// The home page: a search over the packs with a filter panel. It reads the
// parameters GET /api/packs/ reads (q, kind, mc, categories, tags, updated,
// owner, member, sort, page) and answers them with the same search
// (searchOf, searchPackPage), asking for facet counts so every option of the
// panel says how many packs choosing it would leave. Everything is a plain
// link or a GET form, so it works without scripts and every state has a URL;
// the page's script (client/pages/browse.ts) searches as one types and swaps
// the results in place, keeping that URL in the address bar.
import { hash } from 'node:crypto'
import { Type, type Static } from 'typebox'
import { MAX_SEARCH_LENGTH, PACKS_PER_PAGE } from '../api/constants.js'
import { MAX_PAGE, type PackListQuery } from '../api/packs.js'
import type { PackSummaryRecord } from '../packs/service.js'
import { searchOf } from '../packs/search-query.js'
import { queryWords } from '../packs/search-text.js'
import { listingVersion, searchPackPage, type FacetOption, type SearchFacets, type SearchSort } from '../packs/search-service.js'
import { listCategories } from '../packs/tags.js'
import { BadRequest, NotFound } from '../errors.js'
import { sendPageBytes } from '../web/respond.js'
import type { App } from '../http/types.js'
import { fileUrl } from '../http/urls.js'
import { formatCount } from '../web/format.js'
import { html, type SafeHtml } from '../web/html.js'
import { PageCache } from '../web/page-cache.js'
import { browseHref } from '../web/packs.js'
import { packCard } from './pack-card.js'

/** Categories and tags shown at once; the rest wait behind a "More" disclosure, so 200 categories are no wall. */
const SHOWN_OPTIONS = 12
/** The API's limits on its text parameters (src/api/packs.ts), repeated so the page refuses what the API refuses. */
const MAX_LIST_LENGTH = 1000
const MAX_MC_LENGTH = 40
const MAX_USERNAME_LENGTH = 64
const PAGE_PATTERN = /^[0-9]{1,9}$/

// Everything arrives as text (or a list, when repeated) and is checked here,
// so a bad value gets a sentence a person can act on, not a validator's message.
const Param = Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())]))
const BrowseQuery = Type.Object({
  q: Param, kind: Param, mc: Param, categories: Param, category: Param, tags: Param, tag: Param,
  updated: Param, owner: Param, member: Param, sort: Param, page: Param,
})
type RawQuery = Static<typeof BrowseQuery>

type Kind = 'resource' | 'data'
type Updated = 'week' | 'month' | 'year'

/** The orders the page offers, as the API names them (GET /api/packs/?sort=), with their labels. */
const SORTS: readonly { sort: SearchSort; label: string }[] = [
  { sort: 'relevance', label: 'Best match' },
  { sort: 'updated', label: 'Recently updated' },
  { sort: 'downloads', label: 'Most downloaded' },
  { sort: 'trending', label: 'Trending this week' },
  { sort: 'created', label: 'Newest' },
  { sort: 'title', label: 'Title, A to Z' },
]
const KINDS: readonly { value: Kind; label: string }[] = [
  { value: 'resource', label: 'Resource packs' },
  { value: 'data', label: 'Data packs' },
]
const UPDATED: readonly { value: Updated; label: string }[] = [
  { value: 'week', label: 'In the last week' },
  { value: 'month', label: 'In the last month' },
  { value: 'year', label: 'In the last year' },
]

/** The page's state: what the URL says, in the order the page writes its links. */
interface BrowseState {
  q: string
  kind?: Kind | undefined
  mc?: string | undefined
  /** Category keys, any of. */
  categories: string[]
  /** Tag names, all of. */
  tags: string[]
  updated?: Updated | undefined
  owner?: string | undefined
  member?: string | undefined
  /** Only when asked for: the default is relevance with words, else updated. */
  sort?: SearchSort | undefined
  page: number
}

function single(query: RawQuery, name: keyof RawQuery): string | undefined {
  const value = query[name]
  if (Array.isArray(value)) throw new BadRequest(`"${name}" may be given only once`)
  const text = (value ?? '').trim()
  // An empty field is what a GET form sends for "any": no filter.
  return text === '' ? undefined : text
}

/**
 * A list parameter: the API's comma-separated names, or the same name repeated
 * (what a form's checkboxes send), or both; empty when not given.
 */
function listed(query: RawQuery, name: 'categories' | 'tags'): string | undefined {
  const value = query[name]
  const text = (Array.isArray(value) ? value : [value ?? '']).map((v) => v.trim()).filter(Boolean).join(',')
  if (text.length > MAX_LIST_LENGTH) throw new BadRequest(`"${name}" is longer than ${MAX_LIST_LENGTH} characters`)
  return text === '' ? undefined : text
}

function oneOf<T extends string>(name: string, value: string | undefined, allowed: readonly T[]): T | undefined {
  if (value === undefined) return undefined
  if (!(allowed as readonly string[]).includes(value)) throw new BadRequest(`"${name}" must be one of ${allowed.join(', ')}, not "${value.slice(0, 40)}"`)
  return value as T
}

function shorterThan(name: string, value: string | undefined, max: number): string | undefined {
  if (value !== undefined && value.length > max) throw new BadRequest(`"${name}" is longer than ${max} characters`)
  return value
}

/**
 * The URL's query as the API's listing query (with facets), refused with the
 * API's rules where they differ from "empty means any": the search the page
 * runs is then the one GET /api/packs/ runs for the same parameters.
 */
function listQueryOf(query: RawQuery): { listQuery: Static<typeof PackListQuery>; page: number } {
  const q = single(query, 'q')
  if (q !== undefined && q.length > MAX_SEARCH_LENGTH) throw new BadRequest(`the search text is longer than ${MAX_SEARCH_LENGTH} characters`)
  const rawPage = single(query, 'page')
  let page = 1
  if (rawPage !== undefined) {
    page = PAGE_PATTERN.test(rawPage) ? Number(rawPage) : 0
    if (page < 1 || page > MAX_PAGE) {
      const shown = rawPage.length > 20 ? `${rawPage.slice(0, 20)}…` : rawPage
      throw new BadRequest(`"page" must be a whole number from 1 to ${MAX_PAGE}, not "${shown}"`)
    }
  }
  const listQuery: Static<typeof PackListQuery> = {
    q,
    kind: oneOf('kind', single(query, 'kind'), KINDS.map((k) => k.value)),
    mc: shorterThan('mc', single(query, 'mc'), MAX_MC_LENGTH),
    categories: listed(query, 'categories'),
    category: single(query, 'category'),
    tags: listed(query, 'tags'),
    tag: single(query, 'tag'),
    updated: oneOf('updated', single(query, 'updated'), UPDATED.map((u) => u.value)),
    owner: shorterThan('owner', single(query, 'owner'), MAX_USERNAME_LENGTH),
    member: shorterThan('member', single(query, 'member'), MAX_USERNAME_LENGTH),
    sort: oneOf('sort', single(query, 'sort'), SORTS.map((s) => s.sort)),
    facets: true,
  }
  for (const key of Object.keys(listQuery) as (keyof typeof listQuery)[]) if (listQuery[key] === undefined) delete listQuery[key]
  return { listQuery, page }
}

/** The listing query of a state: what its links ask for. */
function listQueryOfState(state: BrowseState, facets: boolean): Static<typeof PackListQuery> {
  const query: Static<typeof PackListQuery> = { facets }
  if (state.q) query.q = state.q
  if (state.kind) query.kind = state.kind
  if (state.mc) query.mc = state.mc
  if (state.categories.length > 0) query.categories = state.categories.join(',')
  if (state.tags.length > 0) query.tags = state.tags.join(',')
  if (state.updated) query.updated = state.updated
  if (state.owner) query.owner = state.owner
  if (state.member) query.member = state.member
  if (state.sort) query.sort = state.sort
  return query
}

/** The sort a state gets when it names none: the search's own default (text without a word, "%", has none). */
function defaultSort(q: string): SearchSort {
  return queryWords(q).length === 0 ? 'updated' : 'relevance'
}

/** A filter of the state that "no results" offers to drop, and the state without it. */
interface Drop {
  label: string
  without: Partial<BrowseState>
}

interface DropCount extends Drop {
  total: number
  capped: boolean
}

/**
 * Browse pages kept whole (src/web/page-cache.ts): the thousand most asked, at most 64 MiB of HTML (outside
 * the JavaScript heap, so the collector never walks it). With a hundred categories or more a page is about
 * 75 KB, two thirds of it the filter panel; 16 MiB kept only some 220 of them, fewer than the pages, searches
 * and tags a busy site's visitors keep asking for, so most asks were first views again.
 */
const KEPT_PAGES = 1000
const KEPT_CHARS = 64 * 1024 * 1024
/** Kept at most this long whatever the listing's version says (nothing the page shows changes without moving it). */
const KEPT_MS = 60_000

/** How long the categories (their names and colours, which no listing version follows) are read again after. */
const CATEGORIES_MS = 1000

const keptPages = new WeakMap<object, PageCache>()

/** The browse pages a site keeps (by its database handle): their hits and misses, for the metrics and the tests. */
export function keptBrowsePages(db: object): PageCache | undefined {
  return keptPages.get(db)
}

export default async function browsePages(app: App): Promise<void> {
  const kept = new PageCache(KEPT_PAGES, KEPT_CHARS, KEPT_MS)
  keptPages.set(app.db, kept)
  // The categories as of at most a second ago, and a fingerprint of them for the kept pages' version: a renamed
  // or recoloured category (the admin CLI, another instance) shows within the second, as in the API's listings.
  let categoriesRead: { at: number; rows: Promise<Awaited<ReturnType<typeof listCategories>>>; fingerprint: Promise<string> } | undefined
  const categoriesNow = () => {
    const now = Date.now()
    if (categoriesRead === undefined || now - categoriesRead.at >= CATEGORIES_MS || now < categoriesRead.at) {
      const rows = listCategories(app.db)
      // A failed read is not kept.
      rows.catch(() => { categoriesRead = undefined })
      categoriesRead = { at: now, rows, fingerprint: rows.then((list) => hash('sha1', list.map((c) => `${c.key}\u0000${c.name}\u0000${c.color}`).join('\u0001'), 'base64')) }
    }
    return categoriesRead
  }
  app.get('/', { config: { access: 'gate', heavy: true }, schema: { hide: true, querystring: BrowseQuery } }, async (request, reply) => {
    const { listQuery, page } = listQueryOf(request.query)
    // searchOf refuses what the API refuses (an mc that is no release or range, too many names) with the same words.
    const search = searchOf(listQuery)!
    const state: BrowseState = {
      q: listQuery.q ?? '',
      kind: listQuery.kind,
      mc: listQuery.mc,
      // As the search has them: the old single category and tag folded in.
      categories: search.categories ?? [],
      tags: search.tags ?? [],
      updated: listQuery.updated,
      owner: listQuery.owner,
      member: listQuery.member,
      sort: listQuery.sort === defaultSort(listQuery.q ?? '') ? undefined : listQuery.sort,
      page,
    }
    // The body shows the same for everyone past the gate (listed packs only) but for the signed-in empty state's
    // words; the header around it is each viewer's own, rendered anew every time.
    const signedIn = request.user !== null
    const key = JSON.stringify([state, signedIn])
    const categoriesAsOf = categoriesNow()
    const listing = await listingVersion(app.db)
    const version = listing === undefined ? undefined : `${listing}|${await categoriesAsOf.fingerprint}`
    const hit = version === undefined ? undefined : kept.get(key, version, Date.now())
    if (hit) return sendPageBytes(app, request, reply, { title: hit.title, body: hit.body, scripts: ['browse'] })
    const [result, categories] = await Promise.all([
      searchPackPage(app.db, search, page, PACKS_PER_PAGE),
      categoriesAsOf.rows,
    ])
    const pages = Math.max(1, Math.ceil(result.total / PACKS_PER_PAGE))
    if (page > pages) {
      throw new NotFound(`there is no page ${page} of these packs; the last one is page ${pages}`)
    }
    const drops = dropsOf(state, new Map(categories.map((c) => [c.key, c.name])))
    // "No results": how many packs each filter's removal would bring back, each counted by a search of its own
    // (a count and no page of hits). The facets cannot say it: a pack runs on many releases and is of one or
    // both kinds, so their counts do not add up to what dropping the filter leaves.
    const dropCounts = result.total === 0 && drops.length > 0
      ? await Promise.all(drops.map(async (drop): Promise<DropCount> => {
        const next = { ...state, ...drop.without }
        const counted = await searchPackPage(app.db, searchOf(listQueryOfState(next, false)) ?? {}, 1, 0)
        return { ...drop, total: counted.total, capped: counted.capped }
      }))
      : []
    dropCounts.sort((a, b) => b.total - a.total)

    const view: BrowseView = {
      state,
      items: result.items,
      total: result.total,
      capped: result.capped,
      pages,
      facets: result.facets ?? { kind: [], mc: [], categories: [], tags: [], updated: [] },
      categoryNames: new Map(categories.map((c) => [c.key, c.name])),
      drops,
      dropCounts,
      fileUrl: (id) => fileUrl(app.config, id),
      signedIn,
    }
    const title = state.q ? `“${state.q}”${page > 1 ? `, page ${page}` : ''}` : page > 1 ? `Packs, page ${page}` : 'Packs'
    const body = Buffer.from(browseBody(view).value)
    if (version !== undefined) kept.set(key, version, { title, body }, Date.now())
    return sendPageBytes(app, request, reply, { title, body, scripts: ['browse'] })
  })
}

interface BrowseView {
  state: BrowseState
  items: PackSummaryRecord[]
  total: number
  /** A search that matches more packs than it counts (SEARCH_LIMIT): shown as "1000+". */
  capped: boolean
  pages: number
  facets: SearchFacets
  categoryNames: Map<string, string>
  /** The filters in use, each with the state without it. */
  drops: Drop[]
  /** With no results: the drops with how many packs each leaves, most first. */
  dropCounts: DropCount[]
  fileUrl(fileId: string): string
  signedIn: boolean
}

/** The browse URL of a state with some of it changed; any change but the page's goes back to page 1. */
function linkWith(state: BrowseState, changes: Partial<BrowseState>): string {
  const next: BrowseState = { ...state, page: 1, ...changes }
  return browseHref({
    q: next.q,
    kind: next.kind,
    mc: next.mc,
    categories: next.categories.join(','),
    tags: next.tags.join(','),
    updated: next.updated,
    owner: next.owner,
    member: next.member,
    sort: next.sort === undefined || next.sort === defaultSort(next.q) ? undefined : next.sort,
    page: next.page > 1 ? next.page : undefined,
  })
}

/** Every filter of a state as something to drop, in the panel's order. */
function dropsOf(state: BrowseState, categoryNames: Map<string, string>): Drop[] {
  const drops: Drop[] = []
  if (state.q) drops.push({ label: `the words “${state.q}”`, without: { q: '' } })
  if (state.kind) drops.push({ label: KINDS.find((k) => k.value === state.kind)!.label.toLowerCase(), without: { kind: undefined } })
  if (state.mc) drops.push({ label: `Minecraft ${state.mc}`, without: { mc: undefined } })
  if (state.categories.length > 0) {
    const names = state.categories.map((key) => categoryNames.get(key) ?? key).join(', ')
    drops.push({ label: `${state.categories.length === 1 ? 'the category' : 'the categories'} ${names}`, without: { categories: [] } })
  }
  for (const tag of state.tags) drops.push({ label: `the tag ${tag}`, without: { tags: state.tags.filter((t) => t !== tag) } })
  if (state.updated) drops.push({ label: `updated ${UPDATED.find((u) => u.value === state.updated)!.label.toLowerCase()}`, without: { updated: undefined } })
  if (state.owner) drops.push({ label: `owned by ${state.owner}`, without: { owner: undefined } })
  if (state.member) drops.push({ label: `made by ${state.member}`, without: { member: undefined } })
  return drops
}

function countText(total: number, capped: boolean): string {
  return capped ? `${formatCount(total)}+ packs` : `${formatCount(total)} ${total === 1 ? 'pack' : 'packs'}`
}

function browseBody(view: BrowseView): SafeHtml {
  const { state } = view
  return html`<div class="browse-head"><h1>Packs</h1>
<form class="search" id="browse-form" method="get" action="/" role="search">
<label for="search-q">Search packs</label>
<div class="search-row"><input type="search" id="search-q" name="q" value="${state.q}" maxlength="${MAX_SEARCH_LENGTH}" placeholder="Words, names, tags" autocomplete="off" aria-controls="results">
<button type="submit">Search</button></div>
${state.owner ? html`<input type="hidden" name="owner" value="${state.owner}">` : null}
${state.member ? html`<input type="hidden" name="member" value="${state.member}">` : null}
</form></div>
<p id="browse-live" class="visually-hidden" role="status" aria-live="polite"></p>
<div class="browse-layout">
<aside class="filter-panel" aria-label="Filters">
<details id="filter-details" class="filter-details">
<summary><span class="filter-summary">Filters</span>${view.drops.length > 0 ? html` <span class="filter-active-count">(${view.drops.length} in use)</span>` : null}</summary>
<div id="filter-options">${filterOptions(view)}</div>
</details>
</aside>
<section class="results" id="results" aria-labelledby="results-heading">${results(view)}</section>
</div>`
}

/** A count beside an option: how many packs choosing it would leave. */
function optionCount(n: number | undefined): SafeHtml {
  return html`<span class="option-count">${formatCount(n ?? 0)}</span>`
}

function countOf(options: FacetOption[], value: string): number {
  return options.find((o) => o.value.toLowerCase() === value.toLowerCase())?.count ?? 0
}

/** A radio group: "Any" and each option with its count. */
function radioGroup(name: string, legend: string, anyLabel: string, chosen: string | undefined, options: readonly { value: string; label: string }[], counts: FacetOption[]): SafeHtml {
  return html`<fieldset class="filter-group"><legend>${legend}</legend>
<label class="option"><input type="radio" name="${name}" value="" form="browse-form"${chosen === undefined ? html` checked` : null}> <span class="option-label">${anyLabel}</span></label>
${options.map((o) => html`<label class="option"><input type="radio" name="${name}" value="${o.value}" form="browse-form"${chosen === o.value ? html` checked` : null}> <span class="option-label">${o.label}</span> ${optionCount(countOf(counts, o.value))}</label>`)}
</fieldset>`
}

/**
 * A checkbox group: the chosen options first, then the others by count, the
 * first SHOWN_OPTIONS in view and the rest behind a "More" disclosure.
 */
function checkboxGroup(name: string, legend: string, options: { value: string; label: string; count: number; checked: boolean }[]): SafeHtml {
  const ordered = [...options.filter((o) => o.checked), ...options.filter((o) => !o.checked)]
  const box = (o: (typeof options)[number]) => html`<li><label class="option"><input type="checkbox" name="${name}" value="${o.value}" form="browse-form"${o.checked ? html` checked` : null}> <span class="option-label">${o.label}</span> ${optionCount(o.count)}</label></li>`
  const shown = ordered.slice(0, Math.max(SHOWN_OPTIONS, options.filter((o) => o.checked).length))
  const rest = ordered.slice(shown.length)
  return html`<fieldset class="filter-group"><legend>${legend}</legend>
${shown.length === 0 ? html`<p class="filter-none">None of these packs has one.</p>` : html`<ul class="options">${shown.map(box)}</ul>`}
${rest.length > 0 ? html`<details class="more-options" id="more-${name}"><summary>${rest.length} more</summary><ul class="options">${rest.map(box)}</ul></details>` : null}
</fieldset>`
}

function filterOptions(view: BrowseView): SafeHtml {
  const { state, facets } = view
  // Chosen options stay listed whatever their count, so they can be unticked.
  const categoryOptions = facets.categories.map((o) => ({ value: o.value, label: view.categoryNames.get(o.value) ?? o.value, count: o.count, checked: state.categories.includes(o.value) }))
  for (const key of state.categories) {
    if (!categoryOptions.some((o) => o.value === key)) categoryOptions.push({ value: key, label: view.categoryNames.get(key) ?? key, count: 0, checked: true })
  }
  const tagOptions = facets.tags.map((o) => ({ value: o.value, label: o.value, count: o.count, checked: state.tags.some((t) => t.toLowerCase() === o.value.toLowerCase()) }))
  for (const tag of state.tags) {
    if (!tagOptions.some((o) => o.value.toLowerCase() === tag.toLowerCase())) tagOptions.push({ value: tag, label: tag, count: 0, checked: true })
  }
  const releases = facets.mc
  const mcKnown = state.mc === undefined || releases.some((r) => r.value === state.mc)
  return html`${radioGroup('kind', 'Kind', 'Any kind', state.kind, KINDS, facets.kind)}
<div class="filter-group"><label for="filter-mc" class="filter-legend">Minecraft version</label>
<select id="filter-mc" name="mc" form="browse-form"><option value="">Any version</option>
${mcKnown ? null : html`<option value="${state.mc!}" selected>${state.mc!}</option>`}
${releases.map((r) => html`<option value="${r.value}"${r.value === state.mc ? html` selected` : null}>${r.value} (${formatCount(r.count)})</option>`)}
</select></div>
${checkboxGroup('categories', 'Categories (any of)', categoryOptions)}
${checkboxGroup('tags', 'Tags (all of)', tagOptions)}
${radioGroup('updated', 'Updated', 'Any time', state.updated, UPDATED, facets.updated)}
<div class="filter-actions"><button type="submit" form="browse-form" class="secondary apply-filters">Apply filters</button>
${view.drops.length > 0 ? html`<a href="${linkWith(state, { q: '', kind: undefined, mc: undefined, categories: [], tags: [], updated: undefined, owner: undefined, member: undefined })}" class="clear-filters">Clear all</a>` : null}</div>`
}

function results(view: BrowseView): SafeHtml {
  const { state } = view
  return html`<h2 id="results-heading" class="visually-hidden">Results</h2>
<div class="result-bar"><p class="result-count" id="result-count">${resultSummary(view)}</p>
<div class="sort-field"><label for="sort">Sort by</label> ${sortSelect(state)}</div></div>
${activeFilters(view)}
${view.items.length === 0 ? emptyState(view) : html`<ul class="pack-grid">${view.items.map((pack) => card(pack, view))}</ul>`}
${pagination(view)}`
}

function resultSummary(view: BrowseView): SafeHtml {
  const packs = countText(view.total, view.capped)
  return view.state.q ? html`${packs} matching “${view.state.q}”` : html`${packs}`
}

/** The filters in use, each a link that drops it: what the collapsed panel hides on a phone, one tap to undo. */
function activeFilters(view: BrowseView): SafeHtml | null {
  if (view.drops.length === 0) return null
  return html`<ul class="active-filters" aria-label="Filters in use">${view.drops.map((drop) => html`<li><a class="active-filter" href="${linkWith(view.state, drop.without)}"><span class="visually-hidden">Remove </span>${drop.label}<span aria-hidden="true"> ×</span></a></li>`)}</ul>`
}

function sortSelect(state: BrowseState): SafeHtml {
  const standard = defaultSort(state.q)
  // The default order is the empty value, so a form sent after the words change gets the new words' default.
  const options = SORTS.filter((s) => s.sort !== standard && (s.sort !== 'relevance' || state.sort === 'relevance'))
  return html`<select id="sort" name="sort" form="browse-form"><option value="">${SORTS.find((s) => s.sort === standard)!.label}</option>
${options.map((s) => html`<option value="${s.sort}"${state.sort === s.sort ? html` selected` : null}>${s.label}</option>`)}</select>`
}

function emptyState(view: BrowseView): SafeHtml {
  if (view.drops.length === 0) {
    return html`<div class="empty card"><h2>No packs yet</h2>
<p>${view.signedIn ? html`<a href="/create/">Create the first pack</a>.` : html`<a href="/signup/">Sign up</a> or <a href="/login/">sign in</a> to publish the first one.`}</p></div>`
  }
  const useful = view.dropCounts.filter((d) => d.total > 0)
  return html`<div class="empty card"><h2>No packs match</h2>
${useful.length > 0
    ? html`<p>Try without one filter:</p><ul class="drop-suggestions">${useful.map((d) => html`<li><a href="${linkWith(view.state, d.without)}">Without ${d.label}</a>: ${countText(d.total, d.capped)}</li>`)}</ul>`
    : html`<p>No filter alone is the reason.</p>`}
<p><a href="/">Clear all filters</a></p></div>`
}

function card(pack: PackSummaryRecord, view: BrowseView): SafeHtml {
  const { state } = view
  return packCard(pack, {
    fileUrl: view.fileUrl,
    // A category chip shows that category (any-of: adding it to the others would widen the search), a tag chip
    // narrows by that tag too.
    category: (key) => linkWith(state, { categories: [key] }),
    tag: (name) => linkWith(state, { tags: state.tags.some((t) => t.toLowerCase() === name.toLowerCase()) ? state.tags : [...state.tags, name] }),
  })
}

function pagination(view: BrowseView): SafeHtml | null {
  if (view.pages === 1) return null
  const { state, pages } = view
  const previous = state.page > 1
    ? html`<a class="button secondary" rel="prev" href="${linkWith(state, { page: state.page - 1 })}">Previous</a>`
    : html`<span class="button secondary" aria-disabled="true">Previous</span>`
  const next = state.page < pages
    ? html`<a class="button secondary" rel="next" href="${linkWith(state, { page: state.page + 1 })}">Next</a>`
    : html`<span class="button secondary" aria-disabled="true">Next</span>`
  return html`<nav class="pagination" aria-label="Pages">${previous}<span class="page-of">Page ${state.page} of ${pages}</span>${next}</nav>`
}
