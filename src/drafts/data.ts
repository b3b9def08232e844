// A draft's data: the create-page form, kept as the JSON text the client sent
// (stored as given, returned as saved: docs/decisions.md#drafts). Checked here when it is
// saved and read here whenever it is used (the draft API, "My drafts",
// publishing, the create page), so all of them agree on what it says.
import { BadRequest } from '../errors.js'

/** The form fields a draft stores (DraftData) that are text. */
const TEXT_FIELDS = ['title', 'summary', 'category', 'description', 'version_name', 'changelog'] as const

/** The known members of a draft's data, each of the type its users rely on. */
export interface DraftFields {
  /** As saved, untrimmed; '' when absent or not text. */
  title: string
  summary: string
  /** A category key. */
  category: string
  description: string
  /** Tag names as saved, each once; members that are not text are left out. */
  tags: string[]
  version_name: string
  changelog: string
  /** The create page's edit counter saved with the data (see the client's autosave); 0 when none. */
  revision: number
  /** Co-authors to invite when the draft is published, each once (by lower-case name); entries of another shape are left out. */
  team: Array<{ username: string; role: 'maintainer' | 'uploader' }>
}

/** The most co-authors a draft may name: a team is a handful of people, and each becomes an invitation. */
export const MAX_DRAFT_TEAM = 20

/** Draft ids are stored in lower case (as the uploads route stores draft_uuid): one draft, however the client spells it. */
export function draftIdOf(uuid: string): string {
  return uuid.toLowerCase()
}

/**
 * A loose check of an autosaved draft: the known fields, when present, have
 * the types the create page and publishing rely on (text or null; tags a list
 * of names or null). Anything else in the object is the page's business and
 * is kept untouched.
 */
export function checkDraftData(data: Record<string, unknown>): void {
  for (const field of TEXT_FIELDS) {
    const value = data[field]
    if (value !== undefined && value !== null && typeof value !== 'string') {
      throw new BadRequest(`data.${field} must be a string`)
    }
  }
  const tags = data.tags
  if (tags !== undefined && tags !== null && !(Array.isArray(tags) && tags.every((t) => typeof t === 'string'))) {
    throw new BadRequest('data.tags must be an array of strings')
  }
  const team = data.team
  if (team !== undefined && team !== null) {
    const entry = (m: unknown) => typeof m === 'object' && m !== null && typeof (m as Record<string, unknown>).username === 'string'
      && ['maintainer', 'uploader'].includes((m as Record<string, unknown>).role as string)
    if (!Array.isArray(team) || !team.every(entry)) {
      throw new BadRequest('data.team must be an array of {"username": string, "role": "maintainer" or "uploader"}')
    }
    if (team.length > MAX_DRAFT_TEAM) throw new BadRequest(`data.team names ${team.length} people; a draft may invite at most ${MAX_DRAFT_TEAM}`)
  }
}

/**
 * The stored text as the object it was saved as. Saves are checked to be
 * objects, so anything else (a row damaged outside the service) reads as an
 * empty draft rather than failing every page that shows it.
 */
export function parseDraftData(text: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(text)
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {}
  } catch {
    return {}
  }
}

/** The known members of stored draft data; see DraftFields. */
export function readDraftFields(text: string): DraftFields {
  const data = parseDraftData(text)
  const field = (name: (typeof TEXT_FIELDS)[number]) => {
    const value = data[name]
    return typeof value === 'string' ? value : ''
  }
  const tags = Array.isArray(data.tags) ? data.tags.filter((t): t is string => typeof t === 'string') : []
  const revision = typeof data.revision === 'number' && Number.isFinite(data.revision) ? data.revision : 0
  const team = new Map<string, { username: string; role: 'maintainer' | 'uploader' }>()
  for (const m of Array.isArray(data.team) ? (data.team as unknown[]).slice(0, MAX_DRAFT_TEAM) : []) {
    const { username, role } = (typeof m === 'object' && m !== null ? m : {}) as Record<string, unknown>
    if (typeof username === 'string' && username.trim() !== '' && (role === 'maintainer' || role === 'uploader')) {
      team.set(username.trim().toLowerCase(), { username: username.trim(), role })
    }
  }
  return {
    title: field('title'),
    summary: field('summary'),
    category: field('category'),
    description: field('description'),
    tags: [...new Set(tags)],
    version_name: field('version_name'),
    changelog: field('changelog'),
    revision,
    team: [...team.values()],
  }
}
