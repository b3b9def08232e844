// Search's change log (search_changes, migration 0011): every change search can see, made through the API,
// appends a row naming the pack's row id, in the change's own transaction (the triggers on pack_search and
// packs); what search cannot see (a read, a version's changelog) appends nothing. The log's numbers only
// grow, a reader can ask again for numbers it skipped, and the sweep lets rows older than an hour go, and
// every number before them, without ever handing a number out again.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import type { LightMyRequestResponse } from 'fastify'
import { sql } from 'kysely'
import { startSweeper } from '../../src/maintenance/sweep.js'
import {
  CHANGE_LOG_KEEP_MS, changesAfter, changesAmong, firstChange, lastChange, pruneChanges,
} from '../../src/packs/search-changes-repository.js'
import { siteWith, type TestSite, type TestUser } from '../helpers/app.js'
import { datapack, multipart } from '../helpers/fixtures.js'
import { pathOf, publishPack, seedTags, type PackJson } from '../helpers/packs.js'

let site: TestSite
let alice: TestUser, bob: TestUser, root: TestUser

before(async () => {
  // Downloads are written when a test flushes them, not by a timer between two reads of the log.
  ;({ site, alice, bob, root } = await siteWith({ users: ['alice', 'bob'], staff: ['root'], downloads: { flushIntervalMs: 3_600_000 } }))
  await seedTags(site)
})
after(() => site.close())

const packUrl = (p: Pick<PackJson, 'namespace' | 'pack_id'>) => `/api/packs/${p.namespace}/${p.pack_id}/`

async function ok(res: Promise<LightMyRequestResponse>, status = 200): Promise<LightMyRequestResponse> {
  const answer = await res
  assert.equal(answer.statusCode, status, answer.body)
  return answer
}

const call = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, user: TestUser | null, payload?: object) =>
  site.app.inject({ method, url, headers: user ? user.headers : site.gate, ...(payload ? { payload } : {}) })

async function rowIdOf(p: Pick<PackJson, 'namespace' | 'pack_id'>): Promise<string> {
  const row = await site.app.db.selectFrom('packs').select('id').where('namespace', '=', p.namespace).where('pack_id', '=', p.pack_id).executeTakeFirst()
  assert.ok(row, `${p.namespace}:${p.pack_id} exists`)
  return row.id
}

async function current(p: Pick<PackJson, 'namespace' | 'pack_id'>): Promise<PackJson> {
  return (await ok(call('GET', packUrl(p), root))).json() as PackJson
}

/** What `change` appended to the log: the row ids named, in number order. */
async function logged(change: () => Promise<unknown>): Promise<string[]> {
  const before_ = await lastChange(site.app.db)
  await change()
  const rows = await changesAfter(site.app.db, before_, 10_000)
  for (let i = 1; i < rows.length; i++) assert.ok(rows[i]!.seq > rows[i - 1]!.seq, 'in number order')
  return rows.map((r) => r.packRowId)
}

async function assertLogs(what: string, rowId: string, change: () => Promise<unknown>): Promise<void> {
  const ids = await logged(change)
  assert.ok(ids.includes(rowId), `${what} logs the pack's row id (logged: ${JSON.stringify(ids)})`)
  assert.deepEqual([...new Set(ids)], [rowId], `${what} logs that pack only`)
}

async function addVersion(p: PackJson, name: string): Promise<PackJson> {
  const body = multipart([{ name: 'version_name', value: name }, { name: 'file', value: await datapack(48), filename: `${name}.zip` }])
  const res = await ok(site.app.inject({ method: 'POST', url: `${packUrl(p)}versions/`, headers: { ...alice.headers, ...body.headers }, payload: body.payload }), 201)
  return res.json() as PackJson
}

describe('the log', () => {
  let pack: PackJson
  let rowId: string

  test('starts empty', async () => {
    assert.equal(await lastChange(site.app.db), 0)
    assert.equal(await firstChange(site.app.db), undefined)
    assert.deepEqual(await changesAfter(site.app.db, 0, 10), [])
  })

  test('a published pack is logged', async () => {
    const before_ = await lastChange(site.app.db)
    pack = await publishPack(site, alice, { title: 'Logged Lanterns' })
    rowId = await rowIdOf(pack)
    const rows = await changesAfter(site.app.db, before_, 100)
    assert.ok(rows.some((r) => r.packRowId === rowId), 'the new pack is logged')
    assert.ok(await lastChange(site.app.db) > before_)
    assert.equal(typeof rows[0]!.seq, 'number')
  })

  test('an edit of the title through PATCH', async () => {
    const { revision } = await current(pack)
    await assertLogs('a title edit', rowId, () => ok(call('PATCH', packUrl(pack), alice, { revision, title: 'Logged Lamps' })))
  })

  test('an edit of the tags through PATCH', async () => {
    const { revision } = await current(pack)
    await assertLogs('a tag edit', rowId, () => ok(call('PATCH', packUrl(pack), alice, { revision, tags: ['Medieval'] })))
  })

  test('a new version', async () => {
    await assertLogs('a new version', rowId, () => addVersion(pack, '2.0.0'))
  })

  test('a yank and an unyank', async () => {
    const version = (await current(pack)).versions[0]!
    await assertLogs('a yank', rowId, () => ok(call('PATCH', `${packUrl(pack)}versions/${version.id}/`, alice, { yanked: true })))
    await assertLogs('an unyank', rowId, () => ok(call('PATCH', `${packUrl(pack)}versions/${version.id}/`, alice, { yanked: false })))
  })

  test('a deleted version', async () => {
    const version = (await current(pack)).versions[0]!
    await assertLogs('a version deleted', rowId, () => ok(call('DELETE', `${packUrl(pack)}versions/${version.id}/`, alice), 204))
  })

  test('staff hide and show', async () => {
    await assertLogs('a hide', rowId, () => ok(call('POST', `${packUrl(pack)}hide/`, root, { reason: 'tests' })))
    await assertLogs('an unhide', rowId, () => ok(call('POST', `${packUrl(pack)}unhide/`, root, { reason: 'tests' })))
  })

  test('the owner disabled and enabled', async () => {
    await assertLogs('a disable', rowId, () => ok(call('POST', '/api/users/alice/disable/', root, { reason: 'tests' })))
    await assertLogs('an enable', rowId, () => ok(call('POST', '/api/users/alice/enable/', root, { reason: 'tests' })))
  })

  test('a counted download', async () => {
    const version = (await current(pack)).versions[0]!
    await assertLogs('a counted download', rowId, async () => {
      await ok(site.app.inject({ url: pathOf(version.download_url), remoteAddress: '198.51.100.7', headers: site.gate }))
      await site.app.downloads.flush()
    })
    assert.equal((await current(pack)).downloads, 1, 'the download was counted')
  })

  test('a member accepted and removed', async () => {
    await ok(call('POST', `${packUrl(pack)}team/`, alice, { username: 'bob', role: 'maintainer' }), 201)
    await assertLogs('a member accepting', rowId, () => ok(call('POST', `${packUrl(pack)}team/accept/`, bob)))
    await assertLogs('a member removed', rowId, () => ok(call('DELETE', `${packUrl(pack)}team/bob/`, alice), 204))
  })

  test('a member leaving', async () => {
    await ok(call('POST', `${packUrl(pack)}team/`, alice, { username: 'bob', role: 'maintainer' }), 201)
    await ok(call('POST', `${packUrl(pack)}team/accept/`, bob))
    await assertLogs('a member leaving', rowId, () => ok(call('DELETE', `${packUrl(pack)}team/bob/`, bob), 204))
  })

  test('the pack handed to a member', async () => {
    await ok(call('POST', `${packUrl(pack)}team/`, alice, { username: 'bob', role: 'maintainer' }), 201)
    await ok(call('POST', `${packUrl(pack)}team/accept/`, bob))
    await ok(call('POST', `${packUrl(pack)}transfer/`, alice, { username: 'bob' }), 204)
    await assertLogs('a change of owner', rowId, () => ok(call('POST', `${packUrl(pack)}transfer/accept/`, bob)))
    assert.equal((await current(pack)).owner, 'bob')
  })

  test('reads and what search does not see log nothing', async () => {
    const ids = await logged(async () => {
      await ok(call('GET', packUrl(pack), null))
      await ok(call('GET', '/api/packs/?q=lamps', null))
      await ok(call('GET', '/api/packs/?sort=downloads', alice))
      await ok(site.app.inject({ url: '/?q=lamps', headers: { ...site.gate, accept: 'text/html' } }))
      // A changelog is not searched: the edit takes the pack's row lock by setting updated_at to itself,
      // which must not be taken for a change.
      const version = (await current(pack)).versions[0]!
      await ok(call('PATCH', `${packUrl(pack)}versions/${version.id}/`, bob, { changelog: 'Fixed the lamps.' }))
      // An invitation grants nothing until it is accepted.
      await ok(call('POST', `${packUrl(pack)}team/`, bob, { username: 'root', role: 'uploader' }), 201)
    })
    assert.deepEqual(ids, [])
  })

  test('a deleted pack is logged, and its rows stay', async () => {
    await assertLogs('a delete', rowId, () => ok(call('DELETE', packUrl(pack), bob), 204))
    assert.ok((await changesAfter(site.app.db, 0, 10_000)).some((r) => r.packRowId === rowId))
  })

  test('numbers skipped by a reader are found again by changesAmong', async () => {
    const rows = await changesAfter(site.app.db, 0, 10_000)
    assert.ok(rows.length >= 4)
    const some = [rows[3]!.seq, rows[1]!.seq, rows[1]!.seq]
    const missing = (await lastChange(site.app.db)) + 1000
    assert.deepEqual(await changesAmong(site.app.db, [...some, missing]), [rows[1]!, rows[3]!])
    assert.deepEqual(await changesAmong(site.app.db, []), [])
    assert.deepEqual((await changesAfter(site.app.db, rows[1]!.seq, 2)).map((r) => r.seq), [rows[2]!.seq, rows[3]!.seq])
  })
})

describe('pruning', () => {
  const db = () => site.app.db

  test('rows older than the cutoff go, newer ones stay', async () => {
    const p = await publishPack(site, alice, { title: 'Pruned Pack' })
    const id = await rowIdOf(p)
    const { revision } = await current(p)
    await ok(call('PATCH', packUrl(p), alice, { revision, title: 'Pruned Pack Again' }))
    const rows = await changesAfter(db(), 0, 10_000)
    assert.ok(rows.length >= 3)
    // The rows' times as the database wrote them: now, in the format of src/db/time.ts.
    for (const row of await db().selectFrom('search_changes').select('changed_at').execute()) {
      assert.match(row.changed_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
      assert.ok(Math.abs(Date.parse(row.changed_at) - Date.now()) < 10 * 60_000, `${row.changed_at} is about now`)
    }
    // All but the last two made two hours old.
    const keep = rows.slice(-2)
    const old = rows.slice(0, -2)
    await db().updateTable('search_changes').set({ changed_at: new Date(Date.now() - 2 * CHANGE_LOG_KEEP_MS).toISOString() })
      .where('seq', '<', keep[0]!.seq).execute()
    const cutoff = new Date(Date.now() - CHANGE_LOG_KEEP_MS).toISOString()
    assert.equal(await pruneChanges(db(), cutoff), old.length)
    assert.deepEqual(await changesAfter(db(), 0, 10_000), keep)
    assert.equal(await firstChange(db()), keep[0]!.seq)
    assert.ok(keep.every((r) => r.packRowId === id))
    assert.equal(await pruneChanges(db(), cutoff), 0, 'nothing older is left')
  })

  test('a cut is by number: a newer row numbered before an older one goes with it', async () => {
    const before_ = await lastChange(db())
    const p = await publishPack(site, bob, { title: 'Out Of Order' })
    const { revision } = await current(p)
    await ok(call('PATCH', packUrl(p), bob, { revision, title: 'Out Of Order Again' }))
    const rows = await changesAfter(db(), before_, 10_000)
    assert.ok(rows.length >= 2)
    // The last row old, the ones before it new: as when an older transaction logs after a newer one.
    await db().updateTable('search_changes').set({ changed_at: new Date(Date.now() - 2 * CHANGE_LOG_KEEP_MS).toISOString() })
      .where('seq', '=', rows.at(-1)!.seq).execute()
    await pruneChanges(db(), new Date(Date.now() - CHANGE_LOG_KEEP_MS).toISOString())
    assert.equal(await firstChange(db()), undefined, 'nothing numbered at or before an old row stays')
  })

  test('the sweep prunes, and a number is never handed out again', async () => {
    const p = await publishPack(site, alice, { title: 'Swept Log' })
    const last = await lastChange(db())
    assert.ok(last > 0)
    const errors: string[] = []
    const log = { info() {}, warn() {}, error(_details: object, message: string) { errors.push(message) } }
    const sweepAt = async (at: number) => {
      const sweeper = startSweeper({ db: db(), store: site.app.store, draftTtlMs: site.config.draftTtlMs, intervalMs: 3_600_000, orphanGraceMs: 24 * 3_600_000, log, now: () => at })
      await sweeper.runNow('sweep')
      await sweeper.stop()
    }
    await sweepAt(Date.now() + CHANGE_LOG_KEEP_MS / 2)
    assert.deepEqual(errors, [])
    assert.equal(await lastChange(db()), last, 'a sweep within the hour keeps the log')
    await sweepAt(Date.now() + CHANGE_LOG_KEEP_MS + 60_000)
    assert.deepEqual(errors, [])
    assert.equal(await lastChange(db()), 0, 'the sweep an hour later emptied the log')
    const { revision } = await current(p)
    await ok(call('PATCH', packUrl(p), alice, { revision, title: 'Swept Log Again' }))
    const rows = await changesAfter(db(), 0, 10)
    assert.ok(rows.length > 0)
    assert.ok(rows.every((r) => r.seq > last), `numbers go on after ${last}: ${rows.map((r) => r.seq).join(', ')}`)
  })
})

test('a packs row set to its own values logs nothing; a column search reads, changed, logs the pack', async () => {
  // The triggers' conditions checked in SQL: the API never makes some of these writes on its own.
  const p = await publishPack(site, bob, { title: 'Trigger Check' })
  const id = await rowIdOf(p)
  const db = site.app.db
  assert.deepEqual(await logged(() => sql`update packs set title = title, hidden_at = hidden_at, updated_at = updated_at, downloads = downloads where id = ${id}`.execute(db)), [])
  assert.deepEqual(await logged(() => sql`update packs set revision = revision + 1 where id = ${id}`.execute(db)), [])
  for (const [column, value] of [['downloads', sql`downloads + 1`], ['created_at', sql`'2020-01-01T00:00:00.000Z'`], ['hidden_at', sql`'2020-01-01T00:00:00.000Z'`], ['hidden_at', sql`null`]] as const) {
    assert.deepEqual(await logged(() => sql`update packs set ${sql.ref(column)} = ${value} where id = ${id}`.execute(db)), [id], `packs.${column} = ${value.compile(db).sql}`)
  }
  assert.deepEqual(await logged(() => sql`update pack_search set trending = trending where pack_row_id = ${id}`.execute(db)), [id], 'any write of the entry')
})
