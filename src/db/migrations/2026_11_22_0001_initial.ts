import { sql, type ColumnDataType, type Expression, type Kysely } from 'kysely'

// Portable column types only (text, integer, bigint), so one migration serves
// SQLite and PostgreSQL.
export async function up(db: Kysely<unknown>, engine: 'sqlite' | 'postgres' = 'sqlite'): Promise<void> {
  // Text compares by code point on SQLite (BINARY). PostgreSQL would use the
  // database's locale, where "_" and "-" are ignored and case is interleaved,
  // so ORDER BY and the username prefix range scan would differ between
  // engines; the "C" collation compares UTF-8 bytes, i.e. by code point, and
  // lets a btree index serve LIKE 'prefix%'.
  const text: ColumnDataType | Expression<unknown> = engine === 'postgres' ? sql`text collate "C"` : 'text'
  await db.schema
    .createTable('users')
    .addColumn('id', text, (c) => c.primaryKey())
    .addColumn('username', text, (c) => c.notNull())
    .addColumn('username_lower', text, (c) => c.notNull().unique())
    .addColumn('password_hash', text, (c) => c.notNull())
    .addColumn('is_staff', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', text, (c) => c.notNull())
    .execute()

  await db.schema
    .createTable('api_tokens')
    .addColumn('id', text, (c) => c.primaryKey())
    .addColumn('user_id', text, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', text, (c) => c.notNull())
    .addColumn('token_hash', text, (c) => c.notNull().unique())
    .addColumn('created_at', text, (c) => c.notNull())
    .addColumn('last_used_at', text)
    .addColumn('expires_at', text)
    .addColumn('revoked_at', text)
    .execute()
  await db.schema.createIndex('api_tokens_user_id').on('api_tokens').column('user_id').execute()

  await db.schema
    .createTable('sessions')
    .addColumn('id', text, (c) => c.primaryKey())
    .addColumn('user_id', text, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('token_hash', text, (c) => c.notNull().unique())
    .addColumn('created_at', text, (c) => c.notNull())
    .addColumn('expires_at', text, (c) => c.notNull())
    .execute()
  await db.schema.createIndex('sessions_expires_at').on('sessions').column('expires_at').execute()

  await db.schema
    .createTable('settings')
    .addColumn('key', text, (c) => c.primaryKey())
    .addColumn('value', text, (c) => c.notNull())
    .execute()

  await db.schema
    .createTable('categories')
    .addColumn('id', text, (c) => c.primaryKey())
    .addColumn('key', text, (c) => c.notNull().unique())
    .addColumn('name', text, (c) => c.notNull())
    .addColumn('name_lower', text, (c) => c.notNull())
    .addColumn('color', text, (c) => c.notNull())
    .execute()

  await db.schema
    .createTable('tags')
    .addColumn('id', text, (c) => c.primaryKey())
    .addColumn('name', text, (c) => c.notNull())
    .addColumn('name_lower', text, (c) => c.notNull().unique())
    .addColumn('category_id', text, (c) => c.notNull().references('categories.id').onDelete('cascade'))
    .execute()
  await db.schema.createIndex('tags_category_id').on('tags').column('category_id').execute()

  await db.schema
    .createTable('files')
    .addColumn('id', text, (c) => c.primaryKey())
    .addColumn('storage_key', text, (c) => c.notNull().unique())
    .addColumn('filename', text, (c) => c.notNull())
    .addColumn('content_type', text, (c) => c.notNull())
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addColumn('sha256', text, (c) => c.notNull())
    .addColumn('created_at', text, (c) => c.notNull())
    .execute()

  await db.schema
    .createTable('drafts')
    .addColumn('id', text, (c) => c.primaryKey())
    .addColumn('user_id', text, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('data', text, (c) => c.notNull())
    .addColumn('created_at', text, (c) => c.notNull())
    .addColumn('updated_at', text, (c) => c.notNull())
    .execute()
  await db.schema.createIndex('drafts_user_id').on('drafts').column('user_id').execute()
  await db.schema.createIndex('drafts_updated_at').on('drafts').column('updated_at').execute()

  await db.schema
    .createTable('uploads')
    .addColumn('id', text, (c) => c.primaryKey())
    .addColumn('user_id', text, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('draft_id', text, (c) => c.references('drafts.id'))
    .addColumn('kind', text, (c) => c.notNull())
    .addColumn('file_id', text, (c) => c.notNull().references('files.id'))
    .addColumn('pack_format', 'integer')
    .addColumn('created_at', text, (c) => c.notNull())
    .addColumn('expires_at', text, (c) => c.notNull())
    .execute()
  await db.schema.createIndex('uploads_user_draft').on('uploads').columns(['user_id', 'draft_id']).execute()
  await db.schema.createIndex('uploads_draft_id').on('uploads').column('draft_id').execute()
  await db.schema.createIndex('uploads_expires_at').on('uploads').column('expires_at').execute()

  await db.schema
    .createTable('packs')
    .addColumn('id', text, (c) => c.primaryKey())
    .addColumn('namespace', text, (c) => c.notNull())
    .addColumn('pack_id', text, (c) => c.notNull())
    .addColumn('owner_id', text, (c) => c.notNull().references('users.id'))
    .addColumn('title', text, (c) => c.notNull())
    .addColumn('summary', text, (c) => c.notNull())
    .addColumn('description', text, (c) => c.notNull())
    .addColumn('category_id', text, (c) => c.references('categories.id').onDelete('set null'))
    .addColumn('thumbnail_file_id', text, (c) => c.references('files.id'))
    .addColumn('created_at', text, (c) => c.notNull())
    .addColumn('updated_at', text, (c) => c.notNull())
    .addUniqueConstraint('packs_namespace_pack_id', ['namespace', 'pack_id'])
    .execute()
  await db.schema.createIndex('packs_updated_at').on('packs').column('updated_at').execute()
  await db.schema.createIndex('packs_owner_id').on('packs').column('owner_id').execute()

  await db.schema
    .createTable('pack_tags')
    .addColumn('pack_id', text, (c) => c.notNull().references('packs.id').onDelete('cascade'))
    .addColumn('tag_id', text, (c) => c.notNull().references('tags.id').onDelete('cascade'))
    .addPrimaryKeyConstraint('pack_tags_pk', ['pack_id', 'tag_id'])
    .execute()
  await db.schema.createIndex('pack_tags_tag_id').on('pack_tags').column('tag_id').execute()

  await db.schema
    .createTable('pack_media')
    .addColumn('pack_id', text, (c) => c.notNull().references('packs.id').onDelete('cascade'))
    .addColumn('file_id', text, (c) => c.notNull().references('files.id'))
    .addColumn('position', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('pack_media_pk', ['pack_id', 'file_id'])
    .execute()

  await db.schema
    .createTable('versions')
    .addColumn('id', text, (c) => c.primaryKey())
    .addColumn('pack_id', text, (c) => c.notNull().references('packs.id').onDelete('cascade'))
    .addColumn('name', text, (c) => c.notNull())
    .addColumn('changelog', text, (c) => c.notNull())
    .addColumn('pack_format', 'integer')
    .addColumn('file_id', text, (c) => c.notNull().references('files.id'))
    .addColumn('created_at', text, (c) => c.notNull())
    .addUniqueConstraint('versions_pack_id_name', ['pack_id', 'name'])
    .execute()
  await db.schema.createIndex('versions_pack_created').on('versions').columns(['pack_id', 'created_at']).execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of [
    'versions', 'pack_media', 'pack_tags', 'packs', 'uploads', 'drafts', 'files',
    'tags', 'categories', 'settings', 'sessions', 'api_tokens', 'users',
  ]) {
    await db.schema.dropTable(table).execute()
  }
}
