// Row counts for the staff statistics: one round trip of scalar subqueries,
// which SQLite and PostgreSQL both accept without a FROM clause.
import type { Db } from '../db/index.js'

export interface RowCounts {
  users: number
  packs: number
  versions: number
  drafts: number
  /** Tokens that still authenticate: neither revoked nor expired. */
  api_tokens: number
}

export async function countRows(db: Db, now: string): Promise<RowCounts> {
  const row = await db
    .selectNoFrom((eb) => [
      eb.selectFrom('users').select(eb.fn.countAll<number | string>().as('n')).as('users'),
      eb.selectFrom('packs').select(eb.fn.countAll<number | string>().as('n')).as('packs'),
      eb.selectFrom('versions').select(eb.fn.countAll<number | string>().as('n')).as('versions'),
      eb.selectFrom('drafts').select(eb.fn.countAll<number | string>().as('n')).as('drafts'),
      eb
        .selectFrom('api_tokens')
        .select(eb.fn.countAll<number | string>().as('n'))
        .where('revoked_at', 'is', null)
        .where((w) => w.or([w('expires_at', 'is', null), w('expires_at', '>', now)]))
        .as('api_tokens'),
    ])
    .executeTakeFirstOrThrow()
  // PostgreSQL returns count(*) as a bigint string.
  return {
    users: Number(row.users),
    packs: Number(row.packs),
    versions: Number(row.versions),
    drafts: Number(row.drafts),
    api_tokens: Number(row.api_tokens),
  }
}
