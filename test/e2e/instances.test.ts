// Two server processes, as `npm start` runs them, on one PostgreSQL, one
// S3-compatible store and one Redis: what goes in through one instance comes
// out of the other at once. Runs in the PostgreSQL pass of the suite
// (scripts/with-postgres.sh sets PACKS_TEST_DATABASE_URL; .ci/run does it).
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { createHash, randomUUID } from 'node:crypto'
import { createTestDatabase, TEST_DATABASE_URL, type TestDatabase } from '../helpers/database.js'
import { datapack, png } from '../helpers/fixtures.js'
import { redisSkip, startRedis, type RedisServer } from '../helpers/redis.js'
import { s3Bucket } from '../helpers/s3.js'
import { cliOk, lastLine, startServer, type RunningServer } from '../helpers/server.js'

const SITE_PASSWORD = 'two-instances-password'
const skip = !TEST_DATABASE_URL ? 'needs PostgreSQL: run through scripts/with-postgres.sh (npm run test:postgres; .ci/run does)' : redisSkip

describe('two instances on PostgreSQL + object store + Redis', { skip }, () => {
  let database: TestDatabase
  let redis: RedisServer
  let a: RunningServer
  let b: RunningServer
  let auth: Record<string, string>
  const gate = { 'x-master-password': SITE_PASSWORD }

  before(async () => {
    database = await createTestDatabase()
    const bucket = await s3Bucket()
    redis = await startRedis()
    const env = {
      PACKS_MASTER_PASSWORD: SITE_PASSWORD,
      DATABASE_URL: database.url!,
      STORAGE_URL: bucket.storageUrl,
      REDIS_URL: redis.url,
      PACKS_AUTH_FAILURE_LIMIT: '3',
      PACKS_AUTH_FAILURE_WINDOW: '1h',
    }
    a = await startServer({ env })
    b = await startServer({ env })
    await cliOk(['user', 'create', 'alex', '--password', 'alex-password-1'], a.env)
    const token = lastLine((await cliOk(['token', 'create', 'alex'], a.env)).stdout)
    auth = { authorization: `Bearer alex ${token}` }
  })
  after(async () => {
    await a?.stop()
    await b?.stop()
    await redis?.stop()
    await database?.drop()
  })

  async function uploadThrough(server: RunningServer, kind: string, bytes: Buffer, draft: string): Promise<{ url: string; uuid: string }> {
    const form = new FormData()
    form.set('kind', kind)
    form.set('draft_uuid', draft)
    form.set('file', new Blob([new Uint8Array(bytes)]), `${kind}.bin`)
    const res = await fetch(`${server.url}/api/uploads/`, { method: 'POST', headers: auth, body: form })
    assert.equal(res.status, 200, await res.clone().text())
    return (await res.json()) as { url: string; uuid: string }
  }

  test('an upload through A is served by B, byte for byte', async () => {
    const bytes = png(8, 8, [10, 200, 30])
    const uploaded = await uploadThrough(a, 'thumbnail', bytes, randomUUID())
    const served = await fetch(`${b.url}${uploaded.url}`, { headers: gate })
    assert.equal(served.status, 200)
    assert.ok(Buffer.from(await served.arrayBuffer()).equals(bytes))
  })

  test('a draft saved through A loads through B', async () => {
    const draft = randomUUID()
    const saved = await fetch(`${a.url}/api/draft/`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ draft, data: { title: 'Shared Draft', tags: ['x'] } }),
    })
    assert.equal(saved.status, 200)
    const loaded = await fetch(`${b.url}/api/draft/?draft=${draft}`, { headers: auth })
    assert.equal(loaded.status, 200)
    assert.deepEqual(((await loaded.json()) as { data: unknown }).data, { title: 'Shared Draft', tags: ['x'] })
  })

  test("a version published through A is B's update-check answer on the very next request", async () => {
    const draft = randomUUID()
    await fetch(`${a.url}/api/draft/`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ draft, data: { title: 'Twin Peaks', version_name: '1.0.0' } }),
    })
    await uploadThrough(a, 'version', await datapack(48), draft)
    // B answers (and caches) "not found" before the publish...
    assert.equal((await fetch(`${b.url}/api/packs/alex/twin-peaks/latest`, { headers: gate })).status, 404)
    const published = await fetch(`${a.url}/api/draft/publish/`, {
      method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ draft }),
    })
    assert.equal(published.status, 201, await published.text())
    // ...and the published version right after it, with no waiting.
    const first = await fetch(`${b.url}/api/packs/alex/twin-peaks/latest`, { headers: gate })
    assert.equal(first.status, 200)
    assert.equal(((await first.json()) as { version: string }).version, '1.0.0')

    const archive = await datapack(57)
    const form = new FormData()
    form.set('version_name', '1.1.0')
    form.set('file', new Blob([new Uint8Array(archive)]), 'v2.zip')
    const added = await fetch(`${a.url}/api/packs/alex/twin-peaks/versions/`, { method: 'POST', headers: auth, body: form })
    assert.equal(added.status, 201, await added.text())
    const second = await fetch(`${b.url}/api/packs/alex/twin-peaks/latest`, { headers: gate })
    const latest = (await second.json()) as { version: string; pack_format: number; download_url: string }
    assert.deepEqual([latest.version, latest.pack_format], ['1.1.0', 57])
    const download = await fetch(latest.download_url, { headers: gate })
    assert.equal(createHash('sha256').update(Buffer.from(await download.arrayBuffer())).digest('hex'), createHash('sha256').update(archive).digest('hex'))
  })

  test('failed gate attempts are counted across both instances', async () => {
    const attempt = (server: RunningServer, password: string) =>
      fetch(`${server.url}/api/packs/alex/twin-peaks/latest`, { headers: { 'x-master-password': password } })
    assert.equal((await attempt(a, 'wrong-1')).status, 401)
    assert.equal((await attempt(b, 'wrong-2')).status, 401)
    assert.equal((await attempt(a, 'wrong-3')).status, 401)
    // The limit (3) is reached across A and B together: now even the right password waits, on both.
    const blockedB = await attempt(b, SITE_PASSWORD)
    assert.equal(blockedB.status, 429)
    assert.ok(Number(blockedB.headers.get('retry-after')) > 0)
    assert.equal((await attempt(a, SITE_PASSWORD)).status, 429)
  })
})
