import { sql, type ColumnDataType, type Expression, type Kysely } from 'kysely'

// After publishing: editing, yanking, deleting, moderation, token
// reach, download counts and the Minecraft releases a version is for. Only
// added columns (with defaults) and new tables, so a site upgraded from the
// initial schema keeps every row as it was: old tokens are full access, old
// versions are not yanked and have no known kind or range.
export async function up(db: Kysely<unknown>, engine: 'sqlite' | 'postgres' = 'sqlite'): Promise<void> {
  // Same reason as the initial migration: byte order on both engines.
  const text: ColumnDataType | Expression<unknown> = engine === 'postgres' ? sql`text collate "C"` : 'text'

  // Staff hid the pack (null: not hidden). Only its owner and staff see it; the update-check answers 404.
  await db.schema.alterTable('packs').addColumn('hidden_at', text).execute()
  // Counts edits of the pack's page fields; an edit names the revision it started from, and a stale one is a 409.
  await db.schema.alterTable('packs').addColumn('revision', 'integer', (c) => c.notNull().defaultTo(1)).execute()
  await db.schema.alterTable('packs').addColumn('downloads', 'bigint', (c) => c.notNull().defaultTo(0)).execute()
  await db.schema.createIndex('packs_downloads').on('packs').columns(['downloads', 'id']).execute()

  // A yanked version stays downloadable by its file URL but is never "latest".
  await db.schema.alterTable('versions').addColumn('yanked_at', text).execute()
  await db.schema.alterTable('versions').addColumn('downloads', 'bigint', (c) => c.notNull().defaultTo(0)).execute()
  // A download finds its version by file id, and deleting a file asks whether a version still uses it.
  await db.schema.createIndex('versions_file_id').on('versions').column('file_id').execute()

  // What a version archive declares, read once from its bytes (src/minecraft/): 'resource' or 'data' (null:
  // neither or both folders), and the pack.mcmeta format range. A null max minor is "any minor" (max_format: 74).
  await db.schema.alterTable('files').addColumn('pack_kind', text).execute()
  await db.schema.alterTable('files').addColumn('min_format', 'integer').execute()
  await db.schema.alterTable('files').addColumn('min_format_minor', 'integer').execute()
  await db.schema.alterTable('files').addColumn('max_format', 'integer').execute()
  await db.schema.alterTable('files').addColumn('max_format_minor', 'integer').execute()

  // Disabled by staff (null: active): no sign-in, no session, no token; its packs are hidden.
  await db.schema.alterTable('users').addColumn('disabled_at', text).execute()

  // A token's reach: 'full' (every token made before this), 'read' (safe methods only) or 'publish'
  // (read, plus new versions of the packs in token_packs).
  await db.schema.alterTable('api_tokens').addColumn('scope', text, (c) => c.notNull().defaultTo('full')).execute()
  await db.schema
    .createTable('token_packs')
    .addColumn('token_id', text, (c) => c.notNull().references('api_tokens.id').onDelete('cascade'))
    .addColumn('pack_id', text, (c) => c.notNull().references('packs.id').onDelete('cascade'))
    .addPrimaryKeyConstraint('token_packs_pk', ['token_id', 'pack_id'])
    .execute()
  await db.schema.createIndex('token_packs_pack_id').on('token_packs').column('pack_id').execute()

  // namespace:pack_id of deleted packs, refused to any new pack until held_until: a player's mod must never
  // silently receive a different pack under a name it trusts.
  await db.schema
    .createTable('pack_id_holds')
    .addColumn('namespace', text, (c) => c.notNull())
    .addColumn('pack_id', text, (c) => c.notNull())
    .addColumn('deleted_at', text, (c) => c.notNull())
    .addColumn('held_until', text, (c) => c.notNull())
    .addPrimaryKeyConstraint('pack_id_holds_pk', ['namespace', 'pack_id'])
    .execute()

  // Who did what to which pack or account, and when. Names are copied in, so the record outlives the pack or
  // account; actor_id is null for the admin CLI.
  await db.schema
    .createTable('audit_log')
    .addColumn('id', text, (c) => c.primaryKey())
    .addColumn('created_at', text, (c) => c.notNull())
    .addColumn('actor_id', text)
    .addColumn('actor_name', text, (c) => c.notNull())
    .addColumn('action', text, (c) => c.notNull())
    .addColumn('target_type', text, (c) => c.notNull())
    .addColumn('target', text, (c) => c.notNull())
    .addColumn('details', text, (c) => c.notNull())
    .execute()
  await db.schema.createIndex('audit_log_created').on('audit_log').columns(['created_at', 'id']).execute()
  await db.schema.createIndex('audit_log_target').on('audit_log').columns(['target_type', 'target', 'created_at']).execute()

  // Downloads seen today, one row per (UTC day, version, hashed client address), so a launcher that fetches
  // the same archive on every start counts once a day. Written in batches, never per download; old days are
  // swept.
  await db.schema
    .createTable('download_seen')
    .addColumn('day', text, (c) => c.notNull())
    .addColumn('version_id', text, (c) => c.notNull())
    .addColumn('client', text, (c) => c.notNull())
    .addPrimaryKeyConstraint('download_seen_pk', ['day', 'version_id', 'client'])
    .execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['download_seen', 'audit_log', 'pack_id_holds', 'token_packs']) await db.schema.dropTable(table).execute()
  await db.schema.dropIndex('packs_downloads').execute()
  await db.schema.dropIndex('versions_file_id').execute()
  for (const [table, column] of [
    ['api_tokens', 'scope'], ['users', 'disabled_at'],
    ['files', 'max_format_minor'], ['files', 'max_format'], ['files', 'min_format_minor'], ['files', 'min_format'], ['files', 'pack_kind'],
    ['versions', 'downloads'], ['versions', 'yanked_at'], ['packs', 'downloads'], ['packs', 'revision'], ['packs', 'hidden_at'],
  ] as const) {
    await db.schema.alterTable(table).dropColumn(column).execute()
  }
}
