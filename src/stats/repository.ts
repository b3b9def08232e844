// The SQL of the staff statistics: row counts in one round trip of scalar
// subqueries (SQLite and PostgreSQL both accept them without a FROM clause),
// and what the stored files weigh.
import type { Db } from '../db/index.js'

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
  const row = await db
    .selectNoFrom((eb) => [
      eb.selectFrom('users').select(eb.fn.countAll<number | string>().as('n')).as('users'),
      eb.selectFrom('packs').select(eb.fn.countAll<number | string>().as('n')).as('packs'),
      eb.selectFrom('versions').select(eb.fn.countAll<number | string>().as('n')).as('versions'),
      eb.selectFrom('uploads').select(eb.fn.countAll<number | string>().as('n')).as('pending_uploads'),
      eb.selectFrom('drafts').select(eb.fn.countAll<number | string>().as('n')).as('drafts'),
      eb
        .selectFrom('api_tokens')
        .select(eb.fn.countAll<number | string>().as('n'))
        .where('revoked_at', 'is', null)
        .where((w) => w.or([w('expires_at', 'is', null), w('expires_at', '>', now)]))
        .as('api_tokens'),
      eb.selectFrom('packs').select((e) => e.fn.coalesce(e.fn.sum<number | string>('downloads'), e.lit(0)).as('n')).as('downloads'),
      // `now` is ISO 8601 UTC: its first ten characters are the day download_seen stores.
      eb.selectFrom('download_seen').select(eb.fn.countAll<number | string>().as('n')).where('day', '=', now.slice(0, 10)).as('downloads_today'),
    ])
    .executeTakeFirstOrThrow()
  // PostgreSQL returns count(*) as a bigint string.
  return {
    users: Number(row.users),
    packs: Number(row.packs),
    versions: Number(row.versions),
    pending_uploads: Number(row.pending_uploads),
    drafts: Number(row.drafts),
    api_tokens: Number(row.api_tokens),
    downloads: Number(row.downloads),
    downloads_today: Number(row.downloads_today),
  }
}

export interface StoredBytes {
  files: number
  bytes: number
}

/** File rows and the sum of their sizes: what the store holds for the site. */
export async function storedBytes(db: Db): Promise<StoredBytes> {
  const row = await db
    .selectFrom('files')
    .select((eb) => [eb.fn.countAll<number | string>().as('files'), eb.fn.coalesce(eb.fn.sum<number | string>('size'), eb.lit(0)).as('bytes')])
    .executeTakeFirstOrThrow()
  // PostgreSQL returns count(*) and sum(bigint) as strings.
  return { files: Number(row.files), bytes: Number(row.bytes) }
}
