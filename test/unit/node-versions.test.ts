// Which Node.js lines the embedded database runs on (README, "Node.js versions"): on 24 it refuses in one
// line instead of letting better-sqlite3 abort the process at its first garbage collection.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ConfigError } from '../../src/config/index.js'
import { loadSqlite } from '../../src/db/index.js'

test('SQLite on Node.js 24 is refused with the reason and what to use instead', async () => {
  for (const version of ['24.0.0', '24.19.0', '24.21.0']) {
    await assert.rejects(loadSqlite(version), (error: unknown) => {
      assert.ok(error instanceof ConfigError)
      assert.match(error.message, new RegExp(`^SQLite cannot run on Node\\.js ${version.replaceAll('.', '\\.')}: .*nodejs/node#65446.*Use Node\\.js 22 or 26, or PostgreSQL`))
      assert.ok(!error.message.includes('\n'), 'one line')
      return true
    })
  }
})

test('on the other lines the driver loads (this process runs one of them)', async () => {
  const SQLite = await loadSqlite()
  const db = new SQLite(':memory:')
  assert.equal((db.prepare('select 1 as one').get() as { one: number }).one, 1)
  db.close()
})
