// The SQL of search's change log (search_changes, migration 0011): triggers append
// a pack's row id for every change search can see, and each instance's in-memory
// copy of the index (search-memory.ts) reads what was appended since it last
// looked. The sweep lets old rows go (src/maintenance/sweep.ts).
import type { Db } from '../db/index.js'

/**
 * How long the log keeps a change: an hour. An instance reads the log before
 * each search, so an instance that searched within the hour finds every change
 * since its last look still there; one that has not searched for longer (or
 * whose last number is before the log's first) reloads its copy from the index
 * instead, which it must be able to do anyway (at start-up). An hour of changes
 * is small beside the index itself, even with the daily trending fold, which
 * logs every pack with downloads a week ago.
 */
export const CHANGE_LOG_KEEP_MS = 60 * 60 * 1000

export interface SearchChange {
  seq: number
  packRowId: string
}

/** Seqs per IN list: well under both engines' bounds on bound parameters. */
const SEQS_PER_QUERY = 500

/** Rows deleted per statement when pruning: a long delete would hold SQLite's one writer up. */
const PRUNE_BATCH = 5000

/** Up to `limit` changes numbered after `afterSeq`, in number order. */
export async function changesAfter(db: Db, afterSeq: number, limit: number): Promise<SearchChange[]> {
  const rows = await db.selectFrom('search_changes').select(['seq', 'pack_row_id'])
    .where('seq', '>', afterSeq).orderBy('seq').limit(limit).execute()
  return rows.map(toChange)
}

/**
 * The changes of these numbers that exist now, in number order: a reader asks again for the numbers it
 * skipped, since on PostgreSQL a number is handed out when its row is written and transactions commit in
 * another order (a number that never comes was rolled back).
 */
export async function changesAmong(db: Db, seqs: readonly number[]): Promise<SearchChange[]> {
  const wanted = [...new Set(seqs)]
  const found: SearchChange[] = []
  for (let i = 0; i < wanted.length; i += SEQS_PER_QUERY) {
    const rows = await db.selectFrom('search_changes').select(['seq', 'pack_row_id'])
      .where('seq', 'in', wanted.slice(i, i + SEQS_PER_QUERY)).execute()
    for (const row of rows) found.push(toChange(row))
  }
  return found.sort((a, b) => a.seq - b.seq)
}

/** The last change's number; 0 when the log is empty. */
export async function lastChange(db: Db): Promise<number> {
  const row = await db.selectFrom('search_changes').select((eb) => eb.fn.max('seq').as('seq')).executeTakeFirst()
  return row?.seq == null ? 0 : Number(row.seq)
}

/** The first change the log still has; undefined when it is empty. Every change before it was pruned. */
export async function firstChange(db: Db): Promise<number | undefined> {
  const row = await db.selectFrom('search_changes').select((eb) => eb.fn.min('seq').as('seq')).executeTakeFirst()
  return row?.seq == null ? undefined : Number(row.seq)
}

/**
 * Deletes the changes logged before `olderThanIso` (ISO 8601 UTC, as src/db/time.ts writes it) and every
 * change numbered before them; how many rows went. Cut by number, not row by row by time: the log stays
 * one unbroken run of numbers from firstChange on, so a reader whose last number is below it knows it missed
 * changes, and a pruned number is never taken for one still being committed (on PostgreSQL a row's time is
 * its transaction's start, and two transactions may log in the other order).
 */
export async function pruneChanges(db: Db, olderThanIso: string): Promise<number> {
  const cut = await db.selectFrom('search_changes').select((eb) => eb.fn.max('seq').as('seq'))
    .where('changed_at', '<', olderThanIso).executeTakeFirst()
  if (cut?.seq == null) return 0
  const last = Number(cut.seq)
  let deleted = 0
  for (;;) {
    const batch = db.selectFrom('search_changes').select('seq').where('seq', '<=', last).orderBy('seq').limit(PRUNE_BATCH)
    const result = await db.deleteFrom('search_changes').where('seq', 'in', batch).executeTakeFirst()
    const n = Number(result.numDeletedRows)
    deleted += n
    if (n < PRUNE_BATCH) return deleted
  }
}

function toChange(row: { seq: number | string; pack_row_id: string }): SearchChange {
  return { seq: Number(row.seq), packRowId: row.pack_row_id }
}
