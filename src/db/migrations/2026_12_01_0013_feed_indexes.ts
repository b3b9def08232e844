import { sql, type Kysely } from 'kysely'

// The new-packs feed (src/feeds/) shows the newest listed packs, from the listing's own index
// (packs_listed_created, migration 0007), and to their owner and staff also the packs the listing leaves
// out: hidden by staff, or of a disabled account. Those are few, so they get a small index of their own in
// the same order rather than a second copy of the whole table's order; the feed merges the two. Without
// it, staff's feed read every pack and sorted them all. A pack's and a user's versions are read through
// versions_pack_created (migration 0001).
const UNLISTED = sql`hidden_at is not null or owner_disabled = 1`

export async function up(db: Kysely<unknown>): Promise<void> {
  // Literal conditions (not bound parameters): a query uses a partial index only when it repeats them.
  await sql`create index packs_unlisted_created on packs (created_at desc, id) where ${UNLISTED}`.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index packs_unlisted_created`.execute(db)
}
