import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { PROJECT_ROOT } from '../../src/config/paths.js'
import { KEY_PREFIX, openRedis } from '../../src/shared-state/redis.js'
import { expectError, makeSite, siteWith, type TestSite } from '../helpers/app.js'

const packageVersion = (JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as { version: string }).version

interface Snapshot {
  generated_at: string
  cache_seconds: number
  version: string
  node_version: string
  uptime_seconds: number
  process: { pid: number; memory: Record<string, number>; cpu: Record<string, number> }
  event_loop: { delay: Record<string, number> }
  requests: { total: number; routes: { route: string; count: number; errors: number; p50_ms: number; p99_ms: number }[] }
  counts: Record<string, number>
  storage: { files: number; bytes: number }
}

describe('GET /api/stats/', () => {
  let site: TestSite
  let staff: Record<string, string>
  let member: Record<string, string>

  before(async () => {
    const made = await siteWith({ users: ['member'], staff: ['admin'] })
    ;({ site } = made)
    staff = made.admin.headers
    member = made.member.headers
  })
  after(async () => site.close())

  test('401 without credentials or with the gate alone, 403 for a non-staff user', async () => {
    expectError(await site.app.inject({ method: 'GET', url: '/api/stats/' }), 401)
    expectError(await site.app.inject({ method: 'GET', url: '/api/stats/', headers: site.gate }), 401)
    expectError(await site.app.inject({ method: 'GET', url: '/api/stats/', headers: { authorization: 'Bearer admin packs_wrong' } }), 401)
    expectError(await site.app.inject({ method: 'GET', url: '/api/stats/', headers: member }), 403)
  })

  test('staff get a snapshot with every member', async () => {
    const res = await site.app.inject({ method: 'GET', url: '/api/stats', headers: staff })
    assert.equal(res.statusCode, 200, res.body)
    assert.match(String(res.headers['content-type']), /^application\/json/)
    const body = res.json() as Snapshot
    assert.match(body.generated_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    assert.ok(Math.abs(Date.parse(body.generated_at) - Date.now()) < 60_000)
    assert.equal(body.cache_seconds, 20)
    assert.equal(body.version, packageVersion)
    assert.equal(body.node_version, process.version)
    assert.ok(body.uptime_seconds > 0)
    assert.equal(body.process.pid, process.pid)
    assert.deepEqual(Object.keys(body.process.memory).sort(), ['external', 'heap_total', 'heap_used', 'rss'])
    for (const bytes of Object.values(body.process.memory)) assert.ok(Number.isInteger(bytes) && bytes > 0)
    assert.ok(body.process.cpu.user_ms! > 0 && body.process.cpu.system_ms! >= 0)
    assert.deepEqual(Object.keys(body.event_loop.delay).sort(), ['max_ms', 'p50_ms', 'p99_ms'])
    for (const ms of Object.values(body.event_loop.delay)) assert.ok(ms >= 0)
    assert.ok(body.event_loop.delay.p50_ms! <= body.event_loop.delay.max_ms!)
    assert.ok(body.requests.total >= 4, 'the earlier refused requests were counted')
    assert.ok(Array.isArray(body.requests.routes))
    assert.deepEqual(body.counts, { users: 2, packs: 0, versions: 0, pending_uploads: 0, drafts: 0, api_tokens: 2, downloads: 0, downloads_today: 0 })
    assert.deepEqual(body.storage, { files: 0, bytes: 0 })
  })

  test('two calls within the cache window return the same snapshot', async () => {
    const first = await site.app.inject({ method: 'GET', url: '/api/stats/', headers: staff })
    await site.user('newcomer')
    const second = await site.app.inject({ method: 'GET', url: '/api/stats/', headers: staff })
    assert.equal(second.statusCode, 200)
    assert.equal(second.body, first.body, 'byte-identical: same generated_at, counts not yet updated')
  })

  test('documents the operation with bearerAuth in /api/schema/', async () => {
    const res = await site.app.inject({ method: 'GET', url: '/api/schema/', headers: site.gate })
    const op = res.json().paths['/api/stats/'].get
    assert.deepEqual(op.security, [{ bearerAuth: [] }])
    assert.deepEqual(Object.keys(op.responses).sort(), ['200', '401', '403'])
  })
})

describe('GET /api/stats/ after the cache window', () => {
  // The app's clock stands still unless the test moves it: the window passes when the test says so.
  let now = Date.now()
  let site: TestSite
  before(async () => {
    site = await makeSite({ PACKS_STATS_CACHE: '20s' }, { clock: () => now })
  })
  after(async () => site.close())

  /** The window's last millisecond passes: on the app's clock, and on Redis's where the site keeps its snapshot there. */
  async function windowEnds(): Promise<void> {
    now += 1
    if (site.config.redisUrl) {
      const redis = await openRedis(site.config.redisUrl)
      try {
        await redis.client.del(`${KEY_PREFIX}stats:snapshot`)
      } finally {
        await redis.close()
      }
    }
  }

  test('builds a new snapshot with fresh counts and route metrics', async () => {
    const { headers } = await site.user('admin', { staff: true })
    const first = (await site.app.inject({ method: 'GET', url: '/api/stats/', headers })).json() as Snapshot
    assert.equal(first.counts.users, 1)
    assert.equal(first.cache_seconds, 20)

    await site.user('second')
    await site.user('third')
    const updateCheck = await site.app.inject({ method: 'GET', url: '/api/packs/nobody/nothing/latest', headers: site.gate })
    assert.equal(updateCheck.statusCode, 404)
    now += 19_999
    const within = (await site.app.inject({ method: 'GET', url: '/api/stats/', headers })).json() as Snapshot
    assert.deepEqual(within, first, 'the window\'s last millisecond still answers with the first snapshot')
    await windowEnds()

    const second = (await site.app.inject({ method: 'GET', url: '/api/stats/', headers })).json() as Snapshot
    assert.notEqual(second.generated_at, first.generated_at)
    assert.equal(Date.parse(second.generated_at) - Date.parse(first.generated_at), 20_000, 'generated on the app\'s clock, one window later')
    assert.equal(second.counts.users, 3)
    assert.equal(second.counts.api_tokens, 3)
    assert.ok(second.requests.total > first.requests.total)
    const route = second.requests.routes.find((r) => r.route === 'GET /api/packs/:namespace/:pack_id/latest')
    assert.ok(route, `update-check route is listed: ${JSON.stringify(second.requests.routes.map((r) => r.route))}`)
    assert.equal(route.count, 1)
    assert.equal(route.errors, 0, 'a 404 is not a server error')
    const stats = second.requests.routes.find((r) => r.route === 'GET /api/stats/')
    assert.equal(stats?.count, 2, 'the earlier stats calls were recorded')
  })
})
