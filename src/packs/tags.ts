// Tag categories and tags: the rules for creating them (the admin CLI is
// their only author).
import type { Db } from '../db/index.js'
import { findCategoryByKey, findTagByName, insertCategory, insertTag, type CategoryRow, type TagRow } from './tags-repository.js'
import { BadRequest, Conflict, NotFound } from '../errors.js'

export const CATEGORY_KEY_PATTERN = /^[a-z0-9_-]{1,32}$/
export const COLOR_PATTERN = /^#[0-9a-f]{6}$/i
const MAX_CATEGORY_NAME = 64
const MAX_TAG_NAME = 32
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/

/** A display name: trimmed, 1..max characters (code points), no control characters. */
function displayName(what: string, raw: string, max: number): string {
  const name = raw.trim()
  const length = [...name].length
  if (length < 1 || length > max || CONTROL.test(name)) {
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
