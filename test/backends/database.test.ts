// The query layer behaves the same on SQLite and PostgreSQL: this file runs on
// the engine of the backend combination (PACKS_TEST_DATABASE_URL selects
// PostgreSQL, see test/helpers/database.ts, whose databases have a
// locale-aware default collation), and checks what engines disagree on by
// default: text order, LIKE wildcards, bigint and count() types.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { migrateToLatest, openDatabase } from '../../src/db/index.js'
import { insertUser, searchUsernames } from '../../src/accounts/users-repository.js'
import { insertFile } from '../../src/files/repository.js'
import { countRows, storedBytes } from '../../src/stats/repository.js'
import { insertCategory, insertTag, listCategories, recountTagUses, suggestTags } from '../../src/packs/tags-repository.js'
import { ConfigError } from '../../src/config/index.js'
import * as shortIds from '../../src/db/migrations/2026_11_26_0004_short_ids.js'
import { onPostgres, openTestDatabase, TEST_DATABASE_URL, type OpenTestDatabase } from '../helpers/database.js'

describe('the query layer on this engine', () => {
  let database: OpenTestDatabase
  let db: OpenTestDatabase['db']
  before(async () => {
    database = await openTestDatabase()
    db = database.db
    for (const name of ['a_b', 'ab', 'a-c', 'B', 'a', 'A%z', 'é']) await insertUser(db, name, 'hash', false)
  })
  after(() => database.close())

  test('usernames come in code point order of their lower-case form, as on SQLite', async () => {
    // A locale collation would give a, a_b, a-c, ab (punctuation ignored) and mix cases.
    assert.deepEqual(await searchUsernames(db, '', 20), ['a', 'A%z', 'a-c', 'a_b', 'ab', 'B', 'é'])
  })

  test('the username prefix search treats % and _ as plain characters', async () => {
    assert.deepEqual(await searchUsernames(db, 'a', 20), ['a', 'A%z', 'a-c', 'a_b', 'ab'])
    assert.deepEqual(await searchUsernames(db, 'a_', 20), ['a_b'])
    assert.deepEqual(await searchUsernames(db, 'A%', 20), ['A%z'])
    assert.deepEqual(await searchUsernames(db, 'b', 20), ['B'])
    assert.deepEqual(await searchUsernames(db, 'É', 20), ['é'])
    assert.deepEqual(await searchUsernames(db, 'c', 20), [])
  })

  test('sizes (bigint) and counts are numbers', async () => {
    const big = 5 * 1024 ** 3 // past 32 bits: stored as bigint
    const id = randomUUID()
    await insertFile(db, { id, storageKey: id, filename: 'big.zip', contentType: 'application/zip', size: big, sha256: '0'.repeat(64), sha1: '0'.repeat(40) })
    const bytes = await storedBytes(db)
    assert.equal(typeof bytes.bytes, 'number')
    assert.equal(typeof bytes.files, 'number')
    assert.ok(bytes.bytes >= big)
    const counts = await countRows(db, new Date().toISOString())
    assert.equal(counts.users, 7)
    assert.equal(typeof counts.packs, 'number')
  })

  test('tag suggestions and categories sort by code point and match LIKE wildcards literally', async () => {
    const category = await insertCategory(db, { key: 'misc', name: 'Misc', color: '#112233' })
    await insertCategory(db, { key: 'under', name: '_under', color: '#112233' })
    for (const name of ['x-ray', 'x_ray', 'Xray', '100%']) await insertTag(db, { name, categoryId: category.id })
    assert.deepEqual((await suggestTags(db, 'x', 10)).map((t) => t.name), ['x-ray', 'x_ray', 'Xray'])
    assert.deepEqual((await suggestTags(db, 'x_', 10)).map((t) => t.name), ['x_ray'])
    assert.deepEqual((await suggestTags(db, '0%', 10)).map((t) => t.name), ['100%'])
    assert.deepEqual((await listCategories(db)).map((c) => c.key), ['under', 'misc'])
  })
})

describe('connecting', () => {
  test('an unreachable PostgreSQL server is a one-line ConfigError at start', async () => {
    // Port 1 on loopback: nothing listens there, the connection is refused at once.
    const db = await openDatabase('postgres://packs:secret@127.0.0.1:1/packs')
    try {
      await assert.rejects(migrateToLatest(db), (error: Error) => {
        assert.ok(error instanceof ConfigError)
        assert.match(error.message, /^DATABASE_URL: cannot connect to the PostgreSQL database: .*ECONNREFUSED/)
        assert.doesNotMatch(error.message, /\n|secret/)
        return true
      })
    } finally {
      await db.destroy()
    }
  })

  test('an unknown role is a one-line ConfigError naming it', { skip: !onPostgres && 'PACKS_TEST_DATABASE_URL is not set' }, async () => {
    const url = new URL(TEST_DATABASE_URL!)
    url.username = 'no_such_role'
    const db = await openDatabase(url.toString())
    try {
      await assert.rejects(migrateToLatest(db), (error: Error) => {
        assert.ok(error instanceof ConfigError)
        assert.match(error.message, /^DATABASE_URL: cannot connect to the PostgreSQL database: .*no_such_role/)
        assert.doesNotMatch(error.message, /\n/)
        return true
      })
    } finally {
      await db.destroy()
    }
  })
})

describe('migration 0004: short ids', () => {
  test('the rows of a site upgraded from before it each get one, distinct, of Modrinth\'s shape', async () => {
    const database = await openTestDatabase()
    const db = database.db
    try {
      // The site as it was before the migration: no short_id column.
      await shortIds.down(db as never)
      const user = await insertUser(db, 'old', 'hash', false)
      const now = new Date().toISOString()
      for (let i = 0; i < 3; i++) {
        const file = randomUUID()
        await insertFile(db, { id: file, storageKey: file, filename: `${i}.zip`, contentType: 'application/zip', size: 1, sha256: String(i).repeat(64), sha1: String(i).repeat(40) })
        const pack = randomUUID()
        await db.insertInto('packs').values({ id: pack, namespace: 'old', pack_id: `p${i}`, owner_id: user.id, title: 'P', summary: '', description: '', category_id: null, thumbnail_file_id: null, created_at: now, updated_at: now } as never).execute()
        await db.insertInto('versions').values({ id: randomUUID(), pack_id: pack, name: '1', changelog: '', pack_format: 48, file_id: file, created_at: now } as never).execute()
      }
      await shortIds.up(db as never)
      const ids = [
        ...(await db.selectFrom('packs').select('short_id').execute()),
        ...(await db.selectFrom('versions').select('short_id').execute()),
      ].map((row) => row.short_id)
      assert.equal(ids.length, 6)
      for (const id of ids) assert.match(String(id), /^[0-9A-Za-z]{8}$/)
      assert.equal(new Set(ids).size, 6)
    } finally {
      await database.close()
    }
  })
})

describe('migration 0006: tag counts', () => {
  test('a tag\'s count follows its pack_tags rows on this engine: adds, removals, and a pack\'s deletion by cascade', async () => {
    const database = await openTestDatabase()
    const db = database.db
    try {
      const owner = await insertUser(db, 'counter', 'hash', false)
      const category = await insertCategory(db, { key: 'count', name: 'Count', color: '#112233' })
      const [a, b] = [await insertTag(db, { name: 'alpha', categoryId: category.id }), await insertTag(db, { name: 'beta', categoryId: category.id })]
      const uses = async () => Object.fromEntries((await db.selectFrom('tags').select(['name', 'uses']).execute()).map((t) => [t.name, Number(t.uses)]))
      const now = new Date().toISOString()
      const packs: string[] = []
      for (let i = 0; i < 3; i++) {
        const id = randomUUID()
        packs.push(id)
        await db.insertInto('packs').values({ id, namespace: 'counter', pack_id: `p${i}`, owner_id: owner.id, title: 'P', summary: '', description: '', category_id: null, thumbnail_file_id: null, created_at: now, updated_at: now }).execute()
        await db.insertInto('pack_tags').values([{ pack_id: id, tag_id: a.id }, ...(i === 0 ? [{ pack_id: id, tag_id: b.id }] : [])]).execute()
      }
      assert.deepEqual(await uses(), { alpha: 3, beta: 1 })
      await db.deleteFrom('pack_tags').where('pack_id', '=', packs[1]!).execute()
      assert.deepEqual(await uses(), { alpha: 2, beta: 1 })
      await db.deleteFrom('packs').where('id', '=', packs[0]!).execute()
      assert.deepEqual(await uses(), { alpha: 1, beta: 0 }, 'a deleted pack\'s tags are counted off by the cascade')
      await db.updateTable('tags').set({ uses: 99 }).execute()
      await recountTagUses(db)
      assert.deepEqual(await uses(), { alpha: 1, beta: 0 }, 'recounted from pack_tags')
    } finally {
      await database.close()
    }
  })
})
