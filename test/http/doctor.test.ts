// The consistency check (src/maintenance/doctor.ts): each thing a crash, a bad
// restore or a bug can leave, made by hand on a real site, found, and
// repaired only where nothing reachable is lost; and the server running the
// check at start-up and in its sweep. On SQLite + disk, and on PostgreSQL +
// S3 (PACKS_TEST_DATABASE_URL, PACKS_TEST_STORAGE=s3).
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { Readable, Writable } from 'node:stream'
import { sql } from 'kysely'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config/index.js'
import { writeImportMarker } from '../../src/maintenance/doctor-repository.js'
import { formatFinding, runDoctor, type DoctorOptions, type Finding } from '../../src/maintenance/doctor.js'
import { startSweeper, sweepExpired } from '../../src/maintenance/sweep.js'
import { openFileStore, type FileStore } from '../../src/storage/index.js'
import { PART_SIZE, S3FileStore } from '../../src/storage/s3.js'
import { MASTER_PASSWORD, siteWith, storedFiles, type TestSite, type TestUser } from '../helpers/app.js'
import { createTestDatabase, onPostgres } from '../helpers/database.js'
import { png } from '../helpers/fixtures.js'
import { pathOf, publishPack, upload } from '../helpers/packs.js'
import { s3Bucket, s3Selected } from '../helpers/s3.js'
import { until } from '../helpers/wait.js'
import { tempDir } from '../helpers/temp.js'

const HOUR = 3_600_000
/** A moment when everything the test just made is older than the one-hour grace. */
const later = () => Date.now() + 2 * HOUR

interface Run {
  findings: Finding[]
  report: Awaited<ReturnType<typeof runDoctor>>
}

async function doctor(site: TestSite, options: Partial<DoctorOptions> & Pick<DoctorOptions, 'repair'>): Promise<Run> {
  const findings: Finding[] = []
  const report = await runDoctor(site.app.db, site.app.store, { graceMs: HOUR, onFinding: (f) => findings.push(f), ...options })
  return { findings, report }
}

function kinds(findings: Finding[]): string[] {
  return findings.map((f) => `${f.kind}${f.repaired ? ' (repaired)' : ''}`).sort()
}

async function putBytes(store: FileStore, key: string, bytes: Buffer): Promise<void> {
  await store.put(key, Readable.from([bytes]))
}

/** A put that sends some bytes and waits: what a process killed mid-upload leaves. */
async function unfinishedWrite(store: FileStore): Promise<{ key: string; abandon(): Promise<void> }> {
  const key = randomUUID()
  let sent = false
  const body = new Readable({
    read() {
      if (sent) return
      sent = true
      // On S3 the multipart upload starts once a whole part is there.
      this.push(Buffer.alloc(store instanceof S3FileStore ? PART_SIZE + 1 : 64 * 1024, 7))
    },
  })
  const put = store.put(key, body)
  put.catch(() => {})
  const deadline = Date.now() + 10_000
  for (;;) {
    let found = false
    for await (const write of store.listUnfinished()) found ||= write.key === key
    if (found) break
    if (Date.now() > deadline) throw new Error('the unfinished write never appeared')
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  return {
    key,
    async abandon() {
      body.destroy(new Error('abandoned'))
      await put.catch(() => {})
    },
  }
}

async function unfinishedKeys(store: FileStore): Promise<string[]> {
  const keys: string[] = []
  for await (const write of store.listUnfinished()) keys.push(write.key)
  return keys
}

async function objectKeys(store: FileStore): Promise<string[]> {
  const keys: string[] = []
  for await (const object of store.list()) keys.push(object.key)
  return keys
}

describe('packs doctor: the consistency check', () => {
  let site: TestSite
  let alice: TestUser
  let bob: TestUser
  let cara: TestUser
  const status = async (url: string) => (await site.app.inject({ url: pathOf(url), headers: site.gate })).statusCode

  before(async () => ({ site, alice, bob, cara } = await siteWith({ users: ['alice', 'bob', 'cara'] })))
  after(() => site.close())

  test('a site in use is clean, and --repair changes nothing on it', async () => {
    const pack = await publishPack(site, alice, { title: 'Clean Pack' }, { thumbnail: true })
    await upload(site, alice, 'media', png(2, 2), { draft: randomUUID() })
    const stored = await storedFiles(site)
    const rows = (await site.app.db.selectFrom('files').select('id').execute()).length

    const checked = await doctor(site, { repair: 'report', now: later() })
    assert.deepEqual(checked.findings, [])
    assert.equal(checked.report.remaining, 0)
    assert.equal(checked.report.checked.fileRows, rows)
    assert.equal(checked.report.checked.objects, rows)
    const repaired = await doctor(site, { repair: 'all', now: later() })
    assert.deepEqual(repaired.findings, [])
    assert.deepEqual(await storedFiles(site), stored)
    assert.equal(await status(pack.versions[0]!.download_url), 200)
  })

  test('bytes without a row and unfinished writes: left alone while young, found when older than the grace, removed by a repair', async () => {
    const pack = await publishPack(site, alice, { title: 'Kept Pack' }, { thumbnail: true })
    const orphan = randomUUID()
    await putBytes(site.app.store, orphan, Buffer.from('bytes whose row never came'))
    // Not named like a file of this site (another site's, or someone's): never touched.
    await putBytes(site.app.store, 'not-ours-1', Buffer.from('foreign'))
    const unfinished = await unfinishedWrite(site.app.store)
    try {
      const young = await doctor(site, { repair: 'all' })
      assert.deepEqual(young.findings, [])
      assert.equal(young.report.young, 2)
      assert.equal(young.report.foreign, 1)
      assert.equal(young.report.remaining, 0)

      const found = await doctor(site, { repair: 'report', now: later() })
      assert.deepEqual(kinds(found.findings), ['orphan-object', 'unfinished-write'])
      assert.equal(found.report.remaining, 2)
      assert.equal(found.findings.find((f) => f.kind === 'orphan-object')!.subject, orphan)
      assert.match(formatFinding(found.findings[0]!), /^found {4}(orphan-object|unfinished-write) .*packs doctor --repair removes it$/)
      assert.ok((await objectKeys(site.app.store)).includes(orphan), 'a report changes nothing')

      // What the server does at start-up and in its sweep.
      const repaired = await doctor(site, { repair: 'storage', now: later() })
      assert.deepEqual(kinds(repaired.findings), ['orphan-object (repaired)', 'unfinished-write (repaired)'])
      assert.equal(repaired.report.remaining, 0)
      assert.ok(!(await objectKeys(site.app.store)).includes(orphan))
      assert.deepEqual(await unfinishedKeys(site.app.store), [])
      assert.ok((await objectKeys(site.app.store)).includes('not-ours-1'))
      assert.deepEqual((await doctor(site, { repair: 'report', now: later() })).findings, [])
      assert.equal(await status(pack.thumbnail_url!), 200)
      assert.equal(await status(pack.versions[0]!.download_url), 200)
    } finally {
      await unfinished.abandon()
      await site.app.store.delete('not-ours-1')
    }
  })

  test('rows without their bytes: a pending upload\'s go with --repair, a published version\'s are reported and kept', async () => {
    const pack = await publishPack(site, alice, { title: 'Lost Bytes' })
    const draft = randomUUID()
    const pending = await upload(site, alice, 'media', png(3, 3), { draft })
    const versionFileId = pathOf(pack.versions[0]!.download_url).split('/')[3]!
    await site.app.store.delete(pending.fileId)
    await site.app.store.delete(versionFileId)

    const storage = await doctor(site, { repair: 'storage', now: later() })
    assert.deepEqual(kinds(storage.findings), ['missing-bytes', 'missing-bytes'], 'the server\'s own check changes no row')
    const published = storage.findings.find((f) => f.subject === versionFileId)!
    assert.equal(published.repairable, false)
    assert.match(formatFinding(published), new RegExp(`^PROBLEM  missing-bytes ${versionFileId}: PUBLISHED file .* of version ${pack.namespace}:${pack.pack_id} 1\\.0\\.0 has no stored bytes.*restore key`))

    const repaired = await doctor(site, { repair: 'all', now: later() })
    assert.deepEqual(kinds(repaired.findings), ['missing-bytes', 'missing-bytes (repaired)'])
    assert.equal(repaired.report.remaining, 1)
    const draftNow = await site.app.inject({ url: `/api/draft/?draft=${draft}`, headers: alice.headers })
    assert.deepEqual(draftNow.json().uploads, [], 'the upload whose bytes were gone is gone')
    assert.equal(await status(pending.url), 404)
    const packNow = await site.app.inject({ url: `/api/packs/${pack.namespace}/${pack.pack_id}/`, headers: site.gate })
    assert.equal(packNow.json().versions.length, 1, 'a published version is never removed')
    assert.ok(await site.app.db.selectFrom('files').select('id').where('id', '=', versionFileId).executeTakeFirst())

    // Put the bytes back (as from a backup): clean again.
    await site.app.db.deleteFrom('versions').where('file_id', '=', versionFileId).execute()
    await site.app.db.deleteFrom('packs').where('pack_id', '=', pack.pack_id).execute()
    await site.app.db.deleteFrom('files').where('id', '=', versionFileId).execute()
    assert.deepEqual((await doctor(site, { repair: 'report', now: later() })).findings, [])
  })

  test('half-published: a pack without versions is reported; an upload row a publish left behind and a file row nothing uses are removed', async () => {
    const bare = await publishPack(site, alice, { title: 'No Versions Left' })
    const bareFile = pathOf(bare.versions[0]!.download_url).split('/')[3]!
    await site.app.db.deleteFrom('versions').where('file_id', '=', bareFile).execute()

    const published = await publishPack(site, alice, { title: 'Half Consumed' })
    const publishedFile = pathOf(published.versions[0]!.download_url).split('/')[3]!
    const aliceId = (await site.app.db.selectFrom('users').select('id').where('username', '=', 'alice').executeTakeFirstOrThrow()).id
    const staleId = randomUUID()
    await site.app.db.insertInto('uploads').values({
      id: staleId, user_id: aliceId, draft_id: null, kind: 'version', file_id: publishedFile, pack_format: 48,
      created_at: new Date().toISOString(), expires_at: new Date(Date.now() - 1000).toISOString(),
    }).execute()

    const found = await doctor(site, { repair: 'report', now: later() })
    assert.deepEqual(kinds(found.findings), ['pack-without-versions', 'stale-upload', 'unreferenced-file'])
    assert.equal(found.findings.find((f) => f.kind === 'pack-without-versions')!.subject, `${bare.namespace}:${bare.pack_id}`)
    assert.equal(found.findings.find((f) => f.kind === 'unreferenced-file')!.subject, bareFile)
    // Within the grace a file row nothing uses may be a moment old: not yet reported.
    assert.deepEqual(kinds((await doctor(site, { repair: 'report' })).findings), ['pack-without-versions', 'stale-upload'])

    const repaired = await doctor(site, { repair: 'all', now: later() })
    assert.deepEqual(kinds(repaired.findings), ['pack-without-versions', 'stale-upload (repaired)', 'unreferenced-file (repaired)'])
    assert.equal(repaired.report.remaining, 1)
    assert.equal(await site.app.db.selectFrom('uploads').select('id').where('id', '=', staleId).executeTakeFirst(), undefined)
    assert.equal(await status(bare.versions[0]!.download_url), 404, 'the file nothing used is gone, bytes included')
    assert.ok(!(await objectKeys(site.app.store)).includes(bareFile))
    // The sweep would have taken the published archive with the expired upload row.
    await sweepExpired(site.app.db, site.app.store, site.config.draftTtlMs)
    assert.equal(await status(published.versions[0]!.download_url), 200)

    await site.app.db.deleteFrom('packs').where('pack_id', '=', bare.pack_id).execute()
  })

  test('a stored file of the wrong size is reported, not repaired', async () => {
    const pending = await upload(site, alice, 'media', png(4, 4), { draft: randomUUID() })
    await putBytes(site.app.store, pending.fileId, Buffer.from('truncated'))
    const repaired = await doctor(site, { repair: 'all', now: later() })
    assert.deepEqual(kinds(repaired.findings), ['size-mismatch'])
    assert.match(formatFinding(repaired.findings[0]!), /the row says \d+ bytes, the store holds 9/)
    await site.app.inject({ method: 'POST', url: `/api/uploads/${pending.uuid}/delete/`, headers: alice.headers })
  })

  test('rows naming a file row that does not exist (foreign keys off): an upload\'s is removed, others reported', async (t) => {
    const aliceId = (await site.app.db.selectFrom('users').select('id').where('username', '=', 'alice').executeTakeFirstOrThrow()).id
    const uploadId = randomUUID()
    const row = {
      id: uploadId, user_id: aliceId, draft_id: null, kind: 'media', file_id: randomUUID(), pack_format: null,
      created_at: new Date().toISOString(), expires_at: new Date(Date.now() + HOUR).toISOString(),
    }
    // A pack's thumbnail and a gallery item naming missing file rows too (found in windows of packs).
    const pack = await publishPack(site, alice, { title: 'Dangling Pictures' })
    const packId = (await site.app.db.selectFrom('packs').select('id').where('pack_id', '=', pack.pack_id).executeTakeFirstOrThrow()).id
    const missingThumbnail = randomUUID()
    const missingMedia = randomUUID()
    const withoutKeys = async (db: typeof site.app.db) => {
      await db.insertInto('uploads').values(row).execute()
      await db.updateTable('packs').set({ thumbnail_file_id: missingThumbnail }).where('id', '=', packId).execute()
      await db.insertInto('pack_media').values({ pack_id: packId, file_id: missingMedia, position: 0 }).execute()
    }
    try {
      if (onPostgres) {
        await site.app.db.transaction().execute(async (trx) => {
          await sql`set local session_replication_role = replica`.execute(trx)
          await withoutKeys(trx)
        })
      } else {
        await sql`pragma foreign_keys = off`.execute(site.app.db)
        await withoutKeys(site.app.db)
        await sql`pragma foreign_keys = on`.execute(site.app.db)
      }
    } catch (error) {
      t.skip(`cannot turn foreign keys off here: ${(error as Error).message}`)
      return
    }
    const repaired = await doctor(site, { repair: 'all', now: later() })
    assert.deepEqual(kinds(repaired.findings), ['dangling-reference', 'dangling-reference', 'dangling-reference (repaired)'])
    assert.deepEqual(repaired.findings.map((f) => f.subject), [packId, packId, uploadId])
    assert.match(formatFinding(repaired.findings[0]!), new RegExp(`thumbnail of alice:${pack.pack_id} names file ${missingThumbnail}`))
    assert.match(formatFinding(repaired.findings[1]!), new RegExp(`media of alice:${pack.pack_id} names file ${missingMedia}`))
    assert.equal(await site.app.db.selectFrom('uploads').select('id').where('id', '=', uploadId).executeTakeFirst(), undefined)
    // Back to a clean pack, for the tests after this one.
    await site.app.db.deleteFrom('pack_media').where('pack_id', '=', packId).execute()
    await site.app.db.updateTable('packs').set({ thumbnail_file_id: null }).where('id', '=', packId).execute()
  })

  test('while an import is marked, the server\'s check leaves bytes without rows alone; --repair clears an interrupted one', async () => {
    const orphan = randomUUID()
    await putBytes(site.app.store, orphan, Buffer.from('an imported file whose row is yet to come'))
    await writeImportMarker(site.app.db, { started_at: new Date().toISOString(), dir: '/backups/site' })

    const storage = await doctor(site, { repair: 'storage', now: later() })
    assert.deepEqual(kinds(storage.findings), ['interrupted-import', 'orphan-object'])
    assert.equal(storage.report.importInProgress, true)
    assert.ok((await objectKeys(site.app.store)).includes(orphan))

    const repaired = await doctor(site, { repair: 'all', now: later() })
    assert.deepEqual(kinds(repaired.findings), ['interrupted-import (repaired)', 'orphan-object (repaired)'])
    assert.ok(!(await objectKeys(site.app.store)).includes(orphan))
    assert.deepEqual((await doctor(site, { repair: 'report', now: later() })).findings, [])
  })

  test('team rows: the owner\'s own member row, lapsed invitations and offers, an offer to someone outside the team; the sweep removes lapsed ones', async () => {
    const teamKinds = (run: Run) => kinds(run.findings.filter((f) => ['owner-in-team', 'lapsed-invitation', 'stray-offer'].includes(f.kind)))
    const api = (method: 'POST' | 'GET', pack: { namespace: string; pack_id: string }, rest: string, user: TestUser, payload?: object) =>
      site.app.inject({ method, url: `/api/packs/${pack.namespace}/${pack.pack_id}/${rest}`, headers: user.headers, ...(payload ? { payload } : {}) })
    const teamed = await publishPack(site, alice, { title: 'Teamed Pack' })
    const other = await publishPack(site, alice, { title: 'Offered Away' })
    assert.equal((await api('POST', teamed, 'team/', alice, { username: bob.username, role: 'maintainer' })).statusCode, 201)
    assert.equal((await api('POST', teamed, 'team/accept/', bob)).statusCode, 200)
    assert.equal((await api('POST', teamed, 'team/', alice, { username: cara.username, role: 'uploader' })).statusCode, 201)
    assert.ok((await api('POST', teamed, 'transfer/', alice, { username: bob.username })).statusCode < 300)
    // A team as the routes leave it is clean, its open invitation and offer included.
    assert.deepEqual(teamKinds(await doctor(site, { repair: 'report' })), [])

    // What a bad restore or a hand edit can leave.
    const rowId = async (p: { namespace: string; pack_id: string }) =>
      (await site.app.db.selectFrom('packs').select('id').where('namespace', '=', p.namespace).where('pack_id', '=', p.pack_id).executeTakeFirstOrThrow()).id
    const userId = async (u: TestUser) => (await site.app.db.selectFrom('users').select('id').where('username', '=', u.username).executeTakeFirstOrThrow()).id
    const past = new Date(Date.now() - 1000).toISOString()
    const at = new Date().toISOString()
    await site.app.db.insertInto('pack_members').values({
      pack_row_id: await rowId(teamed), user_id: await userId(alice), role: 'maintainer', invited_by: await userId(alice), invited_at: at, accepted_at: at, expires_at: null,
    }).execute()
    await site.app.db.updateTable('pack_members').set({ expires_at: past }).where('user_id', '=', await userId(cara)).execute()
    await site.app.db.insertInto('pack_transfers').values({
      pack_row_id: await rowId(other), to_user_id: await userId(cara), offered_by: await userId(alice), offered_at: at, expires_at: new Date(Date.now() + HOUR).toISOString(),
    }).execute()

    const found = await doctor(site, { repair: 'report' })
    assert.deepEqual(teamKinds(found), ['lapsed-invitation', 'owner-in-team', 'stray-offer'])
    const stray = found.findings.find((f) => f.kind === 'stray-offer')!
    assert.equal(stray.subject, `${other.namespace}:${other.pack_id}`)
    assert.match(formatFinding(stray), /ownership is offered to cara, who is not a member of the pack's team; packs doctor --repair removes it$/)
    assert.match(found.findings.find((f) => f.kind === 'lapsed-invitation')!.detail, /^the invitation of cara lapsed at /)
    // Past its 14 days, bob's offer has lapsed too (and cara's stray one with it: lapsed is all it is then).
    const fortnight = await doctor(site, { repair: 'report', now: Date.now() + 15 * 24 * HOUR })
    assert.deepEqual(teamKinds(fortnight), ['lapsed-invitation', 'lapsed-invitation', 'lapsed-invitation', 'owner-in-team'])

    const repaired = await doctor(site, { repair: 'all' })
    assert.deepEqual(teamKinds(repaired), ['lapsed-invitation (repaired)', 'owner-in-team (repaired)', 'stray-offer (repaired)'])
    assert.deepEqual(teamKinds(await doctor(site, { repair: 'report' })), [])
    // What was sound stays: alice owns it, bob is its maintainer and still has the offer.
    const team = (await api('GET', teamed, 'team/', alice)).json() as { members: Array<{ username: string; role: string }>; transfer: { to: string } | null }
    assert.deepEqual(team.members.map((m) => `${m.username} ${m.role}`), ['alice owner', 'bob maintainer'])
    assert.equal(team.transfer?.to, 'bob')

    // The sweep removes invitations and offers as they lapse, before its check could report them.
    assert.equal((await api('POST', other, 'team/', alice, { username: cara.username, role: 'uploader' })).statusCode, 201)
    const errors: string[] = []
    const log = { info() {}, warn(_details: object, message: string) { errors.push(message) }, error(_details: object, message: string) { errors.push(message) } }
    const sweeper = startSweeper({
      db: site.app.db, store: site.app.store, draftTtlMs: site.config.draftTtlMs, intervalMs: 3_600_000, orphanGraceMs: HOUR, log, now: () => Date.now() + 15 * 24 * HOUR,
    })
    await sweeper.runNow('sweep')
    await sweeper.stop()
    assert.deepEqual(errors.filter((e) => /team|invitation|offer/.test(e)), [])
    const left = await site.app.db.selectFrom('pack_members').select(['user_id', 'accepted_at']).where('pack_row_id', 'in', [await rowId(teamed), await rowId(other)]).execute()
    assert.deepEqual(left.map((m) => [m.user_id, m.accepted_at !== null]), [[await userId(bob), true]], 'the lapsed invitation went, the member stayed')
    assert.deepEqual(await site.app.db.selectFrom('pack_transfers').select('pack_row_id').where('pack_row_id', '=', await rowId(teamed)).execute(), [], 'the lapsed offer went')
  })

  test('a team row or offer naming a user that is gone (foreign keys off) is found and removed', async (t) => {
    const pack = await publishPack(site, alice, { title: 'Ghost Team' })
    const packId = (await site.app.db.selectFrom('packs').select('id').where('pack_id', '=', pack.pack_id).executeTakeFirstOrThrow()).id
    const ghost = randomUUID()
    const at = new Date().toISOString()
    const withoutKeys = async (db: typeof site.app.db) => {
      await db.insertInto('pack_members').values({ pack_row_id: packId, user_id: ghost, role: 'uploader', invited_by: ghost, invited_at: at, accepted_at: at, expires_at: null }).execute()
      await db.insertInto('pack_transfers').values({ pack_row_id: packId, to_user_id: ghost, offered_by: ghost, offered_at: at, expires_at: new Date(Date.now() + HOUR).toISOString() }).execute()
    }
    try {
      if (onPostgres) {
        await site.app.db.transaction().execute(async (trx) => {
          await sql`set local session_replication_role = replica`.execute(trx)
          await withoutKeys(trx)
        })
      } else {
        await sql`pragma foreign_keys = off`.execute(site.app.db)
        await withoutKeys(site.app.db)
        await sql`pragma foreign_keys = on`.execute(site.app.db)
      }
    } catch (error) {
      t.skip(`cannot turn foreign keys off here: ${(error as Error).message}`)
      return
    }
    const repaired = await doctor(site, { repair: 'all' })
    const ghosts = repaired.findings.filter((f) => f.kind === 'dangling-member')
    assert.deepEqual(ghosts.map((f) => [f.subject, f.detail, f.repaired]), [
      [`alice:${pack.pack_id}`, `a team row of user ${ghost} names a user that has no row`, true],
      [`alice:${pack.pack_id}`, `an offer of ownership to user ${ghost} names a user that has no row`, true],
    ])
    assert.deepEqual(await site.app.db.selectFrom('pack_members').select('user_id').where('pack_row_id', '=', packId).execute(), [])
    assert.deepEqual(await site.app.db.selectFrom('pack_transfers').select('to_user_id').where('pack_row_id', '=', packId).execute(), [])
  })

  test('a walk stopped by its time limit says so; `after` continues it', async () => {
    const keys = [randomUUID(), randomUUID()].sort()
    for (const key of keys) await putBytes(site.app.store, key, Buffer.from(key))
    const stopped = await doctor(site, { repair: 'report', now: later(), deadline: Date.now() - 1 })
    assert.equal(stopped.report.complete, false)
    assert.ok(!stopped.findings.some((f) => f.kind === 'orphan-object'))
    const rest = await doctor(site, { repair: 'all', now: later(), after: keys[0]! })
    assert.deepEqual(rest.findings.map((f) => f.subject), [keys[1]])
    assert.equal(rest.report.complete, true)
    await site.app.store.delete(keys[0]!)
  })
})

/**
 * A server's configuration on a fresh database (and bucket, with S3 selected) with an hour of grace for
 * orphans, and a logger stream whose lines are collected, parsed, in `logs`.
 */
async function serverSetup<L>(env: Record<string, string> = {}) {
  const dataDir = tempDir('packs-doctor-')
  const database = await createTestDatabase()
  const bucket = s3Selected() ? await s3Bucket() : undefined
  const config = loadConfig({
    PACKS_DATA_DIR: dataDir,
    PACKS_MASTER_PASSWORD: MASTER_PASSWORD,
    PACKS_ORPHAN_GRACE: '1h',
    ...env,
    ...(database.url ? { DATABASE_URL: database.url } : {}),
    ...(bucket ? { STORAGE_URL: bucket.storageUrl } : {}),
  })
  const logs: L[] = []
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) if (line) logs.push(JSON.parse(line) as L)
      done()
    },
  })
  const cleanUp = async () => {
    await database.drop()
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
  return { config, logs, stream, cleanUp }
}

test('the server runs the check once it listens, and again in its sweep', async () => {
  // How soon a sweep follows the last, so the test sees one; no window is waited out (the clock below).
  const { config, logs, stream, cleanUp } = await serverSetup<{ msg: string; trigger?: string; repaired?: number }>({ PACKS_SWEEP_INTERVAL: '200ms' })
  // What a crash left before this start: bytes without a row and a write that never finished.
  const before = await openFileStore(config.storageUrl)
  const unfinished = await unfinishedWrite(before)
  await putBytes(before, randomUUID(), Buffer.from('left by a crash'))
  // On the app's clock all of it is two hours old, past the hour of grace, without waiting for it.
  const app = await buildApp(config, { logger: { level: 'info', stream }, clock: later })
  try {
    await app.listen({ host: '127.0.0.1', port: 0 })
    const startUp = await until(() => logs.find((l) => l.trigger === 'start-up' && /^consistency check: checked/.test(l.msg)), 'the start-up check')
    assert.equal(startUp.repaired, 2, startUp.msg)
    assert.deepEqual(await objectKeys(app.store), [])
    assert.deepEqual(await unfinishedKeys(app.store), [])

    // Later crashes are the sweep's, by the same clock (young bytes are left: the runDoctor tests above).
    const secondCrash = randomUUID()
    await putBytes(app.store, secondCrash, Buffer.from('left by another crash'))
    await until(() => logs.find((l) => l.trigger === 'sweep' && l.msg.startsWith(`consistency check: repaired orphan-object ${secondCrash}:`)), 'the sweep to remove it')
    assert.ok(!(await objectKeys(app.store)).includes(secondCrash))
  } finally {
    await unfinished.abandon()
    await before.close()
    await app.close()
    await cleanUp()
  }
})

test('closing the server stops a check under way instead of waiting for the rest of its walk', async () => {
  const { config, logs, stream, cleanUp } = await serverSetup<{ msg: string; trigger?: string }>()
  // A store the start-up check walks for a good while (paced to a quarter of the event loop): young bytes
  // without rows, which it only counts. A shutdown must not wait for the rest of such a walk (on a large
  // store it is longer than the grace a stopping server is given before it is killed).
  const OBJECTS = 1500
  const store = await openFileStore(config.storageUrl)
  for (let i = 0; i < OBJECTS; i += 50) {
    await Promise.all(Array.from({ length: 50 }, () => putBytes(store, randomUUID(), Buffer.from('x'))))
  }
  await store.close()
  const app = await buildApp(config, { logger: { level: 'info', stream } })
  try {
    await app.listen({ host: '127.0.0.1', port: 0 })
    // The start-up check began as the server started listening; the server is stopped at once.
    let timer: NodeJS.Timeout | undefined
    const closed = await Promise.race([
      app.close().then(() => true),
      new Promise<false>((resolve) => { timer = setTimeout(() => resolve(false), 5_000) }),
    ])
    clearTimeout(timer)
    assert.equal(closed, true, 'close() finished')
    const finished = logs.filter((l) => l.trigger === 'start-up' && /^consistency check: checked/.test(l.msg))
    assert.deepEqual(finished, [], 'the check did not run to its end before the server closed')
    assert.ok(logs.some((l) => l.trigger === 'start-up' && /^sweep and consistency check stopped/.test(l.msg)), 'the stopped check says so')
  } finally {
    await app.close()
    await cleanUp()
  }
})
