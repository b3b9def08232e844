import { sql, type Kysely } from 'kysely'

// The packs' listing at the size of a real site. At
// 100,000 packs and 1,000,000 users the browse page took 600-800 ms: every
// listing counted its matches by scanning the packs table and looking up
// each owner (is the account disabled?), a title search scanned every title,
// and a deep page read and joined every row before it.
//
// - packs.owner_disabled copies users.disabled_at onto the owner's packs (kept
//   by triggers), so "listed" (not hidden, owner not disabled) is a condition
//   on the packs row alone, and partial indexes hold exactly the listed packs
//   in each order the site sorts by. A page's ids and the count then come
//   from an index alone.
// - The title search has an index for "contains": on PostgreSQL a pg_trgm GIN
//   index on lower(title) (the planner uses it for the LIKE the query already
//   has); on SQLite an FTS5 table with the trigram tokenizer, keyed by
//   packs.search_seq, a stable integer (a plain rowid may change on VACUUM).
//   search_seq exists on both engines so exports have the same columns; only
//   SQLite fills it. Both derived columns are left out of exports and
//   recomputed by the triggers on import.
// - pack_counts keeps how many packs are listed, in all ('*') and per
//   category (by its id), so the unfiltered and category listings' totals are
//   one row, not a count of 100,000 index entries (5 ms a page view at that
//   size). Kept by triggers on packs for every insert, delete and change of
//   hidden_at, owner_disabled or category_id.
// - Tag suggestions walk the tags by use; tags_uses gains category_id so a
//   suggestion's conditions (name or category contains the query) are read from
//   the index, not from each of 10,000 rows (7.7 ms to 1.8 ms a query).
const LISTED = sql`hidden_at is null and owner_disabled = 0`

export async function up(db: Kysely<unknown>, engine: 'sqlite' | 'postgres' = 'sqlite'): Promise<void> {
  await db.schema.alterTable('packs').addColumn('owner_disabled', 'integer', (c) => c.notNull().defaultTo(0)).execute()
  await db.schema.alterTable('packs').addColumn('search_seq', 'integer').execute()
  await sql`update packs set owner_disabled = 1 where owner_id in (select id from users where disabled_at is not null)`.execute(db)

  // Literal conditions (not bound parameters): a query uses a partial index only when it repeats them.
  await sql`create index packs_listed_updated on packs (updated_at desc, id) where ${LISTED}`.execute(db)
  await sql`create index packs_listed_created on packs (created_at desc, id) where ${LISTED}`.execute(db)
  await sql`create index packs_listed_downloads on packs (downloads desc, updated_at desc, id) where ${LISTED}`.execute(db)
  await sql`create index packs_listed_category on packs (category_id, updated_at desc, id) where ${LISTED}`.execute(db)

  await sql`drop index tags_uses`.execute(db)
  await sql`create index tags_uses on tags (uses desc, name_lower, category_id)`.execute(db)

  await db.schema.createTable('pack_counts')
    .addColumn('scope', 'text', (c) => c.primaryKey())
    .addColumn('listed', 'integer', (c) => c.notNull())
    .execute()
  await fillPackCounts(db)

  if (engine === 'postgres') {
    await sql`
      create function packs_count_listed() returns trigger language plpgsql as $$
      begin
        if tg_op in ('UPDATE', 'DELETE') and old.hidden_at is null and old.owner_disabled = 0 then
          update pack_counts set listed = listed - 1 where scope = '*' or scope = old.category_id;
        end if;
        if tg_op in ('UPDATE', 'INSERT') and new.hidden_at is null and new.owner_disabled = 0 then
          insert into pack_counts (scope, listed) values ('*', 1) on conflict (scope) do update set listed = pack_counts.listed + 1;
          if new.category_id is not null then
            insert into pack_counts (scope, listed) values (new.category_id, 1) on conflict (scope) do update set listed = pack_counts.listed + 1;
          end if;
        end if;
        return null;
      end $$`.execute(db)
    await sql`create trigger packs_counted after insert or delete or update of hidden_at, owner_disabled, category_id on packs
      for each row execute function packs_count_listed()`.execute(db)
    await sql`
      create function packs_set_owner_disabled() returns trigger language plpgsql as $$
      begin
        new.owner_disabled := case when exists (select 1 from users where id = new.owner_id and disabled_at is not null) then 1 else 0 end;
        return new;
      end $$`.execute(db)
    await sql`create trigger packs_owner_disabled before insert or update of owner_id on packs for each row execute function packs_set_owner_disabled()`.execute(db)
    await sql`
      create function users_copy_disabled_to_packs() returns trigger language plpgsql as $$
      begin
        if new.disabled_at is distinct from old.disabled_at then
          update packs set owner_disabled = case when new.disabled_at is null then 0 else 1 end where owner_id = new.id;
        end if;
        return new;
      end $$`.execute(db)
    await sql`create trigger users_disabled_packs after update of disabled_at on users for each row execute function users_copy_disabled_to_packs()`.execute(db)
    // pg_trgm ships with PostgreSQL (contrib) and is a trusted extension: the database's owner may create it.
    // Where it is missing or not allowed, searches still work, by scanning; the savepoint keeps the migration alive.
    await sql`savepoint packs_title_trgm`.execute(db)
    try {
      await sql`create extension if not exists pg_trgm`.execute(db)
      await sql`create index packs_title_trgm on packs using gin (lower(title) gin_trgm_ops)`.execute(db)
      await sql`release savepoint packs_title_trgm`.execute(db)
    } catch {
      await sql`rollback to savepoint packs_title_trgm`.execute(db)
    }
    return
  }

  // Triggers within triggers: the owner_disabled trigger's update below fires packs_counted_update, so a
  // pack inserted for a disabled owner is counted and uncounted, in either order.
  const countNew = sql`
    insert into pack_counts (scope, listed) values ('*', 1) on conflict (scope) do update set listed = listed + 1;
    insert into pack_counts (scope, listed) select new.category_id, 1 where new.category_id is not null
      on conflict (scope) do update set listed = listed + 1;`
  const uncountOld = sql`update pack_counts set listed = listed - 1 where scope = '*' or scope = old.category_id;`
  await sql`create trigger packs_counted_insert after insert on packs when new.hidden_at is null and new.owner_disabled = 0
    begin ${countNew} end`.execute(db)
  await sql`create trigger packs_counted_delete after delete on packs when old.hidden_at is null and old.owner_disabled = 0
    begin ${uncountOld} end`.execute(db)
  await sql`create trigger packs_uncounted_update after update of hidden_at, owner_disabled, category_id on packs
    when old.hidden_at is null and old.owner_disabled = 0 begin ${uncountOld} end`.execute(db)
  await sql`create trigger packs_counted_update after update of hidden_at, owner_disabled, category_id on packs
    when new.hidden_at is null and new.owner_disabled = 0 begin ${countNew} end`.execute(db)

  await sql`create trigger packs_owner_disabled after insert on packs
    when exists (select 1 from users where id = new.owner_id and disabled_at is not null)
    begin update packs set owner_disabled = 1 where id = new.id; end`.execute(db)
  await sql`create trigger packs_owner_changed after update of owner_id on packs
    begin update packs set owner_disabled = exists (select 1 from users where id = new.owner_id and disabled_at is not null) where id = new.id; end`.execute(db)
  await sql`create trigger users_disabled_packs after update of disabled_at on users
    begin update packs set owner_disabled = (new.disabled_at is not null) where owner_id = new.id; end`.execute(db)

  await sql`update packs set search_seq = rowid`.execute(db)
  await sql`create unique index packs_search_seq on packs (search_seq)`.execute(db)
  await sql`create virtual table packs_title_search using fts5(title, tokenize = 'trigram')`.execute(db)
  await sql`insert into packs_title_search (rowid, title) select search_seq, title from packs`.execute(db)
  await sql`create trigger packs_search_insert after insert on packs begin
    update packs set search_seq = (select coalesce(max(search_seq), 0) + 1 from packs) where id = new.id;
    insert into packs_title_search (rowid, title) select search_seq, title from packs where id = new.id;
  end`.execute(db)
  await sql`create trigger packs_search_title after update of title on packs begin
    update packs_title_search set title = new.title where rowid = new.search_seq;
  end`.execute(db)
  await sql`create trigger packs_search_delete after delete on packs begin
    delete from packs_title_search where rowid = old.search_seq;
  end`.execute(db)
}

/** Sets pack_counts from the packs themselves: here, and after an import (whose rows the triggers counted one by one). */
export async function fillPackCounts(db: Kysely<unknown>): Promise<void> {
  await sql`delete from pack_counts`.execute(db)
  await sql`insert into pack_counts (scope, listed)
    select '*', count(*) from packs where ${LISTED}
    union all
    select category_id, count(*) from packs where ${LISTED} and category_id is not null group by category_id`.execute(db)
}

export async function down(db: Kysely<unknown>, engine: 'sqlite' | 'postgres' = 'sqlite'): Promise<void> {
  if (engine === 'postgres') {
    await sql`drop trigger packs_counted on packs`.execute(db)
    await sql`drop function packs_count_listed()`.execute(db)
    await sql`drop index if exists packs_title_trgm`.execute(db)
    await sql`drop trigger users_disabled_packs on users`.execute(db)
    await sql`drop function users_copy_disabled_to_packs()`.execute(db)
    await sql`drop trigger packs_owner_disabled on packs`.execute(db)
    await sql`drop function packs_set_owner_disabled()`.execute(db)
  } else {
    for (const trigger of ['packs_counted_insert', 'packs_counted_delete', 'packs_uncounted_update', 'packs_counted_update', 'packs_search_delete', 'packs_search_title', 'packs_search_insert', 'users_disabled_packs', 'packs_owner_changed', 'packs_owner_disabled']) {
      await sql`drop trigger ${sql.id(trigger)}`.execute(db)
    }
    await sql`drop table packs_title_search`.execute(db)
    await sql`drop index packs_search_seq`.execute(db)
  }
  await db.schema.dropTable('pack_counts').execute()
  await sql`drop index tags_uses`.execute(db)
  await sql`create index tags_uses on tags (uses desc, name_lower)`.execute(db)
  for (const index of ['packs_listed_category', 'packs_listed_downloads', 'packs_listed_created', 'packs_listed_updated']) {
    await sql`drop index ${sql.id(index)}`.execute(db)
  }
  await db.schema.alterTable('packs').dropColumn('search_seq').execute()
  await db.schema.alterTable('packs').dropColumn('owner_disabled').execute()
}
