// A site's rows and stored bytes read straight from its database and store
// (not through Packs' queries), in a form that compares equal for the same
// contents on either engine: test/e2e/transfer.test.ts (export and import)
// and test/e2e/backup-restore.test.ts (backup and restore) compare a site
// before and after it is moved with these.
import { createHash } from 'node:crypto'
import type { Db } from '../../src/db/index.js'

/** The SHA-256 (hex) of everything `stream` gives: a stored file's bytes, say. */
export async function sha256Of(stream: AsyncIterable<unknown>): Promise<string> {
  const hash = createHash('sha256')
  for await (const chunk of stream) hash.update(chunk as Buffer)
  return hash.digest('hex')
}

/**
 * Every row of `table`, each as JSON with its columns in name order, the rows
 * sorted: the engines return rows in no particular order. `omit`: columns
 * left out of the comparison.
 */
export async function sortedRows(db: Db, table: string, omit: readonly string[] = []): Promise<string[]> {
  const rows = await db.selectFrom(table as never).selectAll().execute()
  const comparable = (row: object) => Object.entries(row).filter(([column]) => !omit.includes(column)).sort(([a], [b]) => a.localeCompare(b))
  return rows.map((row) => JSON.stringify(Object.fromEntries(comparable(row as object)))).sort()
}
