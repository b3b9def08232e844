// A pack's followers told of its new version after the publish's commit, a batch at a time
// (src/notifications/fanout.ts), on both backends: every follower told exactly once, whatever happens to the
// worker: one killed after its first batch (its claim left to run out) is resumed by another from where its
// last committed batch ended, and two workers at once never tell anyone twice. The followers are made as
// rows (250 accounts through the API would only be slower); the versions through the API.
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { after, before, test } from 'node:test'
import { siteWith, type TestSite, type TestUser } from '../helpers/app.js'
import { datapack, multipart } from '../helpers/fixtures.js'
import { publishPack, type PackJson } from '../helpers/packs.js'
import { until } from '../helpers/wait.js'
import { BATCH, FanoutWorker } from '../../src/notifications/fanout.js'
import { claimFanout, countFanouts, tellNextFollowers } from '../../src/notifications/repository.js'
import { insertRows } from '../../src/maintenance/transfer-repository.js'
import { nowIso } from '../../src/db/time.js'

const FOLLOWERS = 250
let site: TestSite
let alice: TestUser
let pack: PackJson
let followers: string[]
let ahead = 0

before(async () => {
  ;({ site, alice } = await siteWith({ users: ['alice'], clock: () => Date.now() + ahead }))
  pack = await publishPack(site, alice, { title: 'Crowded Pack' })
  const now = nowIso()
  const rows = Array.from({ length: FOLLOWERS }, (_, i) => ({
    id: randomUUID(), username: `fan${i}`, username_lower: `fan${i}`, password_hash: 'x', is_staff: 0, created_at: now, disabled_at: null,
  }))
  await site.app.db.transaction().execute((trx) => insertRows(trx, 'users', rows))
  followers = rows.map((r) => r.id)
  const packRow = await site.app.db.selectFrom('packs').select('id').where('namespace', '=', pack.namespace).where('pack_id', '=', pack.pack_id).executeTakeFirstOrThrow()
  await site.app.db.transaction().execute((trx) => insertRows(trx, 'pack_follows', followers.map((id) => ({ pack_row_id: packRow.id, user_id: id, created_at: now }))))
})
after(() => site.close())

async function addVersion(name: string): Promise<void> {
  const body = multipart([{ name: 'version_name', value: name }, { name: 'file', value: await datapack(61), filename: `${name}.zip`, contentType: 'application/zip' }])
  const res = await site.app.inject({ method: 'POST', url: `/api/packs/${pack.namespace}/${pack.pack_id}/versions/`, headers: { ...alice.headers, ...body.headers }, payload: body.payload })
  assert.equal(res.statusCode, 201, res.body)
}

/** How many notices of `version` each follower holds. */
async function toldOf(version: string): Promise<Map<string, number>> {
  const rows = await site.app.db.selectFrom('notifications').select(['user_id', 'data']).where('kind', '=', 'version.published').execute()
  const told = new Map<string, number>()
  for (const row of rows) {
    if ((JSON.parse(row.data) as { version?: string }).version === version) told.set(row.user_id, (told.get(row.user_id) ?? 0) + 1)
  }
  return told
}

function assertEachOnce(told: Map<string, number>, what: string): void {
  assert.equal(told.size, FOLLOWERS, `${what}: every follower told`)
  assert.ok([...told.values()].every((n) => n === 1), `${what}: nobody told twice`)
}

test('every follower is told of a new version, just after the publish', async () => {
  await addVersion('2.0')
  await until(async () => ((await countFanouts(site.app.db)) === 0 ? true : undefined), 'the fan-out done')
  assertEachOnce(await toldOf('2.0'), 'version 2.0')
  assert.equal((await toldOf('2.0')).has((await site.app.db.selectFrom('users').select('id').where('username', '=', 'alice').executeTakeFirstOrThrow()).id), false)
})

test('a worker killed after its first batch is resumed by another once its claim runs out: nobody missed, nobody twice', async () => {
  await site.app.notificationFanout.stop()
  await addVersion('3.0')
  const now = Date.now() + ahead
  const fanout = await claimFanout(site.app.db, 'a-worker-that-dies', nowIso(now), nowIso(now + 30_000))
  assert.ok(fanout, 'the publish left a fan-out')
  const first = await site.app.db.transaction().execute((trx) => tellNextFollowers(trx, fanout, 'a-worker-that-dies', BATCH, nowIso(now + 30_000)))
  assert.equal(first, BATCH)
  assert.equal((await toldOf('3.0')).size, BATCH, 'the first batch committed')
  // Within its claim nobody else takes it.
  const early = new FanoutWorker({ db: site.app.db, log: site.app.log, clock: () => Date.now() + ahead })
  await early.work()
  assert.equal((await toldOf('3.0')).size, BATCH, 'a live claim is left alone')
  ahead += 31_000
  const next = new FanoutWorker({ db: site.app.db, log: site.app.log, clock: () => Date.now() + ahead })
  await next.work()
  assertEachOnce(await toldOf('3.0'), 'version 3.0')
  assert.equal(await countFanouts(site.app.db), 0)
})

test('two workers at once tell each follower once', async () => {
  for (const name of ['4.0', '4.1', '4.2']) await addVersion(name)
  const workers = [0, 1].map(() => new FanoutWorker({ db: site.app.db, log: site.app.log, clock: () => Date.now() + ahead }))
  await Promise.all(workers.map((w) => w.work()))
  for (const name of ['4.0', '4.1', '4.2']) assertEachOnce(await toldOf(name), `version ${name}`)
  assert.equal(await countFanouts(site.app.db), 0)
})
