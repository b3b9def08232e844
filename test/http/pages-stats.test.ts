// Staff → Statistics: the stats snapshot as a page, for staff only.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import type { StatsSnapshotBody } from '../../src/api/stats.js'
import { formatBytes, formatDuration, formatMs } from '../../src/web/format.js'
import { siteWith, type TestSite, type TestUser } from '../helpers/app.js'

const HTML = { accept: 'text/html' }

describe('staff statistics page', () => {
  let site: TestSite
  let staff: TestUser
  let member: TestUser

  // The first view builds the first snapshot, so it shows the traffic before it; the window (above a
  // second, like every window a test relies on) is there to be shown with its fraction.
  before(async () => ({ site, boss: staff, member } = await siteWith({ env: { PACKS_STATS_CACHE: '1500ms' }, users: ['member'], staff: ['boss'] })))
  after(() => site.close())

  const view = (headers: Record<string, string>) => site.app.inject({ url: '/staff/stats/', headers: { ...HTML, ...headers } })

  test('staff see the headline numbers, the per-route table and SVG charts with a title', async () => {
    // Some traffic, so the table has rows.
    for (let i = 0; i < 3; i++) await site.app.inject({ url: '/api/tags/autocomplete/', headers: site.gate })
    const res = await view(staff.headers)
    assert.equal(res.statusCode, 200)
    assert.match(String(res.headers['content-type']), /^text\/html/)
    const body = res.body
    for (const heading of ['Uptime', 'Version', 'Memory (RSS)', 'CPU time', 'Event-loop delay', 'Users', 'Packs', 'Versions', 'Drafts', 'Pending uploads', 'Stored files']) {
      assert.ok(body.includes(`<dt>${heading}</dt>`), `shows ${heading}`)
    }
    assert.match(body, /Packs 1\.0\.0/)
    assert.match(body, /\d+\.\d MiB/, 'memory in MiB')
    assert.match(body, /Generated at <time datetime="\d{4}-[^"]+Z"/)
    assert.match(body, /reused for 1\.5 s/)
    // Users: boss and member.
    assert.match(body, /<dt>Users<\/dt><dd><span class="stat-value">2<\/span>/)
    // The table and the charts show the same route.
    assert.match(body, /<th scope="row" class="route"><code>GET \/api\/tags\/autocomplete\/<\/code><\/th><td class="num">3<\/td>/)
    const svgs = body.match(/<svg [^>]*role="img"[^>]*>\s*<title id="[^"]+">[^<]+<\/title>/g) ?? []
    assert.equal(svgs.length, 2, 'two charts, each with a <title>')
    assert.match(body, /<title id="chart-requests-title">Requests per route<\/title>/)
    assert.match(body, /<text class="chart-label" x="\d+" y="\d+">GET \/api\/tags\/autocomplete\/<\/text>/)
    assert.ok(!/ style=/.test(body), 'no style attributes (CSP: style-src self)')
  })

  test('non-staff users get the 403 page, in HTML; the API stays JSON', async () => {
    const res = await view(member.headers)
    assert.equal(res.statusCode, 403)
    assert.match(String(res.headers['content-type']), /^text\/html/)
    assert.match(res.body, /<h1>Forbidden<\/h1>/)
    assert.match(res.body, /Staff only/)
    assert.doesNotMatch(res.body, /<svg [^>]*role="img"/, 'no chart (the header\'s bell is an icon, not a chart)')
    const api = await site.app.inject({ url: '/api/stats/', headers: member.headers })
    assert.equal(api.statusCode, 403)
    assert.match(String(api.headers['content-type']), /^application\/json/)
  })

  test('anonymous browsers are sent to sign in and back', async () => {
    const res = await view(site.gate)
    assert.equal(res.statusCode, 303)
    assert.equal(res.headers.location, '/login/?next=%2Fstaff%2Fstats%2F')
  })

  test('every value from the snapshot is escaped', async () => {
    const real = site.app.statsSnapshot
    const evil = '<script>alert("x")</script>'
    site.app.statsSnapshot = async () => {
      const s = await real()
      const snapshot: StatsSnapshotBody = {
        ...s,
        version: evil,
        node_version: evil,
        requests: {
          total: 7,
          routes: [{ route: `GET /${evil}`, count: 7, errors: 2, p50_ms: 1.5, p90_ms: 20, p99_ms: 250, max_ms: 300 }],
        },
      }
      return snapshot
    }
    try {
      const res = await view(staff.headers)
      assert.equal(res.statusCode, 200)
      assert.ok(!res.body.includes('<script>alert'), 'no live script from the snapshot')
      assert.match(res.body, /&lt;script&gt;alert\(&quot;x&quot;\)&lt;\/script&gt;/)
      // Errors appear as a column only when a route has some.
      assert.match(res.body, /<th scope="col" class="num">5xx errors<\/th>/)
      assert.match(res.body, /<td class="num has-errors">2<\/td>/)
      assert.match(res.body, /<td class="num">1\.5 ms<\/td><td class="num">20\.0 ms<\/td><td class="num">250 ms<\/td>/)
    } finally {
      site.app.statsSnapshot = real
    }
  })

  test('the page and GET /api/stats/ share one cached snapshot', async () => {
    const { site: cached, boss2: boss } = await siteWith({ env: { PACKS_STATS_CACHE: '1h' }, staff: ['boss2'] })
    try {
      const api = (await cached.app.inject({ url: '/api/stats/', headers: boss.headers })).json() as StatsSnapshotBody
      const page = await cached.app.inject({ url: '/staff/stats/', headers: { ...HTML, ...boss.headers } })
      assert.ok(page.body.includes(`<time datetime="${api.generated_at}"`), 'the page shows the API\'s generated_at')
    } finally {
      await cached.close()
    }
  })
})

describe('number formatting', () => {
  test('durations, bytes and milliseconds read like a person would write them', () => {
    assert.equal(formatDuration(42), '42 s')
    assert.equal(formatDuration(3 * 60 + 5), '3 min')
    assert.equal(formatDuration(2 * 3600 + 60), '2 h 1 min')
    assert.equal(formatDuration(86_400 + 3 * 3600 + 4 * 60), '1 d 3 h 4 min')
    assert.equal(formatBytes(0), '0 bytes')
    assert.equal(formatBytes(1023), '1023 bytes')
    assert.equal(formatBytes(1536), '1.50 KiB')
    assert.equal(formatBytes(5 * 1024 * 1024 * 1024), '5.00 GiB')
    assert.equal(formatBytes(150 * 1024 * 1024), '150 MiB')
    assert.equal(formatMs(0), '0 ms')
    assert.equal(formatMs(0.042), '0.042 ms')
    assert.equal(formatMs(3.14159), '3.1 ms')
    assert.equal(formatMs(1234.5), '1235 ms')
  })
})
