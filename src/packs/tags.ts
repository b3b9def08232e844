// Tag categories and tags: the rules for creating them (the admin CLI is
// their only author), and how the pages show them as colored chips.
import type { Db } from '../db/index.js'
import {
  findCategoryByKey, findTagByName, findTagsWithCategory, findTagWithCategory, insertCategory, insertTag, listCategories as listCategoryRows, mostUsedTags,
  type CategoryRow, type TagRow, type TagSuggestionRow,
} from './tags-repository.js'
import { BadRequest, Conflict, NotFound } from '../errors.js'
import { lineFault } from '../http/text-input.js'

export type { CategoryRow, TagSuggestionRow }

export const CATEGORY_KEY_PATTERN = /^[a-z0-9_-]{1,32}$/
export const COLOR_PATTERN = /^#[0-9a-f]{6}$/i
const MAX_CATEGORY_NAME = 64
const MAX_TAG_NAME = 32

/** A display name: trimmed, 1..max characters (code points), no control characters (bidirectional ones included: lineFault). */
function displayName(what: string, raw: string, max: number): string {
  const name = raw.trim()
  const length = [...name].length
  if (length < 1 || length > max || lineFault(name) !== null) {
    throw new BadRequest(`${what} must be 1-${max} characters without control characters`)
  }
  return name
}

export async function createCategory(db: Db, key: string, name: string, color: string): Promise<CategoryRow> {
  if (!CATEGORY_KEY_PATTERN.test(key)) throw new BadRequest('category key must be 1-32 characters of a-z, 0-9, "_" or "-"')
  if (!COLOR_PATTERN.test(color)) throw new BadRequest(`color "${color}" is not of the form #rrggbb`)
  const displayed = displayName('category name', name, MAX_CATEGORY_NAME)
  if (await findCategoryByKey(db, key)) throw new Conflict(`category "${key}" already exists`)
  try {
    return await insertCategory(db, { key, name: displayed, color: color.toLowerCase() })
  } catch (error) {
    // Two writers racing for one key: the unique index decides.
    if (await findCategoryByKey(db, key)) throw new Conflict(`category "${key}" already exists`)
    throw error
  }
}

export async function createTag(db: Db, name: string, categoryKey: string): Promise<TagRow & { category: CategoryRow }> {
  const tagName = displayName('tag name', name, MAX_TAG_NAME)
  const category = await findCategoryByKey(db, categoryKey)
  if (!category) throw new NotFound(`no category "${categoryKey}"`)
  const existing = await findTagByName(db, tagName)
  if (existing) throw new Conflict(`tag "${existing.name}" already exists`)
  try {
    return { ...(await insertTag(db, { name: tagName, categoryId: category.id })), category }
  } catch (error) {
    if (await findTagByName(db, tagName)) throw new Conflict(`tag "${tagName}" already exists`)
    throw error
  }
}

/** Every category, by name: the pages' category lists and the colors of /assets/categories.css. */
export async function listCategories(db: Db): Promise<CategoryRow[]> {
  return listCategoryRows(db)
}

/**
 * The browse page's tag filters: the `limit` most used tags, and before them
 * the `active` one (the filter in use) when it is a tag but not among them, so
 * it stays visible and can be switched off.
 */
export async function filterTags(db: Db, limit: number, active: string): Promise<TagSuggestionRow[]> {
  const [popular, activeTag] = await Promise.all([
    mostUsedTags(db, limit),
    active ? findTagWithCategory(db, active) : Promise.resolve(undefined),
  ])
  const tags: TagSuggestionRow[] = [...popular]
  if (activeTag && !tags.some((t) => t.name.toLowerCase() === activeTag.name.toLowerCase())) tags.unshift(activeTag)
  return tags
}

/** A tag name as a chip shows it. */
export interface ChipTag {
  name: string
  /** Category key for the chip's color, or null when the name is no longer a tag of the site. */
  category: string | null
}

/** Each name (a draft's tags) as the site spells it, with its category's key; one query for all of them. */
export async function chipTags(db: Db, names: string[]): Promise<ChipTag[]> {
  const known = new Map((await findTagsWithCategory(db, names)).map((tag) => [tag.name.toLowerCase(), tag]))
  return names.map((name) => {
    const tag = known.get(name.toLowerCase())
    return { name: tag?.name ?? name, category: tag?.category ?? null }
  })
}
