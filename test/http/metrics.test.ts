// GET /metrics (src/stats/metrics-routes.ts, src/stats/prometheus.ts): who
// may scrape it, what a Prometheus parser finds in it, and that its counters
// follow the requests while its label values stay bounded. Over a real
// socket (the update-check's fast path, the bytes of a download):
// test/e2e/metrics.test.ts.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { PROJECT_ROOT } from '../../src/config/paths.js'
import { expectError, makeSite, siteWith, type TestSite, type TestUser } from '../helpers/app.js'
import { png } from '../helpers/fixtures.js'
import { publishPack, upload, type PackJson } from '../helpers/packs.js'
import { METRICS_TOKEN, histogramOf, labelValues, parseExposition, scrape, scrapeHeaders, valueOf } from '../helpers/prometheus.js'

let site: TestSite
let alice: TestUser
let root: TestUser
let pack: PackJson
let now = Date.parse('2026-12-02T12:00:00Z')

before(async () => {
  ;({ site, alice, root } = await siteWith({ users: ['alice'], staff: ['root'], env: { PACKS_METRICS_TOKEN: METRICS_TOKEN }, clock: () => now }))
  pack = await publishPack(site, alice, { title: 'Measured Pack' })
})
after(() => site.close())

const get = (url: string, headers: Record<string, string> = {}) => site.app.inject({ method: 'GET', url, headers })
const updateCheck = (packId: string) => get(`/api/packs/${pack.namespace}/${packId}/latest`, site.gate)

describe('who may scrape', () => {
  test('without PACKS_METRICS_TOKEN /metrics is off: 404 with a detail, whatever the caller holds', async () => {
    const plain = await makeSite()
    try {
      const staff = await plain.user('staffer', { staff: true })
      for (const headers of [{}, plain.gate, staff.headers, scrapeHeaders]) {
        expectError(await plain.app.inject({ method: 'GET', url: '/metrics', headers }), 404, /^metrics are off on this site: set PACKS_METRICS_TOKEN/)
      }
    } finally {
      await plain.close()
    }
  })

  test('no token, a wrong one, the gate password, a user\'s or a staff member\'s API token: 401 with a detail', async () => {
    expectError(await get('/metrics'), 401, /^send the scrape token: Authorization: Bearer <PACKS_METRICS_TOKEN>$/)
    expectError(await get('/metrics', site.gate), 401, /send the scrape token/)
    for (const authorization of [`Bearer ${METRICS_TOKEN}x`, `Bearer ${METRICS_TOKEN.slice(1)}`, `Bearer ${'0'.repeat(METRICS_TOKEN.length)}`, 'Bearer x']) {
      expectError(await get('/metrics', { authorization }), 401, /^wrong scrape token/)
    }
    // An API token is "Bearer <username> <token>": two words, not the scrape token.
    expectError(await get('/metrics', root.headers), 401, /send the scrape token/)
    expectError(await get('/metrics', { authorization: `Bearer ${root.token}` }), 401, /^wrong scrape token/)
    expectError(await get('/metrics', { authorization: `Basic ${Buffer.from(`x:${METRICS_TOKEN}`).toString('base64')}` }), 401, /send the scrape token/)
  })

  test('the right token: 200 in the text format (the scheme in any case, as RFC 9110 has it)', async () => {
    for (const scheme of ['Bearer', 'bearer', 'BEARER']) {
      const res = await get('/metrics', { authorization: `${scheme} ${METRICS_TOKEN}` })
      assert.equal(res.statusCode, 200, res.body)
      assert.equal(res.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8')
      assert.equal(res.headers['cache-control'], 'no-store')
      assert.match(res.body, /^# HELP /m)
    }
  })
})

describe('what a Prometheus parser finds', () => {
  test('every family, with its type and labels', async () => {
    // Garbage enough for a few young-generation collections, so the GC histogram has samples.
    let kept = 0
    for (let i = 0; i < 200_000; i++) kept += new Array(64).fill(i).length
    assert.ok(kept > 0)
    await get('/api/packs/', site.gate)
    const metrics = await scrape(site)
    const types = Object.fromEntries(Object.entries(metrics).map(([name, family]) => [name, family.type]))
    const expected: Record<string, string> = {
      packs_http_requests_total: 'counter',
      packs_http_request_duration_seconds: 'histogram',
      packs_http_response_bytes_total: 'counter',
      packs_http_request_bytes_total: 'counter',
      packs_connection_sent_bytes_total: 'counter',
      packs_connection_received_bytes_total: 'counter',
      packs_update_check_cache_hits_total: 'counter',
      packs_update_check_cache_misses_total: 'counter',
      packs_update_check_cache_answers: 'gauge',
      packs_update_check_cache_bytes: 'gauge',
      packs_backend_up: 'gauge',
      packs_backend_check_seconds: 'gauge',
      packs_queue_length: 'gauge',
      packs_build_info: 'gauge',
      // prom-client's default metrics: the event loop's delay, GC, the process.
      nodejs_eventloop_lag_seconds: 'gauge',
      nodejs_eventloop_lag_p99_seconds: 'gauge',
      nodejs_gc_duration_seconds: 'histogram',
      process_cpu_user_seconds_total: 'counter',
      process_resident_memory_bytes: 'gauge',
      nodejs_heap_size_used_bytes: 'gauge',
    }
    for (const [name, type] of Object.entries(expected)) assert.equal(types[name], type, `${name} is a ${type}`)

    const listing = metrics.packs_http_requests_total!.data.find((s) => s.labels.route === '/api/packs/')
    assert.deepEqual(listing?.labels, { method: 'GET', route: '/api/packs/', status: '200' })
    const [durations] = histogramOf(metrics, 'packs_http_request_duration_seconds', { route: '/api/packs/' })
    assert.deepEqual(durations?.labels, { method: 'GET', route: '/api/packs/', status_class: '2xx' })
    const bounds = ['0.0005', '0.001', '0.0025', '0.005', '0.01', '0.025', '0.05', '0.1', '0.25', '0.5', '1', '2.5', '5', '10', '30', '120', '+Inf']
    assert.deepEqual(new Set(Object.keys(durations.buckets)), new Set(bounds))
    const cumulative = bounds.map((le) => durations.buckets[le]!)
    assert.deepEqual(cumulative, [...cumulative].sort((a, b) => a - b), 'each bucket counts everything below its bound')
    assert.equal(durations.buckets['+Inf'], durations.count)
    assert.ok(histogramOf(metrics, 'nodejs_gc_duration_seconds', { kind: 'minor' })[0]!.count > 0, 'young-generation collections were timed')

    const backends = site.config.redisUrl ? ['database', 'redis', 'storage'] : ['database', 'storage']
    assert.deepEqual([...labelValues(metrics, 'packs_backend_up', 'backend')].sort(), backends)
    for (const backend of backends) assert.equal(valueOf(metrics, 'packs_backend_up', { backend }), 1, `${backend} is up`)
    assert.deepEqual([...labelValues(metrics, 'packs_queue_length', 'queue')].sort(), ['notification_fanouts', 'pending_uploads', 'webhook_deliveries'])
    assert.deepEqual([...labelValues(metrics, 'packs_update_check_cache_hits_total', 'path')].sort(), ['fast', 'route'])
    assert.equal(valueOf(metrics, 'packs_build_info', { version: '1.0.0' }), 1)
  })

  test('HELP says what each family counts', async () => {
    const res = await get('/metrics', scrapeHeaders)
    const parsed = await parseExposition(res.body)
    for (const [name, family] of Object.entries(parsed)) assert.ok(family.help.length > 10, `${name} has a help text`)
  })
})

describe('counters follow the requests', () => {
  test('requests by route pattern and status, and their durations', async () => {
    const before = await scrape(site)
    for (let i = 0; i < 5; i++) assert.equal((await get('/api/packs/', site.gate)).statusCode, 200)
    assert.equal((await get(`/api/packs/${pack.namespace}/no-such-pack/`, site.gate)).statusCode, 404)
    const after = await scrape(site)
    const moved = (name: string, labels: Record<string, string>) => valueOf(after, name, labels) - valueOf(before, name, labels)
    assert.equal(moved('packs_http_requests_total', { route: '/api/packs/', status: '200' }), 5)
    assert.equal(moved('packs_http_requests_total', { route: '/api/packs/:namespace/:pack_id/', status: '404' }), 1)
    const count = (metrics: typeof before) => histogramOf(metrics, 'packs_http_request_duration_seconds', { route: '/api/packs/', status_class: '2xx' })[0]?.count ?? 0
    assert.equal(count(after) - count(before), 5)
    // The scrape before this one is counted too: /metrics is a route like the others.
    assert.ok(valueOf(after, 'packs_http_requests_total', { route: '/metrics', status: '200' }) >= 1)
  })

  test('the update-check cache: a miss reads the database, the next check is a hit', async () => {
    const other = await publishPack(site, alice, { title: 'Cached Pack' })
    const before = await scrape(site)
    assert.equal((await updateCheck(other.pack_id)).statusCode, 200)
    assert.equal((await updateCheck(other.pack_id)).statusCode, 200)
    assert.equal((await updateCheck(other.pack_id)).statusCode, 200)
    // A pack that does not exist: read once, then its "not found" is cached too.
    assert.equal((await updateCheck('never-published')).statusCode, 404)
    assert.equal((await updateCheck('never-published')).statusCode, 404)
    const after = await scrape(site)
    assert.equal(valueOf(after, 'packs_update_check_cache_misses_total') - valueOf(before, 'packs_update_check_cache_misses_total'), 2)
    assert.equal(valueOf(after, 'packs_update_check_cache_hits_total', { path: 'route' }) - valueOf(before, 'packs_update_check_cache_hits_total', { path: 'route' }), 3)
    // app.inject() never reaches the fast path (test/e2e/metrics.test.ts goes through a socket).
    assert.equal(valueOf(after, 'packs_update_check_cache_hits_total', { path: 'fast' }), 0)
    assert.ok(valueOf(after, 'packs_update_check_cache_answers') >= 1)
    assert.ok(valueOf(after, 'packs_update_check_cache_bytes') > 0)
  })

  test('queue lengths are counted at most once per 5 s, however often Prometheus scrapes', async () => {
    now += 10_000
    const before = valueOf(await scrape(site), 'packs_queue_length', { queue: 'pending_uploads' })
    await upload(site, alice, 'thumbnail', png())
    assert.equal(valueOf(await scrape(site), 'packs_queue_length', { queue: 'pending_uploads' }), before, 'the count of a moment ago')
    now += 5_001
    assert.equal(valueOf(await scrape(site), 'packs_queue_length', { queue: 'pending_uploads' }), before + 1)
  })
})

describe('bounded label values', () => {
  test('1,000 requests to distinct unknown URLs add a few route label values ("unmatched", route patterns) and no URL', async () => {
    const before = await scrape(site)
    const routesBefore = labelValues(before, 'packs_http_requests_total', 'route')
    for (let i = 0; i < 1000; i++) {
      const url = [`/api/nope-${i}/`, `/nope-${i}`, `/api/packs/${pack.namespace}/x/y/z-${i}`, `/assets/nope-${i}.js?v=${i}`][i % 4]!
      // With the gate and without: a 404, a 401, or the gate's redirect.
      const res = await get(url, i % 3 === 0 ? {} : site.gate)
      assert.ok([303, 401, 404].includes(res.statusCode), `${url}: ${res.statusCode}`)
    }
    const after = await scrape(site)
    const added = [...labelValues(after, 'packs_http_requests_total', 'route')].filter((route) => !routesBefore.has(route))
    // "unmatched", and the patterns of routes that answered (the assets' route for an unknown asset): a few.
    assert.ok(added.length <= 3 && added.every((route) => route === 'unmatched' || /[:*]/.test(route)), `new route labels: ${added.join(', ')}`)
    for (const family of Object.values(after)) {
      for (const sample of family.data) {
        for (const value of Object.values(sample.labels)) assert.ok(!value.includes('nope'), `no label holds a URL asked: ${value}`)
      }
    }
    const series = Object.values(after).reduce((n, family) => n + family.data.length, 0)
    assert.ok(series < 400, `${series} series in all`)
    assert.ok(valueOf(after, 'packs_http_requests_total', { route: 'unmatched' }) - valueOf(before, 'packs_http_requests_total', { route: 'unmatched' }) >= 750)
  })
})

describe('the Grafana dashboard (docs/grafana/packs-dashboard.json)', () => {
  interface Panel { type: string; title: string; targets?: { expr: string }[]; gridPos: { x: number; y: number; w: number; h: number } }
  const dashboard = JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, 'docs/grafana/packs-dashboard.json'), 'utf8')) as
    { title: string; uid: string; schemaVersion: number; panels: Panel[]; templating: { list: { name: string; type: string }[] } }

  test('is a dashboard Grafana imports: a uid, a schema version, panels on the grid, a Prometheus data source to choose', () => {
    assert.equal(dashboard.title, 'Packs')
    assert.match(dashboard.uid, /^[a-z0-9-]{1,40}$/)
    assert.ok(dashboard.schemaVersion >= 36)
    assert.ok(dashboard.templating.list.some((v) => v.name === 'datasource' && v.type === 'datasource'))
    for (const panel of dashboard.panels) {
      const { x, w } = panel.gridPos
      assert.ok(x >= 0 && w > 0 && x + w <= 24, `${panel.title} fits the 24 columns`)
      if (panel.type !== 'row') assert.ok((panel.targets ?? []).length > 0, `${panel.title} has a query`)
    }
    const titles = dashboard.panels.map((p) => p.title)
    for (const needed of ['Request rate by route', 'p50 latency by route', 'p99 latency by route', 'Update-check cache hit ratio', 'Bytes served and received',
      'Event-loop delay', 'Garbage collection', 'Backend health', 'Upload and webhook queues']) {
      assert.ok(titles.includes(needed), `a panel "${needed}"`)
    }
  })

  test('its queries name only families that /metrics has', async () => {
    const families = new Set(Object.keys(await scrape(site)))
    const named = new Set(dashboard.panels.flatMap((p) => (p.targets ?? []).flatMap((t) => t.expr.match(/\b(?:packs|nodejs|process)_[a-z0-9_]+/g) ?? [])))
    assert.ok(named.size >= 15, `${named.size} families charted`)
    for (const name of named) {
      const family = name.replace(/_(bucket|sum|count)$/, '')
      assert.ok(families.has(name) || families.has(family), `${name} is in /metrics`)
    }
  })
})
