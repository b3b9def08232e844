import { sql, type Kysely } from 'kysely'

// How many packs carry each tag, kept on the tag. Tag
// suggestions and the browse page's tag chips ordered tags by a count of
// pack_tags made on every request: at 100,000 packs that was hundreds of
// milliseconds a request. A trigger on pack_tags keeps the count, so every
// path that adds or removes a pack's tag (publish, edit, a pack's deletion by
// cascade, an import, a test's own rows) keeps it right without knowing.
export async function up(db: Kysely<unknown>, engine: 'sqlite' | 'postgres' = 'sqlite'): Promise<void> {
  await db.schema.alterTable('tags').addColumn('uses', 'integer', (c) => c.notNull().defaultTo(0)).execute()
  await sql`update tags set uses = (select count(*) from pack_tags where pack_tags.tag_id = tags.id)`.execute(db)
  await sql`create index tags_uses on tags (uses desc, name_lower)`.execute(db)
  if (engine === 'postgres') {
    await sql`
      create function packs_count_tag_uses() returns trigger language plpgsql as $$
      begin
        if tg_op = 'INSERT' then
          update tags set uses = uses + 1 where id = new.tag_id;
          return new;
        end if;
        update tags set uses = uses - 1 where id = old.tag_id;
        return old;
      end $$`.execute(db)
    await sql`create trigger pack_tags_counted after insert or delete on pack_tags for each row execute function packs_count_tag_uses()`.execute(db)
  } else {
    await sql`create trigger pack_tags_counted_insert after insert on pack_tags begin update tags set uses = uses + 1 where id = new.tag_id; end`.execute(db)
    await sql`create trigger pack_tags_counted_delete after delete on pack_tags begin update tags set uses = uses - 1 where id = old.tag_id; end`.execute(db)
  }
}

export async function down(db: Kysely<unknown>, engine: 'sqlite' | 'postgres' = 'sqlite'): Promise<void> {
  if (engine === 'postgres') {
    await sql`drop trigger pack_tags_counted on pack_tags`.execute(db)
    await sql`drop function packs_count_tag_uses()`.execute(db)
  } else {
    await sql`drop trigger pack_tags_counted_insert`.execute(db)
    await sql`drop trigger pack_tags_counted_delete`.execute(db)
  }
  await sql`drop index tags_uses`.execute(db)
  await db.schema.alterTable('tags').dropColumn('uses').execute()
}
