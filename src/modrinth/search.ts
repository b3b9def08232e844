// Modrinth's search and tag lists (GET /v2/search, /v2/tag/...), answered by
// the packs search (src/packs/search-service.ts): the same words, ranking and
// listing rules as GET /api/packs/, so a launcher finds what the site's
// browse page finds and never a hidden pack.
import type { SEARCH_INDEXES } from '../api/modrinth.js'
import type { Db } from '../db/index.js'
import { BadRequest } from '../errors.js'
import { loadPackDetailsByRowIds, SEARCH_LIMIT, type PackDetail, type PackSummaryRecord } from '../packs/repository.js'
import { knownReleases, searchPacks, type PackSearch, type SearchSort } from '../packs/search-service.js'
import { queryWords } from '../packs/search-text.js'
import { matchesResidual, parseFacets, planSearch, residualNeedsKinds, type Atom, type Facet, type PackKindName } from './facets.js'
import { findCategoryKeys, findTagNames, findUserIds, publicKindsOf } from './repository.js'

export type SearchIndex = (typeof SEARCH_INDEXES)[number]

export interface ModrinthSearch {
  query?: string | undefined
  facets?: string | undefined
  index?: SearchIndex | undefined
  offset: number
  limit: number
  /** Modrinth's deprecated raw filter expressions (`filter`, `filters`): refused unless empty. */
  filter?: string | undefined
}

/**
 * Modrinth's orders as the packs search's sorts. Relevance with no words to
 * rank by is most downloaded first (Modrinth's relevance then falls back on
 * popularity too); "follows" is downloads: the search's copy of the packs
 * (src/packs/search-memory.ts) keeps no follower counts, and a follow must not
 * cost a change of the search index.
 */
function sortOf(index: SearchIndex | undefined, hasWords: boolean): SearchSort {
  switch (index ?? 'relevance') {
    case 'relevance': return hasWords ? 'relevance' : 'downloads'
    case 'downloads':
    case 'follows': return 'downloads'
    case 'newest': return 'created'
    case 'updated': return 'updated'
  }
}

/** Modrinth's loaders, which its v2 search also takes as categories, and its project types: the kinds of pack. */
const LOADER_KINDS: Readonly<Record<string, PackKindName>> = { minecraft: 'resource', datapack: 'data' }
const PROJECT_TYPE_KINDS: Readonly<Record<string, PackKindName>> = { resourcepack: 'resource', datapack: 'data' }

/** Each facet as what it names here (./facets.ts Atom): a few indexed lookups for all the groups' values together. */
async function resolveFacets(db: Db, groups: readonly Facet[][]): Promise<Atom[][]> {
  const valuesOf = (type: Facet['type']) => [...new Set(groups.flat().filter((f) => f.type === type).map((f) => f.value.toLowerCase()))]
  const categoryValues = valuesOf('categories')
  const [keys, tags, users] = await Promise.all([
    findCategoryKeys(db, categoryValues),
    findTagNames(db, categoryValues),
    findUserIds(db, valuesOf('author')),
  ])
  const releases = new Set(knownReleases())
  return groups.map((group) => group.flatMap((facet): Atom[] => {
    const lower = facet.value.toLowerCase()
    switch (facet.type) {
      case 'categories': {
        // A name may be a category key, a tag and a loader at once: the facet matches any of them.
        const atoms: Atom[] = []
        if (keys.has(lower)) atoms.push({ category: lower })
        if (tags.has(lower)) atoms.push({ tag: lower })
        const loader = LOADER_KINDS[lower]
        if (loader) atoms.push({ kind: loader })
        return atoms
      }
      case 'versions': return releases.has(facet.value) ? [{ release: facet.value }] : []
      case 'project_type': {
        const kind = PROJECT_TYPE_KINDS[lower]
        return kind ? [{ kind }] : []
      }
      case 'author': {
        const id = users.get(lower)
        return id ? [{ owner: id }] : []
      }
    }
  }))
}

/**
 * The packs of one page of a Modrinth search, in order, and how many match.
 * When the facets hold an OR-group the packs search cannot express
 * (./facets.ts planSearch), its first SEARCH_LIMIT hits are checked against
 * that group and paged here: the same bound the listing's count has.
 */
export async function searchProjects(db: Db, search: ModrinthSearch): Promise<{ packs: PackDetail[]; total: number }> {
  if (search.filter) throw new BadRequest('filter / filters (raw filter expressions) are not supported here: use facets, e.g. facets=[["categories:adventure"],["versions:1.21.4"]]')
  const groups = search.facets === undefined || search.facets === '' ? [] : parseFacets(search.facets)
  const plan = planSearch(await resolveFacets(db, groups))
  if (plan.empty) return { packs: [], total: 0 }
  const q = search.query?.trim() ?? ''
  const query: PackSearch = { ...plan.filters, sort: sortOf(search.index, queryWords(q).length > 0) }
  if (q !== '') query.q = q
  let page: PackSummaryRecord[]
  let total: number
  if (plan.residual.length === 0) {
    const found = await searchPacks(db, query, { limit: search.limit, offset: search.offset })
    page = found.items
    total = found.total
  } else {
    const found = await searchPacks(db, query, { limit: SEARCH_LIMIT, offset: 0 })
    const kinds = residualNeedsKinds(plan.residual) ? await publicKindsOf(db, found.items.map((pack) => pack.id)) : new Map<string, Set<string>>()
    const matching = found.items.filter((pack) => matchesResidual(plan.residual, {
      categoryKey: pack.category?.key ?? null,
      tags: new Set(pack.tags.map((tag) => tag.name.toLowerCase())),
      ownerId: pack.ownerId,
      kinds: (kinds.get(pack.id) ?? new Set()) as Set<PackKindName>,
    }))
    total = matching.length
    page = matching.slice(search.offset, search.offset + search.limit)
  }
  const details = new Map((await loadPackDetailsByRowIds(db, page.map((pack) => pack.id))).map((pack) => [pack.id, pack]))
  // A pack deleted between the queries is left out.
  return { packs: page.flatMap((pack) => details.get(pack.id) ?? []), total }
}

/** Modrinth's game version tags: the releases this site knows, newest first, filtered as Modrinth's `type` and `major` do. */
export function gameVersionTags(filter: { type?: string | undefined; major?: boolean | undefined }): Array<{ version: string; version_type: 'release'; date: null; major: boolean }> {
  if (filter.type !== undefined && filter.type !== 'release') return []
  return knownReleases()
    .map((version) => ({ version, version_type: 'release' as const, date: null, major: version.split('.').length === 2 }))
    .filter((tag) => filter.major === undefined || tag.major === filter.major)
}
