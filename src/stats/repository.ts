// The SQL of the staff statistics: row counts and what the stored files
// weigh. The small tables are counted in one round trip of scalar subqueries
// (SQLite and PostgreSQL both accept them without a FROM clause). The large
// ones (users, packs, versions, files): at 1,000,000 users and 300,000 files a
// whole count took 24 ms and the files' sum 40 ms in one piece, and on SQLite,
// which answers on the event loop's thread, every other request waited that
// long. There they are counted in windows of WINDOW rows in storage (rowid)
// order, about 2 ms each, and the event loop gets a turn between them
// (src/db/index.ts, Turns). PostgreSQL counts on its own server: one query.
import { SqliteAdapter, sql } from 'kysely'
import type { Db } from '../db/index.js'

const WINDOW = 20_000

type LargeTable = 'users' | 'packs' | 'versions' | 'files'

/** Rows of `table`, and the sum of `column` over them. */
async function countLarge(db: Db, table: LargeTable, column?: 'downloads' | 'size'): Promise<{ rows: number; sum: number }> {
  const summed = column ? sql`coalesce(sum(${sql.ref(column)}), 0)` : sql`0`
  if (!(db.getExecutor().adapter instanceof SqliteAdapter)) {
    const whole = await sql<{ n: number | string; total: number | string }>`select count(*) as n, ${summed} as total from ${sql.table(table)}`.execute(db)
    // PostgreSQL returns count(*) and sum(bigint) as strings.
    return { rows: Number(whole.rows[0]?.n ?? 0), sum: Number(whole.rows[0]?.total ?? 0) }
  }
  let rows = 0
  let sum = 0
  let after = 0
  for (;;) {
    const window = await sql<{ n: number; total: number; last: number | null }>`
      select count(*) as n, ${summed} as total, max(rowid) as last
      from (select rowid${column ? sql`, ${sql.ref(column)}` : sql``} from ${sql.table(table)} where rowid > ${after} order by rowid limit ${WINDOW})`
      .execute(db)
    const row = window.rows[0]
    rows += Number(row?.n ?? 0)
    sum += Number(row?.total ?? 0)
    if (Number(row?.n ?? 0) < WINDOW || row?.last == null) return { rows, sum }
    after = row.last
  }
}

export interface RowCounts {
  users: number
  packs: number
  versions: number
  pending_uploads: number
  drafts: number
  /** Tokens that still authenticate: neither revoked nor expired. */
  api_tokens: number
  /** Counted downloads of the packs on the site, all time (packs.downloads). */
  downloads: number
  /** Downloads counted on the current UTC day (download_seen rows of that day: once per client and version). */
  downloads_today: number
}

export async function countRows(db: Db, now: string): Promise<RowCounts> {
  const users = await countLarge(db, 'users')
  const packs = await countLarge(db, 'packs', 'downloads')
  const versions = await countLarge(db, 'versions')
  const row = await db
    .selectNoFrom((eb) => [
      eb.selectFrom('uploads').select(eb.fn.countAll<number | string>().as('n')).as('pending_uploads'),
      eb.selectFrom('drafts').select(eb.fn.countAll<number | string>().as('n')).as('drafts'),
      eb
        .selectFrom('api_tokens')
        .select(eb.fn.countAll<number | string>().as('n'))
        .where('revoked_at', 'is', null)
        .where((w) => w.or([w('expires_at', 'is', null), w('expires_at', '>', now)]))
        .as('api_tokens'),
      // `now` is ISO 8601 UTC: its first ten characters are the day download_seen stores.
      eb.selectFrom('download_seen').select(eb.fn.countAll<number | string>().as('n')).where('day', '=', now.slice(0, 10)).as('downloads_today'),
    ])
    .executeTakeFirstOrThrow()
  // PostgreSQL returns count(*) as a bigint string.
  return {
    users: users.rows,
    packs: packs.rows,
    versions: versions.rows,
    pending_uploads: Number(row.pending_uploads),
    drafts: Number(row.drafts),
    api_tokens: Number(row.api_tokens),
    downloads: packs.sum,
    downloads_today: Number(row.downloads_today),
  }
}

export interface StoredBytes {
  files: number
  bytes: number
}

/** File rows and the sum of their sizes: what the store holds for the site. */
export async function storedBytes(db: Db): Promise<StoredBytes> {
  const { rows, sum } = await countLarge(db, 'files', 'size')
  return { files: rows, bytes: sum }
}

/**
 * Uploads waiting to be published or swept (GET /metrics' queue of pending uploads). Each user holds at most
 * PACKS_MAX_PENDING_UPLOADS and each expires after PACKS_UPLOAD_TTL (the sweep removes it), so the table stays
 * small and counting it is cheap.
 */
export async function countPendingUploads(db: Db): Promise<number> {
  const row = await db.selectFrom('uploads').select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow()
  return Number(row.n)
}
