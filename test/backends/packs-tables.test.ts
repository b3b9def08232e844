// The tables `packs restore` takes for Packs' own (src/db/index.ts, packsTables) are exactly those this
// release's migrations create, on the engine of the backend combination: a migration that adds a table
// without listing it would make every restore onto a current site refuse that table as another
// application's; one listed but never created would let a foreign table of that name be dropped.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { packsTables } from '../../src/db/index.js'
import { postgresTables } from '../../src/maintenance/backup-postgres.js'
import { sqliteTables } from '../../src/maintenance/backup-sqlite.js'
import { openTestDatabase, TEST_DATABASE_URL, type OpenTestDatabase } from '../helpers/database.js'

let database: OpenTestDatabase
before(async () => { database = await openTestDatabase() })
after(() => database.close())

test('packsTables lists every table the migrations create, and nothing else', async () => {
  const engine = TEST_DATABASE_URL ? 'postgres' : 'sqlite'
  const created = engine === 'postgres' ? await postgresTables(database.db) : await sqliteTables(database.db)
  assert.deepEqual(created, [...packsTables(engine)].sort())
})
