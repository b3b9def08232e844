// Per-user quotas: bytes and number of pending uploads,
// number of drafts. Checked before an upload's body is read, enforced while it
// streams (it stops at what the quota still holds) and counted again under the
// user's lock when its row is written, so concurrent requests cannot squeeze
// past together. Runs on SQLite + disk and on PostgreSQL + S3.
import assert from 'node:assert/strict'
import { randomBytes, randomUUID } from 'node:crypto'
import { Transform, pipeline, type Readable } from 'node:stream'
import { after, before, describe, test } from 'node:test'
import { ConfigError, loadConfig } from '../../src/config/index.js'
import { pendingUsage } from '../../src/uploads/quota-repository.js'
import { expectError, siteWith, storedFiles, type SiteWith, type TestSite, type TestUser } from '../helpers/app.js'
import { multipart, png, type Part } from '../helpers/fixtures.js'

const KiB = 1024
/** Every kind may be 64 KiB; one user may hold 100 KiB of pending uploads. */
const SMALL = { PACKS_MAX_THUMBNAIL_SIZE: '64KiB', PACKS_MAX_MEDIA_SIZE: '64KiB', PACKS_MAX_VERSION_SIZE: '64KiB', PACKS_PENDING_UPLOAD_QUOTA: '100KiB' }

/** A PNG signature followed by padding: accepted as an image, exactly `size` bytes. */
function pngOfSize(size: number): Buffer {
  const head = png()
  return Buffer.concat([head, randomBytes(size - head.length)])
}

function upload(site: TestSite, user: TestUser, size: number, extra: Part[] = []) {
  const form = multipart([{ name: 'kind', value: 'media' }, ...extra, { name: 'file', value: pngOfSize(size), filename: 'a.png' }])
  return site.app.inject({ method: 'POST', url: '/api/uploads/', headers: { ...user.headers, ...form.headers }, payload: form.payload })
}

const saveDraft = (site: TestSite, user: TestUser, draft: string, data: Record<string, unknown> = { title: 'x' }) =>
  site.app.inject({ method: 'POST', url: '/api/draft/', headers: user.headers, payload: { draft, data } })

async function userId(site: TestSite, username: string): Promise<string> {
  return (await site.app.db.selectFrom('users').select('id').where('username', '=', username).executeTakeFirstOrThrow()).id
}

async function rowCount(site: TestSite, table: 'files' | 'uploads' | 'drafts'): Promise<number> {
  return Number((await site.app.db.selectFrom(table).select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow()).n)
}

/** Rows and stored bytes: a refused request must leave every one as it was. */
async function kept(site: TestSite) {
  return { files: await storedFiles(site), fileRows: await rowCount(site, 'files'), uploadRows: await rowCount(site, 'uploads'), drafts: await rowCount(site, 'drafts') }
}

// Two sites for the file, made at once: small byte limits, and small counts. Quotas are per user and each
// describe works as users of its own, so none can use up another's; what a describe compares (rows, stored
// objects) it compares before and after its own requests, and the describes run one after another.
let small: SiteWith<'alice' | 'bob' | 'carol' | 'dave'>
let counted: SiteWith<'alice' | 'bob' | 'erin'>
before(async () => {
  ;[small, counted] = await Promise.all([
    siteWith({ env: SMALL, users: ['alice', 'bob', 'carol', 'dave'] }),
    siteWith({ env: { PACKS_MAX_PENDING_UPLOADS: '3', PACKS_MAX_DRAFTS: '2' }, users: ['alice', 'bob', 'erin'] }),
  ])
})
after(async () => {
  await small?.site.close()
  await counted?.site.close()
})

describe('configuration', () => {
  test('defaults: 2 GiB and 500 pending uploads, 100 drafts per user', () => {
    assert.deepEqual(loadConfig({}).userQuotas, { pendingUploadBytes: 2 * 1024 ** 3, pendingUploads: 500, drafts: 100 })
    const config = loadConfig({ PACKS_PENDING_UPLOAD_QUOTA: '1GiB', PACKS_MAX_PENDING_UPLOADS: '20', PACKS_MAX_DRAFTS: '3' })
    assert.deepEqual(config.userQuotas, { pendingUploadBytes: 1024 ** 3, pendingUploads: 20, drafts: 3 })
  })

  test('a bad value, or a byte quota below the largest upload limit, stops start-up naming the variable', () => {
    const cases: Array<[Record<string, string>, string]> = [
      [{ PACKS_PENDING_UPLOAD_QUOTA: 'lots' }, 'PACKS_PENDING_UPLOAD_QUOTA'],
      [{ PACKS_PENDING_UPLOAD_QUOTA: '0' }, 'PACKS_PENDING_UPLOAD_QUOTA'],
      [{ PACKS_PENDING_UPLOAD_QUOTA: '400MiB' }, 'PACKS_PENDING_UPLOAD_QUOTA'],
      [{ PACKS_MAX_PENDING_UPLOADS: '0' }, 'PACKS_MAX_PENDING_UPLOADS'],
      [{ PACKS_MAX_DRAFTS: '-1' }, 'PACKS_MAX_DRAFTS'],
      [{ PACKS_MAX_DRAFTS: '2.5' }, 'PACKS_MAX_DRAFTS'],
    ]
    for (const [env, name] of cases) {
      assert.throws(() => loadConfig(env), (error: unknown) => error instanceof ConfigError && error.message.startsWith(`${name}:`), JSON.stringify(env))
    }
    assert.equal(loadConfig({ PACKS_PENDING_UPLOAD_QUOTA: '400MiB', PACKS_MAX_VERSION_SIZE: '300MiB' }).userQuotas.pendingUploadBytes, 400 * 1024 ** 2)
  })
})

describe('pending upload bytes', () => {
  let site: TestSite
  let alice: TestUser
  let bob: TestUser
  before(() => ({ site, alice, bob } = small))

  test('uploads fit until the quota is reached; the next one is 413 with a clear detail and nothing kept; deleting makes room', async () => {
    const first = await upload(site, alice, 60 * KiB)
    assert.equal(first.statusCode, 200, first.body)
    const second = await upload(site, alice, 40 * KiB)
    assert.equal(second.statusCode, 200, second.body)
    assert.deepEqual(await pendingUsage(site.app.db, await userId(site, alice.username)), { uploads: 2, bytes: 100 * KiB })

    const before = await kept(site)
    const detail = expectError(await upload(site, alice, 1 * KiB), 413)
    assert.match(detail, /quota of 100 KiB \(100\.0 KiB in use\); publish your drafts or delete some/)
    assert.deepEqual(await kept(site), before, 'nothing kept after a refused upload')

    // The quota is the user's own: bob still has all of his.
    const bobs = await upload(site, bob, 60 * KiB)
    assert.equal(bobs.statusCode, 200, bobs.body)

    const { uuid } = first.json() as { uuid: string }
    const deleted = await site.app.inject({ method: 'POST', url: `/api/uploads/${uuid}/delete/`, headers: alice.headers })
    assert.equal(deleted.statusCode, 200, deleted.body)
    const again = await upload(site, alice, 60 * KiB)
    assert.equal(again.statusCode, 200, again.body)
    expectError(await upload(site, alice, 1 * KiB), 413, /quota of 100 KiB/)
  })
})

describe('a file larger than what the quota still holds', () => {
  let site: TestSite
  let alice: TestUser
  before(() => ({ site, carol: alice } = small))

  test('is cut off while streaming: storage never receives more than the quota left', async () => {
    assert.equal((await upload(site, alice, 60 * KiB)).statusCode, 200)
    // Count what reaches the store from now on.
    const store = site.app.store
    const put = store.put.bind(store)
    let received = 0
    // pipeline, not pipe: the metering stream's failure must reach the store as it would unwrapped.
    store.put = (key: string, body: Readable) => put(key, pipeline(body, new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        received += chunk.length
        callback(null, chunk)
      },
    }), () => {}))
    try {
      const before = await kept(site)
      // Within the 64 KiB media limit, but only 40 KiB of the quota are left.
      expectError(await upload(site, alice, 64 * KiB), 413, /quota of 100 KiB \(60\.0 KiB in use\)/)
      assert.ok(received <= 40 * KiB, `the store received ${received} bytes; the quota left only ${40 * KiB}`)
      assert.deepEqual(await kept(site), before)
    } finally {
      store.put = put
    }
  })
})

describe('concurrent uploads by one user', () => {
  let site: TestSite
  let alice: TestUser
  before(() => ({ site, dave: alice } = small))

  test('cannot squeeze past the quota together: exactly as many as fit get in, the rest are 413', async () => {
    const storedBefore = (await storedFiles(site)).length
    // Each passes the check made before its body is read (nothing is in use yet); only three of 30 KiB fit in 100 KiB.
    const results = await Promise.all(Array.from({ length: 8 }, () => upload(site, alice, 30 * KiB)))
    const statuses = results.map((r) => r.statusCode).sort()
    assert.deepEqual(statuses, [200, 200, 200, 413, 413, 413, 413, 413], results.map((r) => r.body).join('\n'))
    for (const res of results.filter((r) => r.statusCode === 413)) expectError(res, 413, /quota of 100 KiB/)
    assert.deepEqual(await pendingUsage(site.app.db, await userId(site, alice.username)), { uploads: 3, bytes: 90 * KiB })
    assert.equal((await storedFiles(site)).length - storedBefore, 3, 'the refused uploads left no bytes')
  })
})

describe('number of pending uploads', () => {
  let site: TestSite
  let alice: TestUser
  before(() => ({ site, erin: alice } = counted))

  test('past the count, 409 before any byte is stored; concurrent ones stop at the count too', async () => {
    const results = await Promise.all(Array.from({ length: 6 }, () => upload(site, alice, 100)))
    assert.deepEqual(results.map((r) => r.statusCode).sort(), [200, 200, 200, 409, 409, 409], results.map((r) => r.body).join('\n'))
    const before = await kept(site)
    expectError(await upload(site, alice, 100), 409, /already have 3 pending uploads, the most one user may keep \(3\)/)
    assert.deepEqual(await kept(site), before)
  })
})

describe('number of drafts', () => {
  let site: TestSite
  let alice: TestUser
  let bob: TestUser
  before(() => ({ site, alice, bob } = counted))

  test('a new draft past the cap is 409 (autosave and upload alike); existing drafts still save; deleting makes room', async () => {
    const [one, two, three] = [randomUUID(), randomUUID(), randomUUID()]
    assert.equal((await saveDraft(site, alice, one)).statusCode, 200)
    // The second draft is made by an upload, as the create page does when a file comes before any typing.
    const viaUpload = await upload(site, alice, 100, [{ name: 'draft_uuid', value: two }])
    assert.equal(viaUpload.statusCode, 200, viaUpload.body)

    const before = await kept(site)
    expectError(await saveDraft(site, alice, three), 409, /already have 2 drafts, the most one user may keep \(2\); publish or delete some/)
    expectError(await upload(site, alice, 100, [{ name: 'draft_uuid', value: three }]), 409, /already have 2 drafts/)
    // draft_uuid after the file: refused when the row is written, with the stored bytes removed.
    const form = multipart([{ name: 'file', value: pngOfSize(100), filename: 'a.png' }, { name: 'draft_uuid', value: three }])
    expectError(await site.app.inject({ method: 'POST', url: '/api/uploads/', headers: { ...alice.headers, ...form.headers }, payload: form.payload }), 409)
    assert.deepEqual(await kept(site), before, 'nothing kept')

    // Autosaves and uploads of the existing drafts go on; bob has his own cap.
    assert.equal((await saveDraft(site, alice, one, { title: 'changed' })).statusCode, 200)
    assert.equal((await upload(site, alice, 100, [{ name: 'draft_uuid', value: one }])).statusCode, 200)
    assert.equal((await saveDraft(site, bob, randomUUID())).statusCode, 200)

    const deleted = await site.app.inject({ method: 'DELETE', url: '/api/draft/', query: { draft: two }, headers: alice.headers })
    assert.equal(deleted.statusCode, 200, deleted.body)
    assert.equal((await saveDraft(site, alice, three)).statusCode, 200)
  })

  test('concurrent new drafts stop exactly at the cap', async () => {
    const carol = await site.user('carol')
    const results = await Promise.all(Array.from({ length: 6 }, () => saveDraft(site, carol, randomUUID())))
    assert.deepEqual(results.map((r) => r.statusCode).sort(), [200, 200, 409, 409, 409, 409], results.map((r) => r.body).join('\n'))
    const drafts = await site.app.db.selectFrom('drafts').select('id').where('user_id', '=', await userId(site, 'carol')).execute()
    assert.equal(drafts.length, 2)
  })

  test('the OpenAPI document lists the 409s', async () => {
    const doc = (await site.app.inject({ method: 'GET', url: '/api/schema/', headers: site.gate })).json()
    assert.ok(doc.paths['/api/draft/'].post.responses['409'])
    assert.ok(doc.paths['/api/uploads/'].post.responses['409'])
    assert.ok(doc.paths['/api/uploads/'].post.responses['413'])
  })
})
