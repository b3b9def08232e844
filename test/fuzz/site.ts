// The site the fuzzer attacks: the real app on the run's backend combination
// (SQLite + disk + memory; or PostgreSQL + S3 + Redis, as makeSite gives them
// from the PACKS_TEST_* variables), seeded through the API the way a creator
// would, with a logger that keeps every warning and error so a failing case
// shows the server's side.
import path from 'node:path'
import { createHash, randomUUID } from 'node:crypto'
import { Writable } from 'node:stream'
import assert from 'node:assert/strict'
import { createApiToken } from '../../src/accounts/tokens-service.js'
import { requireUser, setPassword } from '../../src/accounts/users-service.js'
import { startSession } from '../../src/auth/sessions.js'
import { csrfTokenFor } from '../../src/auth/csrf.js'
import type { App } from '../../src/http/types.js'
import { S3FileStore } from '../../src/storage/s3.js'
import { MASTER_PASSWORD, makeSite, storedFiles, type TestSite, type TestUser } from '../helpers/app.js'
import { onPostgres } from '../helpers/database.js'
import { s3Selected } from '../helpers/s3.js'
import { startRedis, TEST_REDIS_URL, type RedisServer } from '../helpers/redis.js'
import { datapack, gif, jpeg, mp4, multipart, png, webm, webp, zip } from '../helpers/fixtures.js'
import { publishPack, saveDraft, seedTags, upload } from '../helpers/packs.js'
import type { BlobName, RefName } from './model.js'
import { CLI_ACTOR } from '../../src/audit/service.js'
import { deletePack } from '../../src/packs/delete-service.js'
import { packChanged } from '../../src/update-check/service.js'

/** One warning or error the app logged, as pino wrote it. */
export interface LogEntry {
  level: number
  msg: string
  err?: { type?: string; message?: string; stack?: string; code?: string }
  [key: string]: unknown
}

/** Collects the app's log lines at warn and above; `take()` hands over and forgets what came since the last call. */
class LogCapture extends Writable {
  private entries: LogEntry[] = []
  private partial = ''

  override _write(chunk: Buffer, _encoding: string, callback: () => void): void {
    const lines = (this.partial + chunk.toString('utf8')).split('\n')
    this.partial = lines.pop() ?? ''
    for (const line of lines) {
      if (!line) continue
      try {
        this.entries.push(JSON.parse(line) as LogEntry)
      } catch {
        this.entries.push({ level: 50, msg: `unparsable log line: ${line.slice(0, 500)}` })
      }
    }
    callback()
  }

  take(): LogEntry[] {
    const taken = this.entries
    this.entries = []
    return taken
  }
}

export interface Session {
  token: string
  csrf: string
}

export interface FuzzSite {
  app: App
  site: TestSite
  log: LogCapture
  backend: string
  /** The named values cases refer to; kept current by `repair()`. */
  refs: Record<RefName, string>
  blobs: Record<BlobName, Buffer>
  users: { alice: TestUser; bob: TestUser; staff: TestUser }
  sessions: { alice: Session; staff: Session }
  /** After a state-changing request succeeded: put back what later cases rely on (sessions, passwords, drafts). */
  repair(changedPassword: boolean): Promise<void>
  close(): Promise<void>
}

/**
 * The scaled combination brings Redis (a database of the run's shared server,
 * through makeSite); FUZZ_REDIS=1 adds a redis-server of its own to any other
 * run, FUZZ_REDIS=0 keeps Redis out of any.
 */
function ownRedis(): boolean {
  return process.env.FUZZ_REDIS === '1' && !TEST_REDIS_URL
}

export async function startFuzzSite(): Promise<FuzzSite> {
  // The archives are zipped (on libuv's threads) while the site starts: neither waits for the other.
  const blobs = makeBlobs()
  blobs.catch(() => {})
  const redis: RedisServer | undefined = ownRedis() ? await startRedis() : undefined
  const log = new LogCapture()
  let site: TestSite
  try {
    site = await makeSite(redis ? { REDIS_URL: redis.url } : process.env.FUZZ_REDIS === '0' ? { REDIS_URL: '' } : {}, {
      logger: { level: 'warn', stream: log },
      onClose: async () => { await redis?.stop() },
    })
  } catch (error) {
    await redis?.stop()
    throw error
  }
  const backend = [onPostgres ? 'PostgreSQL' : 'SQLite', s3Selected() ? 'S3' : 'disk', ...(site.config.redisUrl ? ['Redis'] : [])].join(' + ')

  try {
    return await seed(site, log, backend, await blobs)
  } catch (error) {
    await site.close()
    throw error
  }
}

/** The bodies cases upload (by name), and the second version's archive the seed publishes. */
async function makeBlobs(): Promise<{ blobs: Record<BlobName, Buffer>; secondVersion: Buffer }> {
  const [zipBlob, zipNoMeta, zipBadMeta, zipOddFormat, zipNested, zipManyEntries, bigHead, secondVersion] = await Promise.all([
    datapack(48),
    zip({ 'assets/minecraft/textures/block/stone.png': png() }),
    zip({ 'pack.mcmeta': '{"pack": {"pack_format": "forty", ' }),
    zip({ 'pack.mcmeta': JSON.stringify({ pack: { pack_format: 1e300, min_format: [-1, 'x'], max_format: { a: 1 } } }) }),
    zip({ 'inner/pack.mcmeta': JSON.stringify({ pack: { pack_format: 5 } }), [`${'deep/'.repeat(60)}x.txt`]: 'x', 'PACK.MCMETA': '{}' }),
    zip(Object.fromEntries(Array.from({ length: 400 }, (_, i) => [`data/x/f${i}.mcfunction`, 'say hi']))),
    datapack(48),
    datapack(57),
  ])
  const blobs: Record<BlobName, Buffer> = {
    png: png(2, 2),
    jpeg: jpeg(),
    gif: gif(),
    webp: webp(),
    mp4: mp4(),
    webm: webm(),
    zip: zipBlob,
    zipNoMeta,
    zipBadMeta,
    zipOddFormat,
    zipNested,
    zipManyEntries,
    notZip: Buffer.from('PK\u0003\u0004 this is not really a zip archive'),
    text: Buffer.from('just some text\n'),
    empty: Buffer.alloc(0),
    // Above S3's 5 MiB part size, so an upload of it takes the multipart path of the object store.
    big: Buffer.concat([bigHead, Buffer.alloc(6 * 1024 * 1024, 7)]),
  }
  return { blobs, secondVersion }
}

async function seed(site: TestSite, log: LogCapture, backend: string, { blobs, secondVersion }: Awaited<ReturnType<typeof makeBlobs>>): Promise<FuzzSite> {
  const { app } = site
  await seedTags(site)
  const alice = await site.user('alice')
  const bob = await site.user('bob')
  const staff = await site.user('root', { staff: true })
  const spare = await createApiToken(app.db, 'alice', 'spare')
  const bobSpare = await createApiToken(app.db, 'bob', 'spare')

  // A published pack with a thumbnail, gallery and two versions; another user's pack beside it.
  const pack = await publishPack(site, alice, { title: 'Fuzz Pack', summary: 'seeded', tags: ['Medieval'], category: 'theme' }, { thumbnail: true })
  const withMedia = randomUUID()
  await saveDraft(site, alice, withMedia, { title: 'Gallery Pack', version_name: '1.0.0' })
  await upload(site, alice, 'version', blobs.zip, { draft: withMedia })
  await upload(site, alice, 'media', blobs.png, { draft: withMedia, filename: 'shot.png' })
  await upload(site, alice, 'media', blobs.webm, { draft: withMedia, filename: 'clip.webm' })
  const published = await app.inject({ method: 'POST', url: '/api/draft/publish/', headers: alice.headers, payload: { draft: withMedia } })
  assert.equal(published.statusCode, 201, published.body)
  const gallery = published.json() as { media: { url: string }[] }
  const form = multipart([{ name: 'version_name', value: '1.1.0' }, { name: 'file', value: secondVersion, filename: 'v2.zip' }])
  const second = await app.inject({
    method: 'POST', url: `/api/packs/alice/${pack.pack_id}/versions/`, headers: { ...alice.headers, ...form.headers }, payload: form.payload,
  })
  assert.equal(second.statusCode, 201, second.body)
  const bobPack = await publishPack(site, bob, { title: 'Bob Pack' })
  const latest = await app.inject({ url: `/api/packs/alice/${pack.pack_id}/latest`, headers: site.gate })
  assert.equal(latest.statusCode, 200, latest.body)

  const fileId = (url: string) => /\/api\/files\/([0-9a-f-]{36})\//.exec(url)![1]!
  const versionFile = fileId((second.json() as { versions: { download_url: string }[] }).versions[0]!.download_url)
  const versionRow = await app.db.selectFrom('files').select('sha256').where('id', '=', versionFile).executeTakeFirstOrThrow()

  const sessions = { alice: await newSession(app, 'alice'), staff: await newSession(app, 'root') }
  const refs = {
    fileThumb: fileId(pack.thumbnail_url!),
    fileVersion: versionFile,
    fileVersionOld: fileId(pack.versions[0]!.download_url),
    fileMedia: fileId(gallery.media[0]!.url),
    fileVideo: fileId(gallery.media[1]!.url),
    fileBob: fileId(bobPack.versions[0]!.download_url),
    fileEtag: `"${versionRow.sha256}"`,
    latestEtag: String(latest.headers.etag),
    namespace: 'alice',
    namespaceUpper: 'ALICE',
    packId: pack.pack_id,
    packIdUpper: pack.pack_id.toUpperCase(),
    galleryPackId: 'gallery-pack',
    bobNamespace: 'bob',
    bobPackId: bobPack.pack_id,
    tokenSpare: spare.id,
    tokenBob: bobSpare.id,
    aliceName: 'alice',
    alicePassword: alice.password,
    aliceToken: alice.token,
    bobToken: bob.token,
    staffName: 'root',
    staffToken: staff.token,
    masterPassword: MASTER_PASSWORD,
    csrfAlice: sessions.alice.csrf,
    gateCookie: await app.gate.cookieValue(),
    tagName: 'Medieval',
    categoryKey: 'theme',
    versionName: '1.1.0',
    assetName: path.basename(app.assets.url('site.css')),
    // Filled by replenish() below.
    draftComplete: '',
    draftPartial: '',
    draftBob: '',
    uploadPending: '',
    uploadInDraft: '',
    uploadBob: '',
    filePending: '',
  } satisfies Record<RefName, string>

  const fz: FuzzSite = {
    app,
    site,
    log,
    backend,
    refs,
    blobs,
    users: { alice, bob, staff },
    sessions,
    async repair(changedPassword) {
      // What is still there, asked all at once: the two sessions, the drafts and the uploads later cases name.
      const tokenHash = (session: Session) => createHash('sha256').update(session.token).digest('hex')
      const [liveSessions, present] = await Promise.all([
        app.db.selectFrom('sessions').select('token_hash')
          .where('token_hash', 'in', [tokenHash(fz.sessions.alice), tokenHash(fz.sessions.staff)]).execute(),
        existing(fz),
      ])
      const alive = new Set(liveSessions.map((row) => row.token_hash))
      for (const [name, username] of [['alice', 'alice'], ['staff', 'root']] as const) {
        if (!alive.has(tokenHash(fz.sessions[name]))) fz.sessions[name] = await newSession(app, username)
      }
      fz.refs.csrfAlice = fz.sessions.alice.csrf
      if (changedPassword) {
        // A case may have changed a password through the settings form: the fixture's must keep working.
        await Promise.all([
          setPassword(app.db, app.passwords, 'alice', alice.password),
          setPassword(app.db, app.passwords, 'root', staff.password),
        ])
      }
      await replenish(fz, present)
      await restoreSeededPacks(fz)
    },
    close: () => site.close(),
  }
  await replenish(fz, await existing(fz))
  log.take()
  return fz
}

/**
 * Cases with a staff token may hide, yank, delete or disable what later cases
 * (and the final check) rely on: the seeded packs must stay public with a
 * version to offer, and the fixture accounts enabled. Staff actions are
 * undone as an operator would (enable, unhide, un-yank); a deleted seeded
 * pack (or one left without versions) is published again under its id, its
 * 30-day hold lifted as an operator could.
 */
async function restoreSeededPacks(fz: FuzzSite): Promise<void> {
  const { app, site } = fz
  const seeded = [
    { user: fz.users.alice, namespace: 'alice', packId: fz.refs.packId, title: 'Fuzz Pack' },
    { user: fz.users.alice, namespace: 'alice', packId: fz.refs.galleryPackId, title: 'Gallery Pack' },
    { user: fz.users.bob, namespace: 'bob', packId: fz.refs.bobPackId, title: 'Bob Pack' },
  ]
  const [enabled, unhidden, unyanked] = await Promise.all([
    app.db.updateTable('users').set({ disabled_at: null }).where('disabled_at', 'is not', null).executeTakeFirst(),
    app.db.updateTable('packs').set({ hidden_at: null }).where('hidden_at', 'is not', null).executeTakeFirst(),
    app.db.updateTable('versions').set({ yanked_at: null }).where('yanked_at', 'is not', null).executeTakeFirst(),
  ])
  let changed = [enabled, unhidden, unyanked].some((r) => Number(r.numUpdatedRows) > 0)
  for (const { user, namespace, packId, title } of seeded) {
    const row = await app.db.selectFrom('packs').leftJoin('versions', 'versions.pack_id', 'packs.id')
      .select(['packs.id', 'versions.id as version_id']).where('packs.namespace', '=', namespace).where('packs.pack_id', '=', packId)
      .executeTakeFirst()
    if (row?.version_id) continue
    if (row) await deletePack(app, CLI_ACTOR, namespace, packId)
    await app.db.deleteFrom('pack_id_holds').where('namespace', '=', namespace).where('pack_id', '=', packId).execute()
    await publishPack(site, user, { title, version_name: '1.0.0' })
    changed = true
  }
  // The SQL above bypassed the services: drop the update-check's answers for the seeded packs.
  if (changed) for (const { namespace, packId } of seeded) await packChanged(app.updateCheckCache, namespace, packId)
}

async function newSession(app: App, username: string): Promise<Session> {
  const user = await requireUser(app.db, username)
  const { token } = await startSession(app.db, user.id, app.config.sessionTtlMs)
  return { token, csrf: csrfTokenFor(app.gate.siteSecret, token) }
}

/** Which of the drafts and uploads that replenish() keeps are still there: two queries, side by side. */
async function existing(fz: FuzzSite): Promise<Set<string>> {
  const { refs } = fz
  const ids = async (table: 'drafts' | 'uploads', wanted: string[]) => {
    const named = wanted.filter((id) => id !== '')
    return named.length === 0 ? [] : await fz.app.db.selectFrom(table).select('id').where('id', 'in', named).execute()
  }
  const found = await Promise.all([
    ids('drafts', [refs.draftComplete, refs.draftPartial, refs.draftBob]),
    ids('uploads', [refs.uploadInDraft, refs.uploadBob, refs.uploadPending]),
  ])
  return new Set(found.flat().map((row) => row.id))
}

/**
 * Keeps a publishable draft, a half-filled draft with a pending upload, one of
 * bob's, and a pending upload outside any draft, so cases that publish or
 * delete them keep finding fresh ones (and publishing keeps moving files).
 */
async function replenish(fz: FuzzSite, present: Set<string>): Promise<void> {
  const site = fz.site
  const { alice, bob } = fz.users
  // Nothing below removes a draft or an upload, so what was there when `present` was read still is.
  const exists = (id: string) => id !== '' && present.has(id)
  if (!exists(fz.refs.draftComplete)) {
    const draft = randomUUID()
    await saveDraft(site, alice, draft, { title: `Fuzz ${draft.slice(0, 8)}`, version_name: '1.0.0', tags: ['Space'], category: 'kind' })
    await upload(site, alice, 'version', fz.blobs.zip, { draft })
    await upload(site, alice, 'thumbnail', fz.blobs.png, { draft })
    fz.refs.draftComplete = draft
  }
  if (!exists(fz.refs.draftPartial) || !exists(fz.refs.uploadInDraft)) {
    const draft = exists(fz.refs.draftPartial) ? fz.refs.draftPartial : randomUUID()
    if (draft !== fz.refs.draftPartial) await saveDraft(site, alice, draft, { summary: 'no title yet' })
    fz.refs.uploadInDraft = (await upload(site, alice, 'media', fz.blobs.gif, { draft })).uuid
    fz.refs.draftPartial = draft
  }
  if (!exists(fz.refs.draftBob) || !exists(fz.refs.uploadBob)) {
    const draft = randomUUID()
    await saveDraft(site, bob, draft, { title: 'Bob Draft' })
    fz.refs.uploadBob = (await upload(site, bob, 'thumbnail', fz.blobs.png, { draft })).uuid
    fz.refs.draftBob = draft
  }
  if (!exists(fz.refs.uploadPending)) {
    const pending = await upload(site, alice, 'thumbnail', fz.blobs.webp)
    fz.refs.uploadPending = pending.uuid
    fz.refs.filePending = pending.fileId
  }
}

/**
 * The storage invariants after a run: every `files` row's bytes are stored and
 * hash to its SHA-256 (read back through the app's own store), and nothing is
 * stored that no row names: no orphan object, no temporary `.partial`, no
 * multipart upload left open on S3. Returns the violations, empty when sound.
 */
export async function storageProblems(fz: FuzzSite): Promise<string[]> {
  const { app } = fz
  const problems: string[] = []
  const rows = await app.db.selectFrom('files').select(['id', 'storage_key', 'size', 'sha256']).execute()
  for (const row of rows) {
    try {
      const hash = createHash('sha256')
      let size = 0
      for await (const chunk of await app.store.get(row.storage_key)) {
        hash.update(chunk as Buffer)
        size += (chunk as Buffer).length
      }
      const digest = hash.digest('hex')
      if (digest !== row.sha256 || size !== Number(row.size)) {
        problems.push(`file ${row.id}: stored ${size} bytes with SHA-256 ${digest}, row says ${row.size} bytes, ${row.sha256}`)
      }
    } catch (error) {
      problems.push(`file ${row.id}: its bytes cannot be read (${(error as Error).message})`)
    }
  }
  const keys = new Set(rows.map((row) => row.storage_key))
  const prefix = app.store instanceof S3FileStore ? app.store.location.prefix : ''
  for (const stored of await storedFiles(fz.site)) {
    if (stored.startsWith('pending-upload:')) {
      problems.push(`an S3 multipart upload was left open: ${stored.slice('pending-upload:'.length)}`)
      continue
    }
    // Disk: <2-char fan-out>/<key>; S3: <prefix><key>.
    const key = app.store instanceof S3FileStore ? stored.slice(prefix.length) : path.basename(stored)
    if (!keys.has(key)) problems.push(`stored object without a files row: ${stored}`)
  }
  return problems
}
