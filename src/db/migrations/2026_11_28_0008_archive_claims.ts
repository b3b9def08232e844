import { sql, type Kysely } from 'kysely'

// Whose bytes an archive is. The by-hash lookups name a pack from an
// archive's hash alone, so a copy of someone's archive published in another
// pack could take over the players who hold it. The first pack to publish an
// archive claims its SHA-256 (src/packs/archive-claims.ts explains the rules):
//
// - archive_claims: one row per SHA-256, the pack that first published it and
//   who owned that pack then. held_until is null while the pack has a version
//   with those bytes; when it no longer has one (the version or the pack was
//   deleted) the claim is held until then, as a deleted pack's id is.
// - archive_permits: staff's exceptions (`packs archive allow`): this user may
//   publish this archive although another owner's pack claims it.
//
// Existing sites: each archive is claimed by the pack of the first version
// that published it (as the by-hash lookup already answered).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createTable('archive_claims')
    .addColumn('sha256', 'text', (c) => c.primaryKey())
    // packs.id, not a foreign key: the claim outlives a deleted pack for the hold.
    .addColumn('pack_row_id', 'text', (c) => c.notNull())
    .addColumn('owner_id', 'text', (c) => c.notNull())
    .addColumn('claimed_at', 'text', (c) => c.notNull())
    .addColumn('held_until', 'text')
    .execute()
  await db.schema.createIndex('archive_claims_pack').on('archive_claims').columns(['pack_row_id', 'held_until']).execute()
  await db.schema.createTable('archive_permits')
    .addColumn('sha256', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('archive_permits_pk', ['sha256', 'user_id'])
    .execute()
  await sql`
    insert into archive_claims (sha256, pack_row_id, owner_id, claimed_at, held_until)
    select sha256, pack_id, owner_id, created_at, null from (
      select files.sha256, versions.pack_id, packs.owner_id, versions.created_at,
             row_number() over (partition by files.sha256 order by versions.created_at, versions.id) as rank
      from versions
      join files on files.id = versions.file_id
      join packs on packs.id = versions.pack_id
    ) as ranked
    where rank = 1`.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('archive_permits').execute()
  await db.schema.dropTable('archive_claims').execute()
}
