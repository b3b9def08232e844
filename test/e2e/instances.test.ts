// backends: scaled — instances share PostgreSQL, S3 and Redis; SQLite is one machine's file and memory one process's
// Two server processes, as `npm start` runs them, on one PostgreSQL, one
// S3-compatible store and one Redis: what goes in through one instance comes
// out of the other at once. The scaled combination's backends
// (scripts/run-tests.js), each instance given the same fresh database, bucket
// and Redis database.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { until } from '../helpers/wait.js'
import { createHash, randomUUID } from 'node:crypto'
import { TEST_DATABASE_URL } from '../helpers/database.js'
import { datapack, png } from '../helpers/fixtures.js'
import { redisSkip, startRedis, type RedisServer } from '../helpers/redis.js'
import { cliOk, lastLine, startServer, suiteBackends, type RunningServer, type SuiteBackends } from '../helpers/server.js'

const SITE_PASSWORD = 'two-instances-password'
const skip = !TEST_DATABASE_URL || process.env.PACKS_TEST_STORAGE !== 's3'
  ? 'needs the scaled combination: node scripts/run-tests.js --backends scaled test/e2e/instances'
  : redisSkip

describe('two instances on PostgreSQL + object store + Redis', { skip }, () => {
  let backends: SuiteBackends
  /** Started here when the run has no shared redis-server. */
  let redis: RedisServer | undefined
  let a: RunningServer
  let b: RunningServer
  let auth: Record<string, string>
  const gate = { 'x-master-password': SITE_PASSWORD }

  before(async () => {
    backends = await suiteBackends()
    if (!backends.env.REDIS_URL) redis = await startRedis()
    const env = {
      PACKS_MASTER_PASSWORD: SITE_PASSWORD,
      ...backends.env,
      ...(redis ? { REDIS_URL: redis.url } : {}),
      PACKS_AUTH_FAILURE_LIMIT: '3',
      PACKS_AUTH_FAILURE_WINDOW: '1h',
    }
    ;[a, b] = await Promise.all([startServer({ env }), startServer({ env })])
    await cliOk(['user', 'create', 'alex', '--password', 'alex-password-1'], a.env)
    const token = lastLine((await cliOk(['token', 'create', 'alex'], a.env)).stdout)
    auth = { authorization: `Bearer alex ${token}` }
  })
  after(async () => {
    await a?.stop()
    await b?.stop()
    await redis?.stop()
    await backends?.release()
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

  test("a version published through A is B's update-check answer as soon as the change reaches it", async () => {
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
    // ...and the published version once the change has reached it (Redis pub/sub: milliseconds;
    // test/http/update-check-feed.test.ts measures it), never after the feed's outer bound.
    const answerOfB = async () => {
      const res = await fetch(`${b.url}/api/packs/alex/twin-peaks/latest`, { headers: gate })
      return res.status === 200 ? ((await res.json()) as { version: string; pack_format: number; download_url: string }) : undefined
    }
    assert.equal((await until(async () => (await answerOfB())?.version === '1.0.0' || undefined, 'B answers the published version', 3000)), true)

    const archive = await datapack(57)
    const form = new FormData()
    form.set('version_name', '1.1.0')
    form.set('file', new Blob([new Uint8Array(archive)]), 'v2.zip')
    const added = await fetch(`${a.url}/api/packs/alex/twin-peaks/versions/`, { method: 'POST', headers: auth, body: form })
    assert.equal(added.status, 201, await added.text())
    const latest = await until(async () => {
      const answer = await answerOfB()
      return answer?.version === '1.1.0' ? answer : undefined
    }, 'B answers the new version', 3000)
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
