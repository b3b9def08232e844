// Modrinth's search facets (GET /v2/search?facets=...): a JSON array of
// OR-groups that are ANDed together, each facet "type:value", e.g.
// [["categories:adventure","categories:magic"],["versions:1.21.4"]]. This
// module reads them (parseFacets, pure and bounded) and, once each value is
// resolved to what it names on this site (./search.ts), turns them into the
// packs search's filters (planSearch), with what that search cannot say left
// over as OR-groups to check on its hits.
import { MAX_FACET_GROUPS, MAX_FACET_LENGTH, MAX_FACET_VALUES, MAX_FACETS_TEXT } from '../api/modrinth.js'
import { BadRequest } from '../errors.js'

/** The facet types this site answers; Modrinth's others (license, downloads, client_side, ...) are a 400 that lists these. */
export const FACET_TYPES = ['categories', 'versions', 'project_type', 'author'] as const
export type FacetType = (typeof FACET_TYPES)[number]

/** Modrinth's v3 names, which its v2 search also passes through: the same facets. */
const ALIASES: Readonly<Record<string, FacetType>> = { game_versions: 'versions', project_types: 'project_type' }

// The bounds (src/api/modrinth.ts) keep what one request makes the site do small: more groups or values than a
// search box and its filters ever send is a 400.
export { MAX_FACET_GROUPS, MAX_FACET_LENGTH, MAX_FACET_VALUES, MAX_FACETS_TEXT }

export interface Facet {
  type: FacetType
  value: string
}

const EXAMPLE = 'e.g. facets=[["categories:adventure","categories:magic"],["versions:1.21.4"]]'

/**
 * The facets of a request: each group's facets, each once. Anything other
 * than a JSON array of arrays of "type:value" strings within the bounds is a
 * 400 that says what was wrong. `type=value` is read as `type:value`, as
 * Modrinth does; Modrinth's other operators (!=, <, <=, >, >=, meant for its
 * numeric fields) are refused by name.
 */
export function parseFacets(raw: string): Facet[][] {
  if (raw.length > MAX_FACETS_TEXT) throw new BadRequest(`facets is ${raw.length} characters long; at most ${MAX_FACETS_TEXT}`)
  let parsed: unknown
  try {
    parsed = JSON.parse(raw)
  } catch {
    throw new BadRequest(`facets must be JSON: an array of OR-groups, each an array of "type:value" strings, ${EXAMPLE}`)
  }
  if (!Array.isArray(parsed)) throw new BadRequest(`facets must be an array of OR-groups (arrays of "type:value" strings), ${EXAMPLE}`)
  if (parsed.length > MAX_FACET_GROUPS) throw new BadRequest(`facets has ${parsed.length} groups; at most ${MAX_FACET_GROUPS}`)
  return parsed.map((group: unknown, g) => {
    if (!Array.isArray(group)) throw new BadRequest(`facets group ${g + 1} must be an array of "type:value" strings (a group is itself a list: [["versions:1.21.4"]], not ["versions:1.21.4"])`)
    if (group.length === 0) throw new BadRequest(`facets group ${g + 1} is empty: a group needs at least one "type:value"`)
    if (group.length > MAX_FACET_VALUES) throw new BadRequest(`facets group ${g + 1} has ${group.length} values; at most ${MAX_FACET_VALUES}`)
    const seen = new Set<string>()
    const facets: Facet[] = []
    for (const item of group as unknown[]) {
      if (typeof item !== 'string') throw new BadRequest(`facets group ${g + 1} holds a ${item === null ? 'null' : Array.isArray(item) ? 'nested array' : typeof item}; each value must be a "type:value" string`)
      const facet = parseFacet(item)
      const key = `${facet.type}:${facet.value}`
      if (!seen.has(key)) {
        seen.add(key)
        facets.push(facet)
      }
    }
    return facets
  })
}

/** One "type:value" (or "type=value"); the type may have spaces around it, as Modrinth allows. */
export function parseFacet(text: string): Facet {
  const shown = JSON.stringify(text.length > 60 ? `${text.slice(0, 60)}…` : text)
  if (text.length > MAX_FACET_LENGTH) throw new BadRequest(`the facet ${shown} is ${text.length} characters long; at most ${MAX_FACET_LENGTH}`)
  const at = /[:=<>!]/.exec(text)
  if (!at) throw new BadRequest(`the facet ${shown} has no "type:value" form, ${EXAMPLE}`)
  const name = text.slice(0, at.index).trim()
  const operator = /^(?:!=|<=|>=|[:=<>!])/.exec(text.slice(at.index))![0]
  if (operator !== ':' && operator !== '=') {
    throw new BadRequest(`the facet ${shown} uses "${operator}": this site takes "type:value" only (Modrinth's !=, <, <=, > and >= are not supported)`)
  }
  const type = (FACET_TYPES as readonly string[]).includes(name) ? (name as FacetType) : ALIASES[name]
  if (type === undefined) {
    throw new BadRequest(`the facet type ${JSON.stringify(name.slice(0, 60))} is not one this site has: use ${FACET_TYPES.join(', ')}`)
  }
  const value = text.slice(at.index + operator.length).trim()
  if (value === '') throw new BadRequest(`the facet ${shown} names no value`)
  return { type, value }
}

// ---------------------------------------------------------------- planning

export type PackKindName = 'resource' | 'data'

/** What a facet value names here; a value that names nothing (an unknown release, category or user) has no atom. */
export type Atom =
  | { kind: PackKindName }
  | { category: string }
  /** A tag name, lower case. */
  | { tag: string }
  | { release: string }
  /** The owner's user id. */
  | { owner: string }

/** The filters of the packs search (src/packs/search-service.ts PackSearch) that facets set. */
export interface FacetFilters {
  kinds?: PackKindName[]
  releases?: string[][]
  categories?: string[]
  tags?: string[]
  ownerId?: string
}

export type SearchPlan =
  /** No pack can match (a group names nothing here, or single-valued fields asked for two different values). */
  | { empty: true }
  /** `filters` for the search; `residual`: OR-groups the search cannot express, checked on its hits (matchesResidual). */
  | { empty: false; filters: FacetFilters; residual: Atom[][] }

const intersect = <T>(a: ReadonlySet<T> | undefined, b: ReadonlySet<T>): Set<T> => new Set(a === undefined ? b : [...b].filter((x) => a.has(x)))

/**
 * The search for an AND of OR-groups of atoms. What the packs search takes:
 * releases as an AND of any-of lists (exact); tags as all-of (so a group of
 * one tag is exact); categories, kinds and the owner as one any-of list each.
 *
 * Several groups of categories are their intersection, and that is exact: a
 * pack has at most one category, so "its category is in A and its category is
 * in B" is "its category is in A ∩ B". The same holds for the owner. Kinds are
 * not single-valued (a pack may have resource and data versions), but there
 * are only two: when the groups share a kind, their AND is "any of the shared
 * kinds" (a group {resource, data} beside {resource} adds nothing); only
 * {resource} AND {data} (a pack with both) is left to check on the hits.
 *
 * A group the search cannot say in one list (two tags, a tag or a category or
 * a loader together, several owners) is left over as residual. A group that
 * mixes a release with anything else is a 400: checking releases on the hits
 * would need every version's releases, and no Modrinth client sends it.
 */
export function planSearch(groups: readonly (readonly Atom[])[]): SearchPlan {
  const releases: string[][] = []
  const tags = new Set<string>()
  let categories: Set<string> | undefined
  let owners: Set<string> | undefined
  const kindGroups: Set<PackKindName>[] = []
  const residual: Atom[][] = []
  for (const group of groups) {
    if (group.length === 0) return { empty: true }
    const only = <K extends string>(key: K) => group.every((atom) => key in atom)
    if (only('release')) releases.push([...new Set(group.map((atom) => (atom as { release: string }).release))])
    else if (group.some((atom) => 'release' in atom)) {
      throw new BadRequest('a facets group mixes versions with other facet types; put versions in a group of their own')
    } else if (only('category')) categories = intersect(categories, new Set(group.map((atom) => (atom as { category: string }).category)))
    else if (only('owner')) owners = intersect(owners, new Set(group.map((atom) => (atom as { owner: string }).owner)))
    else if (only('kind')) kindGroups.push(new Set(group.map((atom) => (atom as { kind: PackKindName }).kind)))
    else if (only('tag') && new Set(group.map((atom) => (atom as { tag: string }).tag)).size === 1) tags.add((group[0] as { tag: string }).tag)
    else residual.push([...group])
  }
  const filters: FacetFilters = {}
  if (releases.length > 0) filters.releases = releases
  if (tags.size > 0) filters.tags = [...tags]
  if (categories !== undefined) {
    if (categories.size === 0) return { empty: true }
    filters.categories = [...categories]
  }
  if (owners !== undefined) {
    if (owners.size === 0) return { empty: true }
    if (owners.size === 1) filters.ownerId = [...owners][0]!
    else residual.push([...owners].map((owner) => ({ owner })))
  }
  if (kindGroups.length > 0) {
    const shared = kindGroups.reduce<Set<PackKindName> | undefined>((all, group) => intersect(all, group), undefined)!
    if (shared.size > 0) filters.kinds = [...shared].sort()
    else {
      // {resource} AND {data}: the search keeps packs with resource versions, the hits are checked for data ones.
      filters.kinds = ['resource']
      residual.push([{ kind: 'data' }])
    }
  }
  return { empty: false, filters, residual }
}

/** What a residual check reads of a hit. */
export interface PackFacts {
  categoryKey: string | null
  /** Tag names, lower case. */
  tags: ReadonlySet<string>
  ownerId: string
  /** The kinds of its public versions. */
  kinds: ReadonlySet<PackKindName>
}

/** Whether a pack passes every residual group (each: any of its atoms). */
export function matchesResidual(residual: readonly (readonly Atom[])[], pack: PackFacts): boolean {
  return residual.every((group) => group.some((atom) => {
    if ('category' in atom) return pack.categoryKey === atom.category
    if ('tag' in atom) return pack.tags.has(atom.tag)
    if ('owner' in atom) return pack.ownerId === atom.owner
    if ('kind' in atom) return pack.kinds.has(atom.kind)
    return false
  }))
}

/** Whether checking the residual needs the kinds of the hits' versions (a query more). */
export function residualNeedsKinds(residual: readonly (readonly Atom[])[]): boolean {
  return residual.some((group) => group.some((atom) => 'kind' in atom))
}
