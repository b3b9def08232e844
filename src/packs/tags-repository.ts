// Tag categories, tags, and the tag autocomplete. Names are matched on their
// stored lower-case copies, so every comparison is case-insensitive on SQLite
// and PostgreSQL alike without engine-specific collations.
import { randomUUID } from 'node:crypto'
import { sql, type Expression, type SqlBool } from 'kysely'
import type { Db } from '../db/index.js'
import type { CategoriesTable, TagsTable } from '../db/schema.js'

export type CategoryRow = CategoriesTable
export type TagRow = Omit<TagsTable, 'uses'>

export interface TagSuggestionRow {
  name: string
  category: string
  categoryName: string
  color: string
}

export async function insertCategory(db: Db, category: { key: string; name: string; color: string }): Promise<CategoryRow> {
  const row: CategoryRow = {
    id: randomUUID(),
    key: category.key,
    name: category.name,
    name_lower: category.name.toLowerCase(),
    color: category.color,
  }
  await db.insertInto('categories').values(row).execute()
  return row
}

export async function findCategoryByKey(db: Db, key: string): Promise<CategoryRow | undefined> {
  return db.selectFrom('categories').selectAll().where('key', '=', key).executeTakeFirst()
}

export async function insertTag(db: Db, tag: { name: string; categoryId: string }): Promise<TagRow> {
  const row: TagRow = { id: randomUUID(), name: tag.name, name_lower: tag.name.toLowerCase(), category_id: tag.categoryId }
  await db.insertInto('tags').values(row).execute()
  return row
}

export async function findTagByName(db: Db, name: string): Promise<TagRow | undefined> {
  return db.selectFrom('tags').select(['id', 'name', 'name_lower', 'category_id']).where('name_lower', '=', name.toLowerCase()).executeTakeFirst()
}

/** `text` as a LIKE pattern fragment that matches itself only: `%`, `_` and the escape character lose their meaning. */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, '\\$&')
}

// ESCAPE is spelled out because the default differs (SQLite has none,
// PostgreSQL uses backslash); with it, both engines read the pattern alike.
function like(column: 'tags.name_lower' | 'categories.name_lower', pattern: string): Expression<SqlBool> {
  return sql<SqlBool>`${sql.ref(column)} like ${pattern} escape '\\'`
}

/**
 * Tag suggestions for `query` (docs/decisions.md#autocomplete): tags whose name or whose
 * category's name contains it, case-insensitively. Tag-name prefix matches
 * come first, then category-name prefix matches, then the other matches; within
 * each group the most used tags first, then by name. An empty query lists the
 * most used tags.
 *
 * One query per group, each walking the tags_uses index (most used first) and
 * stopping at the limit, the later ones only when the earlier ones left room:
 * at 10,000 tags a single query that found every match and sorted them by group
 * took 6 ms, these about a tenth of that for a common letter (a rare one reads
 * the 10,000 index entries once or twice: still under 2 ms).
 */
export async function suggestTags(db: Db, query: string, limit: number): Promise<TagSuggestionRow[]> {
  const lower = query.toLowerCase()
  const select = (remaining: number) => db
    .selectFrom('tags')
    .innerJoin('categories', 'categories.id', 'tags.category_id')
    .select(['tags.name', 'categories.key', 'categories.name as category_name', 'categories.color'])
    .orderBy('tags.uses', 'desc')
    .orderBy('tags.name_lower')
    .orderBy('tags.name')
    .limit(remaining)
  const groups = lower === ''
    ? [(remaining: number) => select(remaining)]
    : (() => {
      const prefix = `${escapeLike(lower)}%`
      const anywhere = `%${escapeLike(lower)}%`
      // Category ids by a pattern on their names (a few hundred categories at most).
      const categoriesLike = (pattern: string) => db.selectFrom('categories').select('categories.id').where(like('categories.name_lower', pattern))
      const tagPrefix = like('tags.name_lower', prefix)
      const categoryPrefix = sql<SqlBool>`${sql.ref('tags.category_id')} in (${categoriesLike(prefix)})`
      return [
        (remaining: number) => select(remaining).where(tagPrefix),
        (remaining: number) => select(remaining).where(categoryPrefix).where((eb) => eb.not(tagPrefix)),
        (remaining: number) => select(remaining)
          .where((eb) => eb.or([like('tags.name_lower', anywhere), sql<SqlBool>`${sql.ref('tags.category_id')} in (${categoriesLike(anywhere)})`]))
          .where((eb) => eb.and([eb.not(tagPrefix), eb.not(categoryPrefix)])),
      ]
    })()
  const rows: { name: string; key: string; category_name: string; color: string }[] = []
  for (const group of groups) {
    if (rows.length >= limit) break
    rows.push(...await group(limit - rows.length).execute())
  }
  return rows.map((r) => ({ name: r.name, category: r.key, categoryName: r.category_name, color: r.color }))
}

export async function listCategories(db: Db): Promise<CategoryRow[]> {
  return db.selectFrom('categories').selectAll().orderBy('name_lower').execute()
}

export interface TagUsageRow extends TagSuggestionRow {
  /** How many packs carry the tag. */
  uses: number
}

/** The tags on the most packs (unused tags left out), most used first, then by name: the browse page's filter chips. */
export async function mostUsedTags(db: Db, limit: number): Promise<TagUsageRow[]> {
  // The tags_uses index, in order: no aggregate over pack_tags.
  const rows = await db
    .selectFrom('tags')
    .innerJoin('categories', 'categories.id', 'tags.category_id')
    .select(['tags.name', 'tags.uses', 'categories.key', 'categories.name as category_name', 'categories.color'])
    .where('tags.uses', '>', 0)
    .orderBy('tags.uses', 'desc')
    .orderBy('tags.name_lower')
    .limit(limit)
    .execute()
  return rows.map((r) => ({ name: r.name, category: r.key, categoryName: r.category_name, color: r.color, uses: Number(r.uses) }))
}

/** Sets every tag's count from pack_tags: after an import, whose tag rows may carry counts the triggers then add to. */
export async function recountTagUses(db: Db): Promise<void> {
  await db.updateTable('tags').set((eb) => ({
    uses: eb.selectFrom('pack_tags').select((e) => e.fn.countAll<number>().as('n')).whereRef('pack_tags.tag_id', '=', 'tags.id'),
  })).execute()
}

/**
 * The existing tags among `names` with their categories (for chips' colors),
 * matched case-insensitively, one query for up to NAMES_PER_QUERY names;
 * unknown names are left out.
 */
export async function findTagsWithCategory(db: Db, names: readonly string[]): Promise<TagSuggestionRow[]> {
  const found: TagSuggestionRow[] = []
  for (const lower of lowerNameChunks(names)) {
    const rows = await db
      .selectFrom('tags')
      .innerJoin('categories', 'categories.id', 'tags.category_id')
      .select(['tags.name', 'categories.key', 'categories.name as category_name', 'categories.color'])
      .where('tags.name_lower', 'in', lower)
      .execute()
    for (const r of rows) found.push({ name: r.name, category: r.key, categoryName: r.category_name, color: r.color })
  }
  return found
}

/** Names in a draft are the client's: a few hundred per IN list keeps any count under both engines' bound on parameters. */
const NAMES_PER_QUERY = 500

/** `names` in lower case, without empty ones or repeats, in lists of at most NAMES_PER_QUERY. */
export function lowerNameChunks(names: readonly string[]): string[][] {
  const lower = [...new Set(names.map((n) => n.toLowerCase()).filter((n) => n !== ''))]
  const chunks: string[][] = []
  for (let i = 0; i < lower.length; i += NAMES_PER_QUERY) chunks.push(lower.slice(i, i + NAMES_PER_QUERY))
  return chunks
}

/** One tag with its category (for a chip's color), by name, case-insensitively. */
export async function findTagWithCategory(db: Db, name: string): Promise<TagSuggestionRow | undefined> {
  return (await findTagsWithCategory(db, [name]))[0]
}
