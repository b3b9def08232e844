// Short ids: 8 base62 characters for each pack and version, beside its UUID.
// They are what the Modrinth-compatible API (src/modrinth/) names projects and
// versions with: Modrinth's ids have this shape, and its client libraries
// check it (@xmcl/modrinth drops any other id before asking). Random, not
// derived from the UUID, so they say nothing about it; the unique indexes of
// migration 0004 keep them apart (62^8 ≈ 2·10^14 values: at a million rows a
// new id collides with odds of about 1 in 200 million).
import { randomInt } from 'node:crypto'
import type { Kysely } from 'kysely'
import type { Database } from './schema.js'

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
export const SHORT_ID_LENGTH = 8
/** The shape of a short id, anchored; linear (a fixed-length class). */
export const SHORT_ID_PATTERN = '^[0-9A-Za-z]{8}$'

export function newShortId(): string {
  let id = ''
  for (let i = 0; i < SHORT_ID_LENGTH; i++) id += BASE62[randomInt(62)]
  return id
}

/** Rows updated per statement while filling: bounded memory whatever the site's size. */
const FILL_PAGE = 1000

/**
 * Gives every pack and version that has no short id one. Run by migration
 * 0004 for the rows of an upgraded site, and after an import of an export
 * made before it; costs one indexed probe per table when nothing is missing.
 */
export async function fillMissingShortIds(db: Kysely<Database>): Promise<number> {
  let filled = 0
  for (const table of ['packs', 'versions'] as const) {
    for (;;) {
      const rows = await db.selectFrom(table).select('id').where('short_id', 'is', null).limit(FILL_PAGE).execute()
      if (rows.length === 0) break
      for (const row of rows) {
        await db.updateTable(table).set({ short_id: newShortId() }).where('id', '=', row.id).execute()
      }
      filled += rows.length
    }
  }
  return filled
}
