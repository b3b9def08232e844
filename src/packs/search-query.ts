// The listing's query parameters as a search (src/packs/search-service.ts),
// shared by GET /api/packs/ and the browse page. A listing that asks only what
// the listing always could (a tag, a category, a member, sorted by update,
// downloads or creation) stays on the listing's own indexes; words, the new
// filters, facets or the new sorts make it a search.
import type { Static } from 'typebox'
import type { PackListQuery } from '../api/packs.js'
import { BadRequest } from '../errors.js'
import { releasesMatching, UPDATED_WITHIN, type SearchRequest } from './search-service.js'

/** Names a comma-separated parameter may list. */
const MAX_LISTED = 20

function list(name: string, value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined
  const items = [...new Set(value.split(',').map((v) => v.trim()).filter(Boolean))]
  if (items.length > MAX_LISTED) throw new BadRequest(`${name} lists ${items.length} names; at most ${MAX_LISTED}`)
  return items
}

/** The search a listing query asks for, or undefined when the plain listing answers it. */
export function searchOf(query: Static<typeof PackListQuery>, now: number = Date.now()): SearchRequest | undefined {
  const words = query.q !== undefined && query.q.trim() !== ''
  const facets = query.facets === true || query.facets === '1'
  const searching = words || query.kind !== undefined || query.mc !== undefined || query.categories !== undefined
    || query.tags !== undefined || query.updated !== undefined || query.owner !== undefined || facets
    || query.sort === 'relevance' || query.sort === 'trending' || query.sort === 'title'
  if (!searching) return undefined
  let categories = list('categories', query.categories)?.map((c) => c.toLowerCase())
  if (query.category !== undefined) {
    // The single category of the old parameter, ANDed with the list: a pack has one category.
    const one = query.category.toLowerCase()
    categories = categories === undefined ? [one] : categories.filter((c) => c === one)
  }
  const tags = [...(list('tags', query.tags) ?? []), ...(query.tag !== undefined ? [query.tag] : [])]
  return {
    q: words ? query.q : undefined,
    kinds: query.kind === undefined ? undefined : [query.kind],
    releases: query.mc === undefined ? undefined : [releasesMatching(query.mc)],
    categories,
    tags: tags.length > 0 ? tags : undefined,
    updatedSince: query.updated === undefined ? undefined : new Date(now - UPDATED_WITHIN[query.updated] * 86_400_000).toISOString(),
    owner: query.owner,
    member: query.member,
    sort: query.sort,
    facets,
  }
}
