import { sql, type ColumnDataType, type Expression, type Kysely } from 'kysely'

// Relevance search, filters and facets (src/packs/search-service.ts; docs/site.md#search):
//
// - pack_search: one row per pack that has been indexed, with what the filters read from a pack's public
//   (not yanked) versions: how many there are, which kinds (bit 1 resource, bit 2 data), and trending (the
//   downloads counted in the last 7 days) and the document's distinct words. On PostgreSQL it also holds the text search document (a tsvector,
//   weighted A title, B team names and tags, C category and summary, D description) with its GIN index. A pack
//   without a row is not indexed yet (a site moved in by import or restore): the server fills those in after
//   it starts.
// - pack_text (SQLite only): the same document as an FTS5 table, one column per field, keyed by
//   packs.search_seq; prefix indexes of 2 and 3 characters serve searches typed a few letters at a time.
// - pack_releases: the Minecraft releases a pack's public versions run on, one row each, for the release
//   filter and its facet counts.
// - search_terms: every word of the indexed documents with how many packs use it. Typo tolerance looks up
//   the words near a query's word here, the same way on both engines, so both give the same results.
// - pack_daily_downloads: counted downloads per pack and UTC day, which trending adds up; days older than
//   a week are folded away by the sweep.
export async function up(db: Kysely<unknown>, engine: 'sqlite' | 'postgres' = 'sqlite'): Promise<void> {
  // Keys and words in code point order on PostgreSQL, as the first migrations declare ids: a join on packs.id
  // (collate "C") uses an index only in the same collation, and a range of words ("starts with d") is a range
  // of code points.
  const key: ColumnDataType | Expression<unknown> = engine === 'postgres' ? sql`text collate "C"` : 'text'
  if (engine === 'postgres') {
    // The team tables (migration 0009) were made in the default collation; their joins on packs.id and users.id want "C".
    for (const [table, column] of [['pack_members', 'pack_row_id'], ['pack_members', 'user_id'], ['pack_transfers', 'pack_row_id'], ['pack_transfers', 'to_user_id']]) {
      await sql`alter table ${sql.table(table!)} alter column ${sql.ref(column!)} type text collate "C"`.execute(db)
    }
  }
  await db.schema.createTable('pack_search')
    .addColumn('pack_row_id', key, (c) => c.primaryKey().references('packs.id').onDelete('cascade'))
    .addColumn('public_versions', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('kinds', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('trending', 'integer', (c) => c.notNull().defaultTo(0))
    // The document's distinct words, space-separated: what to take back from search_terms when it changes.
    .addColumn('terms', 'text', (c) => c.notNull().defaultTo(''))
    // Each field's words, space-separated with a space at either end: the rank of a hit is read from them
    // with the same SQL on both engines, so both order hits alike (src/packs/search-repository.ts).
    .addColumn('title_words', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('names_words', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('tags_words', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('category_words', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('summary_words', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('description_words', 'text', (c) => c.notNull().defaultTo(''))
    .execute()
  await sql`create index pack_search_trending on pack_search (trending desc, pack_row_id)`.execute(db)

  await db.schema.createTable('pack_releases')
    .addColumn('pack_row_id', key, (c) => c.notNull().references('packs.id').onDelete('cascade'))
    .addColumn('release', key, (c) => c.notNull())
    .addPrimaryKeyConstraint('pack_releases_pk', ['pack_row_id', 'release'])
    .execute()
  await db.schema.createIndex('pack_releases_release').on('pack_releases').columns(['release', 'pack_row_id']).execute()

  await db.schema.createTable('search_terms')
    .addColumn('term', key, (c) => c.primaryKey())
    .addColumn('docs', 'integer', (c) => c.notNull())
    .execute()

  await db.schema.createTable('pack_daily_downloads')
    .addColumn('pack_row_id', key, (c) => c.notNull().references('packs.id').onDelete('cascade'))
    .addColumn('day', key, (c) => c.notNull())
    .addColumn('downloads', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('pack_daily_downloads_pk', ['pack_row_id', 'day'])
    .execute()
  await db.schema.createIndex('pack_daily_downloads_day').on('pack_daily_downloads').columns(['day', 'pack_row_id']).execute()

  // The title sort, A to Z by code point on both engines (PostgreSQL's locale would order it otherwise).
  const byCodePoint = engine === 'postgres' ? sql` collate "C"` : sql``
  await sql`create index packs_listed_title on packs ((lower(title)${byCodePoint}), id) where hidden_at is null and owner_disabled = 0`.execute(db)

  if (engine === 'postgres') {
    await sql`alter table pack_search add column document tsvector not null default ''::tsvector`.execute(db)
    await sql`create index pack_search_document on pack_search using gin (document)`.execute(db)
    return
  }
  await sql`create virtual table pack_text using fts5(
    title, names, tags, category, summary, description,
    tokenize = 'unicode61 remove_diacritics 2', prefix = '2 3')`.execute(db)
  // A pack's row goes with the pack (the other tables by their foreign keys).
  await sql`create trigger pack_text_delete after delete on packs begin
    delete from pack_text where rowid = old.search_seq;
  end`.execute(db)
}

export async function down(db: Kysely<unknown>, engine: 'sqlite' | 'postgres' = 'sqlite'): Promise<void> {
  if (engine === 'sqlite') {
    await sql`drop trigger pack_text_delete`.execute(db)
    await sql`drop table pack_text`.execute(db)
  }
  await sql`drop index packs_listed_title`.execute(db)
  for (const table of ['pack_daily_downloads', 'search_terms', 'pack_releases', 'pack_search']) await db.schema.dropTable(table).execute()
}
