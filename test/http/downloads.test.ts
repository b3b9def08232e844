// Downloads counted: an archive fetched with download=1
// counts once per client address, version and UTC day, in batches (no write
// per download); HEAD, 304, a resumed range, a file that is no archive and a
// plain fetch do not count. Shown on the pack and its versions, the listing's
// sort, the pages and the statistics; bounded in memory; two instances on one
// database count a shared (address, version, day) once; old days are swept.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { buildApp } from '../../src/app.js'
import type { App } from '../../src/http/types.js'
import { startSweeper } from '../../src/maintenance/sweep.js'
import { siteWith, type TestSite, type TestUser } from '../helpers/app.js'
import { datapack, multipart } from '../helpers/fixtures.js'
import { pathOf, publishPack, type PackJson } from '../helpers/packs.js'

const DAY = 24 * 3_600_000
const HTML = { accept: 'text/html' }
/** The timer never fires within a test: each test flushes when it means to. */
const NO_TIMER = { flushIntervalMs: 3_600_000 }

let now = Date.parse('2026-11-23T12:00:00.000Z')
const clock = () => now

let site: TestSite
let alice: TestUser
let root: TestUser
before(async () => {
  ;({ site, alice, root } = await siteWith({ users: ['alice'], staff: ['root'], clock, downloads: NO_TIMER, env: { PACKS_STATS_CACHE: '1ms' } }))
})
after(() => site.close())

type Headers = Record<string, string>

function fetchFile(app: App, url: string, remoteAddress: string, headers: Headers = {}, method: 'GET' | 'HEAD' = 'GET') {
  return app.inject({ method, url: pathOf(url), remoteAddress, headers: { ...site.gate, ...headers } })
}

async function download(app: App, version: { download_url: string }, remoteAddress: string, headers: Headers = {}): Promise<number> {
  const res = await fetchFile(app, version.download_url, remoteAddress, headers)
  assert.ok(res.statusCode === 200 || res.statusCode === 206, `${res.statusCode}: ${res.body.slice(0, 200)}`)
  return res.statusCode
}

async function packNow(pack: PackJson, headers: Headers = site.gate): Promise<PackJson> {
  const res = await site.app.inject({ url: `/api/packs/${pack.namespace}/${pack.pack_id}/`, headers })
  assert.equal(res.statusCode, 200, res.body)
  return res.json() as PackJson
}

async function counts(pack: PackJson): Promise<{ pack: number; versions: number[] }> {
  const current = await packNow(pack)
  return { pack: current.downloads, versions: current.versions.map((v) => v.downloads) }
}

async function stats(): Promise<{ downloads: number; downloads_today: number }> {
  const res = await site.app.inject({ url: '/api/stats/', headers: root.headers })
  assert.equal(res.statusCode, 200, res.body)
  return (res.json() as { counts: { downloads: number; downloads_today: number } }).counts
}

describe('counting', () => {
  let pack: PackJson
  before(async () => {
    pack = await publishPack(site, alice, { title: 'Counted Pack', version_name: '1.0.0' }, { thumbnail: true })
  })

  test('once per address per version per UTC day, written only when flushed', async () => {
    const version = pack.versions[0]!
    await download(site.app, version, '203.0.113.1')
    await download(site.app, version, '203.0.113.1')
    assert.deepEqual(await counts(pack), { pack: 0, versions: [0] }, 'nothing written before the batch')
    assert.equal(site.app.downloads.pendingCount, 1, 'the same address twice is one download waiting')
    assert.equal(await site.app.downloads.flush(), 1)
    assert.deepEqual(await counts(pack), { pack: 1, versions: [1] })

    // The same address again, after the flush: the database remembers the day.
    await download(site.app, version, '203.0.113.1')
    assert.equal(await site.app.downloads.flush(), 0)
    assert.deepEqual(await counts(pack), { pack: 1, versions: [1] })

    await download(site.app, version, '203.0.113.2')
    await site.app.downloads.flush()
    assert.deepEqual(await counts(pack), { pack: 2, versions: [2] }, 'another address counts')

    now += DAY
    await download(site.app, version, '203.0.113.1')
    await site.app.downloads.flush()
    assert.deepEqual(await counts(pack), { pack: 3, versions: [3] }, 'the next UTC day the first address counts again')
  })

  test('what does not count: no download=1, HEAD, 304, a resumed range, a thumbnail; a range from byte 0 counts', async () => {
    const version = pack.versions[0]!
    const before_ = await counts(pack)
    const address = '198.51.100.7'
    const inline = await fetchFile(site.app, version.download_url.replace('?download=1', ''), address)
    assert.equal(inline.statusCode, 200)
    const head = await fetchFile(site.app, version.download_url, address, {}, 'HEAD')
    assert.equal(head.statusCode, 200)
    const etag = String(head.headers.etag)
    const notModified = await fetchFile(site.app, version.download_url, address, { 'if-none-match': etag })
    assert.equal(notModified.statusCode, 304)
    assert.equal(await download(site.app, version, address, { range: 'bytes=10-' }), 206)
    const thumbnail = await fetchFile(site.app, `${pack.thumbnail_url!}?download=1`, address)
    assert.equal(thumbnail.statusCode, 200)
    assert.equal(thumbnail.headers['content-disposition']?.toString().startsWith('attachment'), true)
    const unknown = await fetchFile(site.app, '/api/files/00000000-0000-4000-8000-000000000000/?download=1', address)
    assert.equal(unknown.statusCode, 404)
    assert.equal(site.app.downloads.pendingCount, 0, 'none of these waits to be counted')
    assert.equal(await site.app.downloads.flush(), 0)
    assert.deepEqual(await counts(pack), before_)

    // A download manager's first range starts at byte 0: that is the download.
    assert.equal(await download(site.app, version, address, { range: 'bytes=0-99' }), 206)
    await site.app.downloads.flush()
    assert.deepEqual(await counts(pack), { pack: before_.pack + 1, versions: [before_.versions[0]! + 1] })
  })

  test('per version: each version counts apart, the pack counts them all', async () => {
    const withTwo = await publishPack(site, alice, { title: 'Two Versions', version_name: 'a' })
    const second = await addVersion(withTwo, 'b')
    const [newer, older] = second.versions
    await download(site.app, older!, '192.0.2.1')
    await download(site.app, newer!, '192.0.2.1')
    await download(site.app, newer!, '192.0.2.2')
    await site.app.downloads.flush()
    const now_ = await packNow(withTwo)
    assert.equal(now_.downloads, 3)
    assert.deepEqual(now_.versions.map((v) => [v.name, v.downloads]), [['b', 2], ['a', 1]])
  })
})

async function addVersion(pack: PackJson, name: string): Promise<PackJson> {
  const body = multipart([{ name: 'version_name', value: name }, { name: 'file', value: await datapack(48), filename: `${name}.zip` }])
  const res = await site.app.inject({
    method: 'POST', url: `/api/packs/${pack.namespace}/${pack.pack_id}/versions/`, headers: { ...alice.headers, ...body.headers }, payload: body.payload,
  })
  assert.equal(res.statusCode, 201, res.body)
  return res.json() as PackJson
}

describe('shown', () => {
  let popular: PackJson
  let quiet: PackJson
  before(async () => {
    quiet = await publishPack(site, alice, { title: 'Quiet Pack' })
    popular = await publishPack(site, alice, { title: 'Popular Pack' })
    // Quiet is updated last, so only the downloads can put Popular first.
    await addVersion(quiet, '2.0.0')
    for (const address of ['10.9.0.1', '10.9.0.2', '10.9.0.3']) await download(site.app, popular.versions[0]!, address)
    await download(site.app, quiet.versions[0]!, '10.9.0.1')
    await site.app.downloads.flush()
  })

  test('the listing sorts by downloads and carries them', async () => {
    const ids = async (query: string) => {
      const res = await site.app.inject({ url: `/api/packs/?per_page=100${query}`, headers: site.gate })
      assert.equal(res.statusCode, 200, res.body)
      return (res.json() as { items: { id: string; downloads: number; latest_version: { downloads: number } | null }[] }).items
    }
    const byUpdate = (await ids('')).map((p) => p.id)
    assert.ok(byUpdate.indexOf('alice:quiet-pack') < byUpdate.indexOf('alice:popular-pack'), 'recently updated first by default')
    const byDownloads = await ids('&sort=downloads')
    const popularIndex = byDownloads.findIndex((p) => p.id === 'alice:popular-pack')
    assert.ok(popularIndex < byDownloads.findIndex((p) => p.id === 'alice:quiet-pack'), 'most downloaded first')
    assert.equal(byDownloads[popularIndex]!.downloads, 3)
    assert.equal(byDownloads[popularIndex]!.latest_version?.downloads, 3)
    const counts_ = byDownloads.map((p) => p.downloads)
    assert.deepEqual(counts_, [...counts_].sort((a, b) => b - a), 'in descending order of downloads')
  })

  test('the browse page offers "Most downloaded" and shows downloads on cards; the pack page per pack and version', async () => {
    const home = await site.app.inject({ url: '/', headers: { ...site.gate, ...HTML } })
    assert.equal(home.statusCode, 200)
    assert.match(home.body, /<option value="downloads">Most downloaded<\/option>/)
    assert.match(home.body, /<select id="sort" name="sort" form="browse-form"><option value="">Recently updated<\/option>/)

    const sorted = await site.app.inject({ url: '/?sort=downloads', headers: { ...site.gate, ...HTML } })
    assert.equal(sorted.statusCode, 200)
    assert.match(sorted.body, /<option value="downloads" selected>Most downloaded<\/option>/)
    assert.ok(sorted.body.indexOf('Popular Pack') < sorted.body.indexOf('Quiet Pack'), 'most downloaded first on the page')
    const card = sorted.body.slice(sorted.body.indexOf('>Popular Pack<'))
    assert.match(card.slice(0, card.indexOf('</article>')), /<span class="downloads">3 downloads<\/span>/)
    // The sort is a field of the search form: it stays when the search or a filter changes.
    assert.match(sorted.body, /<select id="sort" name="sort" form="browse-form">/)

    const bad = await site.app.inject({ url: '/?sort=random', headers: { ...site.gate, ...HTML } })
    assert.equal(bad.statusCode, 400)
    assert.match(bad.body, /must be one of relevance, updated, downloads, trending, created, title/)

    const page = await site.app.inject({ url: '/packs/alice/popular-pack/', headers: { ...site.gate, ...HTML } })
    assert.equal(page.statusCode, 200)
    assert.match(page.body, /class="byline[^"]*">[^]*<span class="downloads">3 downloads<\/span><\/p>/)
    assert.match(page.body, /class="version-meta">[^]*<span class="downloads">3 downloads<\/span><\/p>/)
    const quietPage = await site.app.inject({ url: '/packs/alice/quiet-pack/', headers: { ...site.gate, ...HTML } })
    assert.match(quietPage.body, /class="byline[^"]*">[^]*<span class="downloads">1 download<\/span><\/p>/, 'one, in the singular')
    assert.match(quietPage.body, /id="vh-1">2\.0\.0<[^]*<span class="downloads">0 downloads<\/span>[^]*id="vh-2">1\.0\.0<[^]*<span class="downloads">1 download<\/span>/)
  })

  test('the statistics snapshot has total downloads and today\'s; the staff page shows them', async () => {
    const counted = await stats()
    const rows = await site.app.db.selectFrom('packs').select('downloads').execute()
    assert.equal(counted.downloads, rows.reduce((sum, r) => sum + Number(r.downloads), 0))
    assert.ok(counted.downloads >= 4)
    const today = new Date(now).toISOString().slice(0, 10)
    const seen = await site.app.db.selectFrom('download_seen').select('client').where('day', '=', today).execute()
    assert.equal(counted.downloads_today, seen.length)
    assert.ok(counted.downloads_today >= 4)

    await download(site.app, quiet.versions[0]!, '10.9.0.99')
    await site.app.downloads.flush()
    now += 10
    const after_ = await stats()
    assert.equal(after_.downloads, counted.downloads + 1)
    assert.equal(after_.downloads_today, counted.downloads_today + 1)

    const page = await site.app.inject({ url: '/staff/stats/', headers: { ...root.headers, ...HTML } })
    assert.equal(page.statusCode, 200)
    assert.match(page.body, /Downloads/)
  })

  test('no raw client address is stored', async () => {
    const rows = await site.app.db.selectFrom('download_seen').select('client').execute()
    assert.ok(rows.length > 0)
    for (const { client } of rows) {
      assert.match(client, /^[0-9a-f]{32}$/)
      assert.doesNotMatch(client, /10\.9\.0|203\.0\.113/)
    }
  })
})

describe('bounded memory', () => {
  test('a flood of distinct addresses never holds more than the bound; what is past it is dropped, never grown', async () => {
    const { site: small, bob } = await siteWith({ users: ['bob'], clock, downloads: { maxPending: 20, flushIntervalMs: 3_600_000 } })
    try {
      const pack = await publishPack(small, bob, { title: 'Flooded' })
      const version = pack.versions[0]!
      let highest = 0
      // Through HTTP, many at once: the set is handed to a write whenever it fills.
      const responses = await Promise.all(Array.from({ length: 150 }, async (_, i) => {
        const res = await small.app.inject({ url: pathOf(version.download_url), remoteAddress: `10.${i >> 8}.${i & 255}.1`, headers: small.gate })
        highest = Math.max(highest, small.app.downloads.pendingCount)
        return res.statusCode
      }))
      assert.ok(responses.every((s) => s === 200))
      assert.ok(highest <= 20, `at most 20 waiting, saw ${highest}`)
      await small.app.downloads.flush()
      const counted = Number((await small.app.db.selectFrom('versions').select('downloads').where('id', '=', version.id).executeTakeFirstOrThrow()).downloads)
      assert.equal(counted + small.app.downloads.droppedCount, 150, 'each download either counted or dropped')

      // Recorded faster than any write can finish: the first 20 go to a write, 20 more wait, the rest are dropped.
      const droppedBefore = small.app.downloads.droppedCount
      const target = { versionId: version.id, packRowId: (await small.app.db.selectFrom('versions').select('pack_id').where('id', '=', version.id).executeTakeFirstOrThrow()).pack_id }
      for (let i = 0; i < 1000; i++) small.app.downloads.record(target, `172.16.${i >> 8}.${i & 255}`)
      assert.ok(small.app.downloads.pendingCount <= 20)
      assert.equal(small.app.downloads.droppedCount - droppedBefore, 1000 - 40)
      assert.equal(await small.app.downloads.flush(), 20, 'the waiting 20 (after the write under way)')
      const total = Number((await small.app.db.selectFrom('versions').select('downloads').where('id', '=', version.id).executeTakeFirstOrThrow()).downloads)
      assert.equal(total, counted + 40)
    } finally {
      await small.close()
    }
  })
})

describe('several instances and time', () => {
  test('two apps on one database count a shared (address, version, day) once; closing writes what waits', async () => {
    const pack = await publishPack(site, alice, { title: 'Shared Count' })
    const version = pack.versions[0]!
    const other = await buildApp(site.config, { logger: false, sweep: false, clock, downloads: NO_TIMER })
    try {
      await other.ready()
      await download(site.app, version, '100.64.0.1')
      await download(other, version, '100.64.0.1')
      await download(other, version, '100.64.0.2')
      // On PostgreSQL both write their batch at once. Two SQLite connections in one process cannot: better-sqlite3
      // waits for a lock synchronously, so the holder could never commit (separate processes just take turns).
      const [a, b] = site.config.databaseUrl.startsWith('sqlite:')
        ? [await site.app.downloads.flush(), await other.downloads.flush()]
        : await Promise.all([site.app.downloads.flush(), other.downloads.flush()])
      assert.equal(a + b, 2)
      assert.deepEqual(await counts(pack), { pack: 2, versions: [2] })

      await download(other, version, '100.64.0.3')
      assert.equal(other.downloads.pendingCount, 1)
    } finally {
      // Closing the instance writes its waiting download before its database closes.
      await other.close()
    }
    assert.deepEqual(await counts(pack), { pack: 3, versions: [3] })
  })

  test('the timer writes waiting downloads within a few seconds', async () => {
    const { site: timed, carol } = await siteWith({ users: ['carol'], clock, downloads: { flushIntervalMs: 50 } })
    try {
      const pack = await publishPack(timed, carol, { title: 'Timed' })
      await download(timed.app, pack.versions[0]!, '100.64.1.1')
      const deadline = Date.now() + 5_000
      let seen = 0
      while (Date.now() < deadline) {
        const res = await timed.app.inject({ url: `/api/packs/carol/timed/`, headers: timed.gate })
        seen = (res.json() as PackJson).downloads
        if (seen === 1) break
        await new Promise((resolve) => setTimeout(resolve, 25))
      }
      assert.equal(seen, 1)
    } finally {
      await timed.close()
    }
  })

  test('the sweep forgets download marks of days before yesterday and keeps the counts', async () => {
    const pack = await publishPack(site, alice, { title: 'Swept Marks' })
    await download(site.app, pack.versions[0]!, '100.64.2.1')
    await site.app.downloads.flush()
    const markDay = new Date(now).toISOString().slice(0, 10)
    const marks = () => site.app.db.selectFrom('download_seen').select('day').where('version_id', '=', pack.versions[0]!.id).execute()
    assert.deepEqual((await marks()).map((r) => r.day), [markDay])

    const sweepOn = async (at: number) => {
      const errors: string[] = []
      const log = { info() {}, warn() {}, error(_details: object, message: string) { errors.push(message) } }
      const sweeper = startSweeper({ db: site.app.db, store: site.app.store, draftTtlMs: site.config.draftTtlMs, intervalMs: 3_600_000, orphanGraceMs: DAY, log, now: () => at })
      await sweeper.runNow('sweep')
      await sweeper.stop()
      assert.deepEqual(errors, [])
    }
    await sweepOn(now + DAY)
    assert.equal((await marks()).length, 1, 'yesterday\'s marks stay')
    await sweepOn(now + 2 * DAY)
    assert.equal((await marks()).length, 0, 'older ones go')
    assert.deepEqual(await counts(pack), { pack: 1, versions: [1] }, 'the counts stay')
  })
})
