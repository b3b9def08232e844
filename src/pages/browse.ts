// The home page: packs, most recently updated first (or most downloaded, or
// newest), 20 to a page; a title search and tag / category filters as colored
// chips. Everything is a plain
// link or a GET form, so it works without scripts and every state has a URL.
import { Type } from 'typebox'
import { MAX_SEARCH_LENGTH, PACKS_PER_PAGE } from '../api/constants.js'
import { listPackPage, type PackFilter, type PackSort, type PackSummaryRecord } from '../packs/service.js'
import { filterTags, listCategories, type TagSuggestionRow } from '../packs/tags.js'
import { BadRequest, NotFound } from '../errors.js'
import { sendPage } from '../web/respond.js'
import type { App } from '../http/types.js'
import { fileUrl } from '../http/urls.js'
import { html, type SafeHtml } from '../web/html.js'
import { browseHref, chipLink } from '../web/packs.js'
import { packCard } from './pack-card.js'

/** How many of the most used tags are offered as filter chips. */
const FILTER_TAGS = 24
/** Nine digits: far past any real page, and never an offset SQLite cannot take. */
const PAGE_PATTERN = /^[0-9]{1,9}$/

// Everything arrives as text (or a list, when repeated) and is checked here,
// so a bad value gets a sentence a person can act on, not a validator's message.
const Param = Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())]))
const BrowseQuery = Type.Object({ q: Param, tag: Param, category: Param, sort: Param, page: Param })

type RawQuery = Partial<Record<'q' | 'tag' | 'category' | 'sort' | 'page', string | string[]>>

/** The orders the page offers, as the API names them (GET /api/packs/?sort=), with their labels; the first is the default. */
const SORTS: readonly { sort: PackSort; label: string }[] = [
  { sort: 'updated', label: 'Recently updated' },
  { sort: 'downloads', label: 'Most downloaded' },
  { sort: 'created', label: 'Newest' },
]

function single(query: RawQuery, name: keyof RawQuery): string {
  const value = query[name]
  if (Array.isArray(value)) throw new BadRequest(`"${name}" may be given only once`)
  return (value ?? '').trim()
}

interface BrowseState {
  q: string
  tag: string
  category: string
  sort: PackSort
  page: number
}

function parseBrowseQuery(query: RawQuery): BrowseState {
  const q = single(query, 'q')
  if (q.length > MAX_SEARCH_LENGTH) throw new BadRequest(`the search text is longer than ${MAX_SEARCH_LENGTH} characters`)
  const rawPage = single(query, 'page')
  let page = 1
  if (rawPage !== '') {
    page = PAGE_PATTERN.test(rawPage) ? Number(rawPage) : 0
    if (page < 1) {
      const shown = rawPage.length > 20 ? `${rawPage.slice(0, 20)}…` : rawPage
      throw new BadRequest(`"page" must be a whole number from 1 to 999999999, not "${shown}"`)
    }
  }
  const rawSort = single(query, 'sort')
  const sort = rawSort === '' ? 'updated' : SORTS.find((s) => s.sort === rawSort)?.sort
  if (!sort) throw new BadRequest(`"sort" must be one of ${SORTS.map((s) => s.sort).join(', ')}`)
  return { q, tag: single(query, 'tag'), category: single(query, 'category').toLowerCase(), sort, page }
}

export default async function browsePages(app: App): Promise<void> {
  app.get('/', { config: { access: 'gate', heavy: true }, schema: { hide: true, querystring: BrowseQuery } }, async (request, reply) => {
    const state = parseBrowseQuery(request.query)
    const filter: PackFilter = { q: state.q || undefined, tag: state.tag || undefined, category: state.category || undefined }
    const [{ items, total, capped }, categories, tags] = await Promise.all([
      listPackPage(app.db, filter, state.page, PACKS_PER_PAGE, state.sort),
      listCategories(app.db),
      filterTags(app.db, FILTER_TAGS, state.tag),
    ])
    const pages = Math.max(1, Math.ceil(total / PACKS_PER_PAGE))
    if (state.page > pages) {
      throw new NotFound(`there is no page ${state.page} of these packs; the last one is page ${pages}`)
    }

    const view: BrowseView = {
      state,
      items,
      total,
      capped,
      pages,
      categories: categories.map((c) => ({ key: c.key, name: c.name })),
      tags,
      fileUrl: (id) => fileUrl(app.config, id),
      signedIn: request.user !== null,
    }
    return sendPage(app, request, reply, { title: state.page > 1 ? `Packs, page ${state.page}` : 'Packs', body: browseBody(view) })
  })
}

interface BrowseView {
  state: BrowseState
  items: PackSummaryRecord[]
  total: number
  /** A search that matches more packs than it counts (SEARCH_LIMIT): shown as "1000+". */
  capped: boolean
  pages: number
  categories: { key: string; name: string }[]
  tags: TagSuggestionRow[]
  fileUrl(fileId: string): string
  signedIn: boolean
}

/** The browse URL with some of the current state changed; any change of filter goes back to page 1. */
function linkWith(state: BrowseState, changes: Partial<BrowseState>): string {
  const next = { ...state, page: 1, ...changes }
  return browseHref({
    q: next.q, tag: next.tag, category: next.category, sort: next.sort === 'updated' ? undefined : next.sort, page: next.page > 1 ? next.page : undefined,
  })
}

function browseBody(view: BrowseView): SafeHtml {
  const { state } = view
  const filtered = state.q !== '' || state.tag !== '' || state.category !== ''
  return html`<div class="browse-head"><h1>Packs</h1>
<form class="search" method="get" action="/" role="search">
<label for="search-q">Search packs</label>
<div class="search-row"><input type="search" id="search-q" name="q" value="${state.q}" maxlength="${MAX_SEARCH_LENGTH}" placeholder="Part of a title">
${state.tag ? html`<input type="hidden" name="tag" value="${state.tag}">` : null}
${state.category ? html`<input type="hidden" name="category" value="${state.category}">` : null}
${state.sort !== 'updated' ? html`<input type="hidden" name="sort" value="${state.sort}">` : null}
<button type="submit">Search</button></div>
</form></div>
${filters(view, filtered)}
<section class="results" aria-labelledby="results-heading">
<h2 id="results-heading" class="visually-hidden">Results</h2>
<div class="result-bar"><p class="result-count" role="status">${resultSummary(view, filtered)}</p>${sortLinks(state)}</div>
${view.items.length === 0 ? emptyState(view, filtered) : html`<ul class="pack-grid">${view.items.map((pack) => card(pack, view))}</ul>`}
${pagination(view)}
</section>`
}

function filters(view: BrowseView, filtered: boolean): SafeHtml | null {
  const { state } = view
  if (view.categories.length === 0 && view.tags.length === 0 && !filtered) return null
  const categoryChips = view.categories.map((c) => {
    const selected = c.key === state.category
    return html`<li>${chipLink(c.name, linkWith(state, { category: selected ? '' : c.key }), c.key, { selected })}</li>`
  })
  const tagChips = view.tags.map((t) => {
    const selected = t.name.toLowerCase() === state.tag.toLowerCase()
    return html`<li>${chipLink(t.name, linkWith(state, { tag: selected ? '' : t.name }), t.category, { selected })}</li>`
  })
  return html`<section class="filters" aria-label="Filters">
${categoryChips.length > 0 ? html`<div class="filter-group"><h2 class="filter-label" id="filter-categories">Categories</h2><ul class="chips" aria-labelledby="filter-categories">${categoryChips}</ul></div>` : null}
${tagChips.length > 0 ? html`<div class="filter-group"><h2 class="filter-label" id="filter-tags">Popular tags</h2><ul class="chips" aria-labelledby="filter-tags">${tagChips}</ul></div>` : null}
${filtered ? html`<p class="clear-filters"><a href="/">Clear filters</a></p>` : null}
</section>`
}

function resultSummary(view: BrowseView, filtered: boolean): SafeHtml {
  const { state } = view
  const count = view.capped ? `${view.total}+ packs` : `${view.total} ${view.total === 1 ? 'pack' : 'packs'}`
  if (!filtered) return html`${count}`
  const category = view.categories.find((c) => c.key === state.category)?.name ?? state.category
  return html`${count}${state.q ? html` with “${state.q}” in the title` : null}${state.tag ? html` tagged “${state.tag}”` : null}${state.category ? html` in the category “${category}”` : null}`
}

function emptyState(view: BrowseView, filtered: boolean): SafeHtml {
  if (filtered) {
    return html`<div class="empty card"><h2>No packs match</h2><p>Try another search or <a href="/">clear the filters</a>.</p></div>`
  }
  return html`<div class="empty card"><h2>No packs yet</h2>
<p>${view.signedIn ? html`<a href="/create/">Create the first pack</a>.` : html`<a href="/signup/">Sign up</a> or <a href="/login/">sign in</a> to publish the first one.`}</p></div>`
}

/** The orders as links (each state has its URL, no script needed); the current one is marked. Changing it goes back to page 1. */
function sortLinks(state: BrowseState): SafeHtml {
  const links = SORTS.map(({ sort, label }) => sort === state.sort
    ? html`<li><a href="${linkWith(state, { sort })}" aria-current="true" class="selected">${label}</a></li>`
    : html`<li><a href="${linkWith(state, { sort })}">${label}</a></li>`)
  return html`<nav class="sort-links" aria-labelledby="sort-label"><span id="sort-label">Sort:</span> <ul>${links}</ul></nav>`
}

function card(pack: PackSummaryRecord, view: BrowseView): SafeHtml {
  return packCard(pack, {
    fileUrl: view.fileUrl,
    category: (key) => linkWith(view.state, { category: key }),
    tag: (name) => linkWith(view.state, { tag: name }),
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
