import { sql, type Kysely } from 'kysely'

// Hearing about updates (docs/notifications.md): follows, notifications, feed tokens and webhooks.
//
// - pack_follows: who follows which pack. packs.followers counts them, kept by the follow and unfollow
//   themselves in their transaction (a user is never deleted, only disabled, and a pack's rows go with it).
// - notifications: what the site tells one user, newest first; read_at null while unread. Each user keeps
//   at most a bounded number (src/notifications/repository.ts drops the oldest), so the unread count is a
//   count over a short index range. pack_row_id is not a foreign key: a notice about a deleted pack stays.
// - notification_fanouts: a notice for a pack's followers, written in the transaction of the change that
//   causes it (one row, however many follow); the notifications plugin writes the followers' notices from it
//   afterwards, a few hundred at a time, each batch in a transaction that also moves after_user_id (the
//   follower it reached), so a process killed midway resumes where the last batch ended and no follower is
//   told twice (a notice's id is the fan-out's and the follower's). Claimed with a lease like the outbox.
//   Notification ids start with the time in base 36, so new rows go to the end of the primary key's index.
// - feed_tokens: one per user, the secret that opens that user's Atom feeds and nothing else. Stored as its
//   SHA-256 (the lookup) and sealed with the site secret (so its feed addresses can be shown again).
// - webhooks: per pack. Its address is a secret too (a Discord webhook URL carries the channel's token), so
//   it is sealed with the site secret like the signing secret, and only a shortened form (url_shown: scheme,
//   host and the start of the path) is kept readable. origin is the site's public origin as seen by the
//   request that saved it: the links of its messages start there when PACKS_BASE_URL is not set.
//   created_by is not a foreign key: a webhook belongs to the pack and outlives its maker leaving the team.
// - webhook_deliveries: the outbox. One row per (event, webhook), written in the transaction of the change
//   that caused it; its id is the Standard Webhooks message id, the same on every try. A dispatcher claims
//   due rows with a lease (claimed_until), so with several instances one tries a row at a time, and a
//   process killed mid-try leaves a lease that runs out and a row that is tried again.
// - webhook_attempts: each try, for the webhook's delivery log.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createTable('pack_follows')
    .addColumn('pack_row_id', 'text', (c) => c.notNull().references('packs.id').onDelete('cascade'))
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('pack_follows_pk', ['pack_row_id', 'user_id'])
    .execute()
  // A user's follows, newest first (their profile, the API's list).
  await db.schema.createIndex('pack_follows_user').on('pack_follows').columns(['user_id', 'created_at']).execute()
  await db.schema.alterTable('packs').addColumn('followers', 'integer', (c) => c.notNull().defaultTo(0)).execute()

  await db.schema.createTable('notifications')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('read_at', 'text')
    .addColumn('pack_row_id', 'text')
    // JSON object: what the notice says (the pack's names and title, the version, the reason).
    .addColumn('data', 'text', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('notifications_user').on('notifications').columns(['user_id', 'created_at', 'id']).execute()
  await sql`create index notifications_unread on notifications (user_id) where read_at is null`.execute(db)

  await db.schema.createTable('notification_fanouts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('pack_row_id', 'text', (c) => c.notNull())
    // Who caused it: not told of it themselves.
    .addColumn('except_user_id', 'text')
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    // The last follower (users.id, in id order) already told; '' before the first batch.
    .addColumn('after_user_id', 'text', (c) => c.notNull())
    .addColumn('claimed_until', 'text')
    .addColumn('claimed_by', 'text')
    .execute()

  await db.schema.createTable('feed_tokens')
    .addColumn('user_id', 'text', (c) => c.primaryKey().references('users.id').onDelete('cascade'))
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('sealed', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_used_at', 'text')
    .execute()

  await db.schema.createTable('webhooks')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('pack_row_id', 'text', (c) => c.notNull().references('packs.id').onDelete('cascade'))
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('url_sealed', 'text', (c) => c.notNull())
    .addColumn('url_shown', 'text', (c) => c.notNull())
    .addColumn('origin', 'text', (c) => c.notNull())
    // 'discord' | 'json'
    .addColumn('format', 'text', (c) => c.notNull())
    // The event types it receives, comma-separated.
    .addColumn('events', 'text', (c) => c.notNull())
    .addColumn('secret_sealed', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('disabled_at', 'text')
    .addColumn('disabled_reason', 'text')
    // Tries that failed since the last success.
    .addColumn('failures', 'integer', (c) => c.notNull().defaultTo(0))
    .execute()
  await db.schema.createIndex('webhooks_pack').on('webhooks').column('pack_row_id').execute()
  await db.schema.createIndex('webhooks_creator').on('webhooks').column('created_by').execute()

  await db.schema.createTable('webhook_deliveries')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('webhook_id', 'text', (c) => c.notNull().references('webhooks.id').onDelete('cascade'))
    .addColumn('event', 'text', (c) => c.notNull())
    // JSON: the event as recorded (the body each try renders, the same bytes every time).
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    // 'pending' | 'delivered' | 'failed'
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'text', (c) => c.notNull())
    .addColumn('claimed_until', 'text')
    .addColumn('claimed_by', 'text')
    .addColumn('finished_at', 'text')
    .execute()
  await sql`create index webhook_deliveries_due on webhook_deliveries (next_attempt_at) where state = 'pending'`.execute(db)
  await db.schema.createIndex('webhook_deliveries_webhook').on('webhook_deliveries').columns(['webhook_id', 'state', 'created_at']).execute()
  // Finished deliveries by age: the sweep drops the old ones.
  await sql`create index webhook_deliveries_finished on webhook_deliveries (finished_at) where state <> 'pending'`.execute(db)

  await db.schema.createTable('webhook_attempts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('delivery_id', 'text', (c) => c.notNull().references('webhook_deliveries.id').onDelete('cascade'))
    .addColumn('webhook_id', 'text', (c) => c.notNull().references('webhooks.id').onDelete('cascade'))
    .addColumn('started_at', 'text', (c) => c.notNull())
    // Which try of the delivery (1 for the first).
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('status', 'integer')
    .addColumn('error', 'text')
    // The first bytes of the answer, as text.
    .addColumn('response', 'text', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('webhook_attempts_webhook').on('webhook_attempts').columns(['webhook_id', 'started_at']).execute()
  await db.schema.createIndex('webhook_attempts_delivery').on('webhook_attempts').column('delivery_id').execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('webhook_attempts').execute()
  await db.schema.dropTable('webhook_deliveries').execute()
  await db.schema.dropTable('webhooks').execute()
  await db.schema.dropTable('feed_tokens').execute()
  await db.schema.dropTable('notification_fanouts').execute()
  await db.schema.dropTable('notifications').execute()
  await db.schema.alterTable('packs').dropColumn('followers').execute()
  await db.schema.dropTable('pack_follows').execute()
}
