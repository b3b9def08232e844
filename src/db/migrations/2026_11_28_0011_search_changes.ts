import { sql, type Kysely } from 'kysely'

// A log of what search can see change, so that every instance's in-memory copy of the search index
// (src/packs/search-memory.ts) stays current by reading what was appended since it last looked, instead of
// reloading the index:
//
// - search_changes: one row per change, numbered in the order written (seq), naming the pack's row id and
//   when (ISO 8601 UTC with milliseconds, as src/db/time.ts writes times; the sweep drops rows older than
//   an hour, src/packs/search-changes-repository.ts). No foreign key: the row of a deleted pack must stay,
//   it is how the copies learn the pack is gone.
// - Triggers append the rows, in the transaction of the change, so a change cannot be committed without
//   its row, whichever code path made it:
//   - pack_search: every insert, update and delete of a pack's entry. Changes of a pack's tags, team,
//     versions (yanks, new and deleted versions) and owner reach search through a rewrite of this row, in
//     the same transaction (reindexPack), and so do its releases (pack_releases, written beside it). No
//     condition on the values: a rewrite may leave this row as it was while the rows beside it changed
//     (a member whose name has no words). On PostgreSQL the text document (a tsvector written by a second
//     update right after the row) is left out: the copies do not read it, and the rewrite is logged already.
//   - packs: a delete, and an update of a column search reads of the pack's own row (listed or not, its
//     sorts, its title and category, whose pack it is and its name), when its value changes. An account
//     disabled or enabled reaches here through packs.owner_disabled (migration 0007's triggers).
// - The log is derived data: not exported (src/maintenance/transfer-repository.ts); an import's writes
//   log their packs like any others.
//
// On PostgreSQL a row's seq is handed out when the row is written, and transactions commit in another
// order, so a reader may see 15 before 14: search-memory.ts asks again for the numbers it skipped.

/** The columns of packs that search reads (src/packs/search-repository.ts, readIndexEntries and the SQL search). */
const PACK_COLUMNS = ['hidden_at', 'owner_disabled', 'downloads', 'updated_at', 'created_at', 'title', 'category_id', 'owner_id', 'namespace', 'pack_id'] as const

/** The columns of pack_search a reader reads; on PostgreSQL its document column is not among them. */
const ENTRY_COLUMNS = ['public_versions', 'kinds', 'trending', 'terms', 'title_words', 'names_words', 'tags_words', 'category_words', 'summary_words', 'description_words'] as const

const columnList = (columns: readonly string[]) => sql.join(columns.map((c) => sql.id(c)))
const anyChanged = (columns: readonly string[], differs: 'is distinct from' | 'is not') =>
  sql.join(columns.map((c) => sql`old.${sql.id(c)} ${sql.raw(differs)} new.${sql.id(c)}`), sql` or `)

export async function up(db: Kysely<unknown>, engine: 'sqlite' | 'postgres' = 'sqlite'): Promise<void> {
  if (engine === 'postgres') {
    // The time the change's transaction began, in the format of src/db/time.ts.
    await sql`create table search_changes (
      seq bigint generated always as identity primary key,
      pack_row_id text collate "C" not null,
      changed_at text not null default to_char(now() at time zone 'utc', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
    )`.execute(db)
  } else {
    // AUTOINCREMENT: a number is never used twice, even after the sweep emptied the table (a plain integer
    // key would hand out max + 1 again, and a reader that saw the old row would skip the new one).
    await sql`create table search_changes (
      seq integer primary key autoincrement,
      pack_row_id text not null,
      changed_at text not null default (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
    )`.execute(db)
  }
  await db.schema.createIndex('search_changes_changed_at').on('search_changes').column('changed_at').execute()

  if (engine === 'postgres') {
    await sql`
      create function search_changes_log_pack() returns trigger language plpgsql as $$
      begin
        insert into search_changes (pack_row_id) values (case when tg_op = 'DELETE' then old.id else new.id end);
        return null;
      end $$`.execute(db)
    await sql`
      create function search_changes_log_entry() returns trigger language plpgsql as $$
      begin
        insert into search_changes (pack_row_id) values (case when tg_op = 'DELETE' then old.pack_row_id else new.pack_row_id end);
        return null;
      end $$`.execute(db)
    await sql`create trigger search_changes_entry after insert or delete or update of ${columnList(ENTRY_COLUMNS)} on pack_search
      for each row execute function search_changes_log_entry()`.execute(db)
    // An UPDATE OF trigger fires whenever the column is set, even to its own value (a yank rewrites
    // updated_at unchanged to take the pack's row lock): the condition keeps such writes out of the log.
    await sql`create trigger search_changes_pack_update after update of ${columnList(PACK_COLUMNS)} on packs
      for each row when (${anyChanged(PACK_COLUMNS, 'is distinct from')}) execute function search_changes_log_pack()`.execute(db)
    await sql`create trigger search_changes_pack_delete after delete on packs
      for each row execute function search_changes_log_pack()`.execute(db)
    return
  }
  await sql`create trigger search_changes_entry_insert after insert on pack_search begin
    insert into search_changes (pack_row_id) values (new.pack_row_id);
  end`.execute(db)
  await sql`create trigger search_changes_entry_update after update on pack_search begin
    insert into search_changes (pack_row_id) values (new.pack_row_id);
  end`.execute(db)
  await sql`create trigger search_changes_entry_delete after delete on pack_search begin
    insert into search_changes (pack_row_id) values (old.pack_row_id);
  end`.execute(db)
  // IS NOT compares nulls as values (hidden_at, category_id).
  await sql`create trigger search_changes_pack_update after update of ${columnList(PACK_COLUMNS)} on packs
    when ${anyChanged(PACK_COLUMNS, 'is not')} begin
    insert into search_changes (pack_row_id) values (new.id);
  end`.execute(db)
  await sql`create trigger search_changes_pack_delete after delete on packs begin
    insert into search_changes (pack_row_id) values (old.id);
  end`.execute(db)
}

export async function down(db: Kysely<unknown>, engine: 'sqlite' | 'postgres' = 'sqlite'): Promise<void> {
  if (engine === 'postgres') {
    await sql`drop trigger search_changes_entry on pack_search`.execute(db)
    await sql`drop trigger search_changes_pack_update on packs`.execute(db)
    await sql`drop trigger search_changes_pack_delete on packs`.execute(db)
    await sql`drop function search_changes_log_entry()`.execute(db)
    await sql`drop function search_changes_log_pack()`.execute(db)
  } else {
    for (const trigger of ['search_changes_entry_insert', 'search_changes_entry_update', 'search_changes_entry_delete', 'search_changes_pack_update', 'search_changes_pack_delete']) {
      await sql`drop trigger ${sql.id(trigger)}`.execute(db)
    }
  }
  await db.schema.dropTable('search_changes').execute()
}
