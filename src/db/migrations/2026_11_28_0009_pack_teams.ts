import type { Kysely } from 'kysely'

// Packs made by several people (src/packs/policy.ts decides what each may do; docs/site.md#teams):
//
// - pack_members: the pack's team besides its owner (packs.owner_id stays the owner). A row with
//   accepted_at null is an invitation: it grants nothing until the invitee accepts it, and it lapses at
//   expires_at. One row per (pack, user): a second invitation of the same person is a 409.
// - pack_transfers: the owner's offer to hand the pack to one of its members, until that member accepts
//   (or it lapses). The pack's namespace:pack_id never changes: players' mods hold it.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createTable('pack_members')
    .addColumn('pack_row_id', 'text', (c) => c.notNull().references('packs.id').onDelete('cascade'))
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    // 'maintainer' | 'uploader'
    .addColumn('role', 'text', (c) => c.notNull())
    // users.id of who invited; not a foreign key: the row outlives that account's removal from the team.
    .addColumn('invited_by', 'text', (c) => c.notNull())
    .addColumn('invited_at', 'text', (c) => c.notNull())
    .addColumn('accepted_at', 'text')
    // For an invitation: when it lapses. Null once accepted.
    .addColumn('expires_at', 'text')
    .addPrimaryKeyConstraint('pack_members_pk', ['pack_row_id', 'user_id'])
    .execute()
  // A user's packs and invitations (profiles, the invitations page, the listing by member).
  await db.schema.createIndex('pack_members_user').on('pack_members').columns(['user_id', 'accepted_at']).execute()
  await db.schema.createTable('pack_transfers')
    .addColumn('pack_row_id', 'text', (c) => c.primaryKey().references('packs.id').onDelete('cascade'))
    .addColumn('to_user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('offered_by', 'text', (c) => c.notNull())
    .addColumn('offered_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('pack_transfers_to').on('pack_transfers').column('to_user_id').execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('pack_transfers').execute()
  await db.schema.dropTable('pack_members').execute()
}
