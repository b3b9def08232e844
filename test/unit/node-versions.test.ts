// Which SQLite driver each Node.js line loads (docs/running.md, "Node.js versions"): better-sqlite3 13 on Node 22 and
// later (12 aborts Node 24.19+ when a statement is collected), 12 through the better-sqlite3-node20 alias on
// Node 20 (13 crashes there). This process runs one of them; CI runs the suite on each line.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { loadSqlite } from '../../src/db/index.js'

const require = createRequire(import.meta.url)
const onNode20 = Number(process.versions.node.split('.')[0]) < 22

test('the driver this Node.js line needs is the one loaded, and it works', async () => {
  const SQLite = await loadSqlite()
  const expected = onNode20 ? 'better-sqlite3-node20' : 'better-sqlite3'
  assert.equal(SQLite, require(expected), `${expected} on Node.js ${process.versions.node}`)
  const version = (require(`${expected}/package.json`) as { version: string }).version
  assert.equal(version.split('.')[0], onNode20 ? '12' : '13')
  const db = new SQLite(':memory:')
  // Many statements made and dropped, then collected: what aborted Node 24 with better-sqlite3 12.
  for (let i = 0; i < 5000; i++) db.prepare(`select ${i} as n`).get()
  assert.equal((db.prepare('select 1 as one').get() as { one: number }).one, 1)
  db.close()
})
