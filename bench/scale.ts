// `npm run bench:scale`: Packs at the size of a real site.
// Seeds, directly through the repositories (the bulk insert that `packs
// import` uses), 1,000,000 users, 100,000 packs with 300,000 versions (and
// their file rows), 10,000 tags in 200 categories and 3 tags a pack, into a
// fresh data directory (SQLite; PostgreSQL when DATABASE_URL is set). Then
// starts the server on it exactly as `npm start` does (no settings), times
// the cold start to the first answered /healthz, and measures p50/p99 at 50
// connections with wrk for the requests the issue lists.
// Titles, summaries, descriptions and tags are made of English and Minecraft
// words (bench/scale-search.ts), so search runs on text with a vocabulary;
// the search index is built as an imported site's first start builds it
// (timed), and search is measured: each search one at a time, at 10 and 50
// connections, the update-check beside searching, edits through PATCH, and
// the plan of every statement a search sends.
//
// Knobs: SCALE (1 = the full size; 0.1 for a tenth), BENCH_DURATION (s per
// request, 5), SCALE_KEEP=1 keeps the data directory (its path is printed),
// SCALE_DATA=<that path> measures a kept one again without seeding,
// SCALE_SEARCH_ONLY=1 measures search alone.
import { randomUUID } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { sql } from 'kysely'
import { loadSqlite, migrateToLatest, openDatabase } from '../src/db/index.js'
import { newShortId } from '../src/db/short-ids.js'
import { insertRows, type Table } from '../src/maintenance/transfer-repository.js'
import { PasswordHasher } from '../src/auth/passwords.js'
import { searchUsernames } from '../src/accounts/users-repository.js'
import { listPacks, loadPackDetail, SEARCH_LIMIT } from '../src/packs/repository.js'
import { suggestTags } from '../src/packs/tags-repository.js'
import { findNewestVersion } from '../src/update-check/repository.js'
import { cliOk, lastLine, startServer, type RunningServer } from '../test/helpers/server.js'
import { datapack } from '../test/helpers/fixtures.js'
import { NOTIFICATIONS_KEPT } from '../src/api/notifications.js'
import { pinServerAndLoad, wrk, type WrkFigures } from './wrk.js'
import { indexMissingPacks, reindexPack } from '../src/packs/search-service.js'
import { searchSnapshotOf } from '../src/packs/search-memory.js'
import { categoryName, fileFormats, packDescription, packSummary, packTitle, searchCases, showSearchPlans, SUBJECTS, tagName, urlOf } from './scale-search.js'

const SCALE = Number(process.env.SCALE ?? '1')
const DURATION = Number(process.env.BENCH_DURATION ?? '5')
/** SCALE_SEARCH_ONLY=1: seed, start, and measure search only (not the listing, autocomplete and mixed runs). */
const SEARCH_ONLY = process.env.SCALE_SEARCH_ONLY === '1'
/** SCALE_NOTIFICATIONS_ONLY=1: measure the followers' notifications only (a version's fan-out, the bell's count, the list). */
const NOTIFICATIONS_ONLY = process.env.SCALE_NOTIFICATIONS_ONLY === '1'
/** SCALE_BROWSE_ONLY=1: the listing, autocomplete and update-check requests and the mixed run only (no search or notifications runs). */
const BROWSE_ONLY = process.env.SCALE_BROWSE_ONLY === '1'
/** Followers of the pack whose new versions the notifications run measures, each with a full list of notifications already. */
const FOLLOWERS = Math.round(10_000 * SCALE)
const USERS = Math.round(1_000_000 * SCALE)
const PACKS = Math.round(100_000 * SCALE)
const VERSIONS_PER_PACK = 3
const CATEGORIES = 200
const TAGS_PER_CATEGORY = 50
const TAGS_PER_PACK = 3
/** Rows handed to insertRows at a time (it writes 200 per statement), inside one transaction. */
const CHUNK = 20_000

const log = (line: string) => process.stdout.write(`${line}\n`)

// Words for names that autocomplete and search can find by their letters.
const SYLLABLES = ['ka', 'lo', 'mi', 'ra', 'sen', 'tor', 'vi', 'el', 'dra', 'gon', 'sto', 'ne', 'ash', 'wood', 'sky', 'mar', 'lu', 'ni', 'qua', 'zed']
function word(n: number): string {
  let out = ''
  let x = n
  do {
    out += SYLLABLES[x % SYLLABLES.length]
    x = Math.floor(x / SYLLABLES.length)
  } while (x > 0)
  return out
}

/** The packs' paths as seed() names them (deterministic), for a kept data directory. */
function packPathsOf(): string[] {
  return Array.from({ length: PACKS }, (_, i) => {
    const owner = (i * 7919) % USERS
    return `${`${word(owner)}${owner}`.toLowerCase()}/${word(i + 3)}-${i}`
  })
}

async function seed(dataDir: string, databaseUrl: string): Promise<{ seconds: number; indexSeconds: number; bytes: number; packPaths: string[] }> {
  const started = Date.now()
  const db = await openDatabase(databaseUrl)
  await migrateToLatest(db)
  const now = new Date().toISOString()
  // One real scrypt hash, shared: the bench signs nobody in with them.
  const passwordHash = await new PasswordHasher(1024).hash('scale-password-0123')
  const bulk = async <T extends Table>(table: T, count: number, row: (i: number) => Record<string, unknown>) => {
    for (let from = 0; from < count; from += CHUNK) {
      const rows = Array.from({ length: Math.min(CHUNK, count - from) }, (_, k) => row(from + k))
      await db.transaction().execute((trx) => insertRows(trx, table, rows as never))
    }
    log(`  ${table}: ${count.toLocaleString('en')} rows (${((Date.now() - started) / 1000).toFixed(0)} s)`)
  }

  const userIds: string[] = []
  const usernames: string[] = []
  await bulk('users', USERS, (i) => {
    const username = `${word(i)}${i}`
    userIds.push(randomUUID())
    usernames.push(username)
    return { id: userIds[i], username, username_lower: username.toLowerCase(), password_hash: passwordHash, is_staff: 0, created_at: now, disabled_at: null }
  })
  const categoryIds = Array.from({ length: CATEGORIES }, () => randomUUID())
  await bulk('categories', CATEGORIES, (i) => ({ id: categoryIds[i], key: `c${i}`, name: categoryName(i), name_lower: categoryName(i).toLowerCase(), color: '#336699' }))
  const tagIds: string[] = []
  await bulk('tags', CATEGORIES * TAGS_PER_CATEGORY, (i) => {
    tagIds.push(randomUUID())
    const name = tagName(i)
    return { id: tagIds[i], name, name_lower: name.toLowerCase(), category_id: categoryIds[i % CATEGORIES] }
  })
  const fileIds: string[] = []
  await bulk('files', PACKS * VERSIONS_PER_PACK, (i) => {
    const id = randomUUID()
    fileIds.push(id)
    const hex = id.replace(/-/g, '')
    return {
      id, storage_key: id, filename: `pack-${i}.zip`, content_type: 'application/zip', size: 10_000 + (i % 5000),
      sha256: (hex + hex).slice(0, 64), sha1: hex.slice(0, 32) + hex.slice(0, 8), created_at: now,
      ...fileFormats(Math.floor(i / VERSIONS_PER_PACK), i % VERSIONS_PER_PACK), min_format_minor: 0, max_format_minor: null,
    }
  })
  const packIds: string[] = []
  const packPaths: string[] = []
  await bulk('packs', PACKS, (i) => {
    const id = randomUUID()
    packIds.push(id)
    const owner = (i * 7919) % USERS
    const namespace = usernames[owner]!.toLowerCase()
    const packId = `${word(i + 3)}-${i}`
    packPaths.push(`${namespace}/${packId}`)
    const time = new Date(Date.parse(now) - i * 60_000).toISOString()
    return {
      id, namespace, pack_id: packId, owner_id: userIds[owner], title: packTitle(i), summary: packSummary(i),
      description: packDescription(i), category_id: categoryIds[i % CATEGORIES], thumbnail_file_id: null,
      created_at: time, updated_at: time, hidden_at: null, revision: 1, downloads: (i * 31) % 10_000, short_id: newShortId(),
    }
  })
  await bulk('pack_tags', PACKS * TAGS_PER_PACK, (i) => {
    const pack = Math.floor(i / TAGS_PER_PACK)
    // Skewed: some tags are on many packs, most on few, as on a real site.
    const tag = (pack * 31 + (i % TAGS_PER_PACK) * 977 + Math.floor(Math.sqrt(pack))) % tagIds.length
    return { pack_id: packIds[pack], tag_id: tagIds[(tag + (i % TAGS_PER_PACK)) % tagIds.length] }
  })
  await bulk('versions', PACKS * VERSIONS_PER_PACK, (i) => {
    const pack = Math.floor(i / VERSIONS_PER_PACK)
    const n = i % VERSIONS_PER_PACK
    return {
      id: randomUUID(), pack_id: packIds[pack], name: `1.${n}.0`, changelog: `Release ${n}`, pack_format: fileFormats(pack, n).min_format,
      file_id: fileIds[i], created_at: new Date(Date.parse(now) - pack * 60_000 + n * 1000).toISOString(), yanked_at: null, downloads: n, short_id: newShortId(),
    }
  })
  const seeded = Date.now()
  // The search index, built as a site moved in by import has it built at its first start: each pack's entry in
  // its own transaction. Then a trending figure per pack (as if downloads had been counted for a week).
  const indexStarted = Date.now()
  const indexed = await indexMissingPacks(db)
  const indexSeconds = (Date.now() - indexStarted) / 1000
  log(`  search index: ${indexed.toLocaleString('en')} packs in ${indexSeconds.toFixed(1)} s (${(indexSeconds * 1000 / Math.max(1, indexed)).toFixed(2)} ms a pack)`)
  await sql`update pack_search set trending = (select packs.downloads % 997 from packs where packs.id = pack_search.pack_row_id)`.execute(db)
  const pgBytes = databaseUrl.startsWith('sqlite:') ? Number.NaN
    : Number((await sql<{ n: string }>`select pg_database_size(current_database()) as n`.execute(db)).rows[0]?.n)
  await db.destroy()
  const dbFile = path.join(dataDir, 'packs.db')
  const bytes = databaseUrl.startsWith('sqlite:') ? ['', '-wal', '-shm'].reduce((sum, ext) => sum + (fs.statSync(dbFile + ext, { throwIfNoEntry: false })?.size ?? 0), 0) : pgBytes
  return { seconds: (seeded - started) / 1000, indexSeconds, bytes, packPaths }
}

async function main(): Promise<void> {
  const reuse = process.env.SCALE_DATA
  const dataDir = reuse ?? fs.mkdtempSync(path.join(os.tmpdir(), 'packs-scale-'))
  const databaseUrl = process.env.DATABASE_URL ?? `sqlite:${path.join(dataDir, 'packs.db')}`
  log(`Packs at scale ${SCALE}: ${USERS.toLocaleString('en')} users, ${PACKS.toLocaleString('en')} packs, ${(PACKS * VERSIONS_PER_PACK).toLocaleString('en')} versions, ${CATEGORIES * TAGS_PER_CATEGORY} tags in ${CATEGORIES} categories; ${databaseUrl.startsWith('sqlite:') ? 'SQLite' : 'PostgreSQL'}`)
  const seeded = reuse ? { seconds: Number.NaN, indexSeconds: Number.NaN, bytes: Number.NaN, packPaths: packPathsOf() } : await seed(dataDir, databaseUrl)
  if (!reuse) log(`seeded in ${seeded.seconds.toFixed(0)} s, search index built in ${seeded.indexSeconds.toFixed(0)} s; database ${(seeded.bytes / 1024 / 1024).toFixed(0)} MiB`)

  // The gate password is given (a restart reads no generated one), otherwise no setting: as `npm start` runs it.
  const password = 'scale-site-password'
  const logFile = path.join(dataDir, 'stdout.log')
  const env = { LOG_LEVEL: undefined, NODE_ENV: undefined, PACKS_MASTER_PASSWORD: password, PACKS_PASSWORD_HASH_COST: undefined, ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {}) }
  // The first start makes the site's secrets and runs its start-up checks once; a cold start is a restart.
  if (!reuse) await (await startServer({ dataDir, env, stdoutFile: logFile, timeoutMs: 120_000 })).stop(60_000)
  // Cold start: from spawning the server to the first answered /healthz (polled every 100 ms).
  const logOffset = fs.statSync(logFile, { throwIfNoEntry: false })?.size ?? 0
  const startedAt = Date.now()
  const server: RunningServer = await startServer({ dataDir, env, stdoutFile: logFile, timeoutMs: 60_000 })
  const coldStartMs = Date.now() - startedAt
  log(`cold start (spawn to the first 200 from /healthz, polled every 100 ms): ${coldStartMs} ms`)
  log(pinServerAndLoad(server.child.pid!))
  // The start-up consistency check then walks every file row in the background (paced to a quarter of the
  // event loop, for at most a minute). The figures below are taken after it, and say how long it ran.
  const checkStarted = Date.now()
  const checkLine = await waitForLine(logFile, logOffset, /"trigger":"start-up","found"/, 120_000)
  log(`start-up consistency check: done ${((Date.now() - checkStarted) / 1000).toFixed(0)} s after the first answer${checkLine.includes('"complete":false') ? ' (stopped at its one-minute budget; the next sweep continues it)' : ''}`)
  // Search's in-memory copy of the index loads in the background from the start; searches are measured once
  // it has (until then SQL answers them: docs/site.md#search).
  const loadedLine = await waitForLine(logFile, logOffset, /search index (loaded into memory|could not be loaded)/, 600_000)
  const loaded = /"packs":(\d+),"ms":(\d+)/.exec(loadedLine)
  log(loaded ? `search index loaded into memory: ${loaded[1]} packs in ${loaded[2]} ms (from the server's start)` : `search index NOT loaded into memory: ${loadedLine}`)
  try {
    const gate = { 'x-master-password': password }
    // A kept data directory (SCALE_DATA) has this account from its first run.
    if (!reuse) await cliOk(['user', 'create', 'scalestaff', '--password', 'scale-password-0123', '--staff'], server.env)
    const token = lastLine((await cliOk(['token', 'create', 'scalestaff', '--name', 'scale'], server.env)).stdout)
    const staff = { authorization: `Bearer scalestaff ${token}` }
    const first = Date.now()
    const stats = await fetch(`${server.url}/api/stats/`, { headers: staff })
    log(`first statistics snapshot: ${stats.status} in ${Date.now() - first} ms`)

    // Many packs, pages and terms, each request one at random (the cache-miss path, not one hot pack).
    const sample = <T>(count: number, make: (i: number) => T): T[] => Array.from({ length: count }, (_, i) => make(i))
    const randomPacks = sample(2000, () => seeded.packPaths[Math.floor(Math.random() * seeded.packPaths.length)]!)
    // More packs than the update-check keeps answers for (10,000): most asks are misses, read from the database.
    const manyPacks = sample(Math.min(30_000, seeded.packPaths.length), () => seeded.packPaths[Math.floor(Math.random() * seeded.packPaths.length)]!)
    const tagNames = sample(500, () => tagName(Math.floor(Math.random() * CATEGORIES * TAGS_PER_CATEGORY)))
    const titleWords = sample(500, () => SUBJECTS[Math.floor(Math.random() * SUBJECTS.length)]!.toLowerCase())
    const html = { ...gate, accept: 'text/html' }
    const browsing = [
      // A listing reaches its first SEARCH_LIMIT packs (50 pages of 20), as a search engine's does: pages within them.
      ...sample(200, () => `/?page=${1 + Math.floor(Math.random() * (SEARCH_LIMIT / 20))}`),
      ...titleWords.map((w) => `/?q=${w}`),
      ...tagNames.map((t) => `/?tag=${t}`),
    ]
    const requests: Array<[string, string[], Record<string, string>]> = [
      ['tag autocomplete, empty q', ['/api/tags/autocomplete/?q='], gate],
      ['tag autocomplete, one letter', ['/api/tags/autocomplete/?q=s'], gate],
      ['tag autocomplete, full name', tagNames.map((t) => `/api/tags/autocomplete/?q=${t}`), gate],
      ['user autocomplete, one letter', ['/api/users/autocomplete/?q=k'], gate],
      ['user autocomplete, three letters', ['/api/users/autocomplete/?q=kal'], gate],
      ['update-check, 2,000 random packs', randomPacks.map((p) => `/api/packs/${p}/latest`), gate],
      ['update-check, 30,000 (cache misses)', manyPacks.map((p) => `/api/packs/${p}/latest`), gate],
      ['pack JSON, random packs', randomPacks.map((p) => `/api/packs/${p}/`), gate],
      ['pack page, random packs', randomPacks.map((p) => `/packs/${p}/`), html],
      ['browse, page 1', ['/'], html],
      ['browse, the last page (50)', [`/?page=${SEARCH_LIMIT / 20}`], html],
      ['browse, random pages', browsing.slice(0, 200), html],
      ['browse, title search', titleWords.map((w) => `/?q=${w}`), html],
      ['browse, tag filter', tagNames.map((t) => `/?tag=${t}`), html],
      ['API list, title search', titleWords.map((w) => `/api/packs/?q=${w}`), gate],
      ['API list, tag filter', tagNames.map((t) => `/api/packs/?tag=${t}`), gate],
    ]
    log(`\n${'request (50 connections)'.padEnd(34)} ${'req/s'.padStart(8)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'CPU ms/req'.padStart(9)}`)
    const results: Record<string, unknown> = {}
    const row = (name: string, figures: WrkFigures, cpuMs?: number) => {
      const over = figures.timeouts ? `  (${figures.timeouts} took over 2 s)` : ''
      const cpu = cpuMs === undefined ? '' : `${cpuMs.toFixed(2).padStart(9)}`
      log(`${name.padEnd(34)} ${figures.requestsPerSecond.toFixed(0).padStart(8)} ${figures.p50Ms.toFixed(2).padStart(8)} ${figures.p99Ms.toFixed(2).padStart(8)}${cpu}${over}`)
    }
    // The server's CPU (all its threads, user and system) per request of a run: /proc/<pid>/stat's ticks.
    const serverPid = server.child.pid!
    const cpuTicks = () => {
      const fields = fs.readFileSync(`/proc/${serverPid}/stat`, 'utf8').split(') ')[1]!.split(' ')
      return Number(fields[11]) + Number(fields[12])
    }
    const ticksPerSecond = 100
    if (!NOTIFICATIONS_ONLY && !BROWSE_ONLY) Object.assign(results, await measureSearch(server, databaseUrl, gate, staff, manyPacks, seeded.packPaths))
    if (!SEARCH_ONLY && !BROWSE_ONLY) Object.assign(results, await measureNotifications(server, databaseUrl, gate, staff, seeded.packPaths))
    if (NOTIFICATIONS_ONLY) log('\n(SCALE_NOTIFICATIONS_ONLY=1: the other requests are left out)')
    if (SEARCH_ONLY) log('\n(SCALE_SEARCH_ONLY=1: the other requests, the mixed run and their plans are left out)')
    for (const [name, paths, headers] of SEARCH_ONLY || NOTIFICATIONS_ONLY ? [] : requests) {
      const probe = await fetch(`${server.url}${paths[0]}`, { headers })
      await probe.arrayBuffer()
      if (probe.status >= 400) {
        log(`${name.padEnd(34)} HTTP ${probe.status}`)
        continue
      }
      const ticksBefore = cpuTicks()
      const figures = await wrk(`${server.url}/`, { connections: 50, seconds: DURATION, headers, paths, tolerateTimeouts: true })
      const cpuMs = figures.requests > 0 ? (cpuTicks() - ticksBefore) * (1000 / ticksPerSecond) / figures.requests : Number.NaN
      results[name] = { ...figures, cpuMsPerRequest: cpuMs }
      row(name, figures, cpuMs)
    }

    if (!SEARCH_ONLY && !NOTIFICATIONS_ONLY) {
    // Mixed load: 20 connections browse and search (random pages, titles, tags) while updaters ask about random packs.
    log('\nmixed: 20 connections browsing and searching, 20 asking the update-check (30,000 random packs) at the same time')
    const [browsers, updaters] = await Promise.all([
      wrk(`${server.url}/`, { connections: 20, seconds: DURATION, headers: html, paths: browsing, tolerateTimeouts: true }),
      wrk(`${server.url}/`, { connections: 20, seconds: DURATION, headers: gate, paths: manyPacks.map((p) => `/api/packs/${p}/latest`), tolerateTimeouts: true }),
    ])
    row('  browsing and searching', browsers)
    row('  update-check, 30,000 packs', updaters)
    results['mixed: browsing'] = browsers
    results['mixed: update-check'] = updaters

    // The statistics snapshot after its cache expired (20 s), timed while an update-check is asked every 2 ms.
    await new Promise((resolve) => setTimeout(resolve, 21_000))
    const during: number[] = []
    let snapshotDone = false
    const snapshot = (async () => {
      const t = Date.now()
      const response = await fetch(`${server.url}/api/stats/`, { headers: staff })
      const body = await response.json() as { event_loop?: { delay?: { p99_ms: number; max_ms: number } } }
      // The server's own event-loop monitor, over everything since the first snapshot: every run above.
      const delay = body.event_loop?.delay
      if (delay) log(`event-loop delay over the runs above (the server's monitor): p99 ${delay.p99_ms} ms, max ${delay.max_ms} ms`)
      snapshotDone = true
      return Date.now() - t
    })()
    while (!snapshotDone) {
      const t = performance.now()
      const response = await fetch(`${server.url}/api/packs/${randomPacks[during.length % randomPacks.length]}/latest`, { headers: gate })
      await response.arrayBuffer()
      during.push(performance.now() - t)
      await new Promise((resolve) => setTimeout(resolve, 2))
    }
    const snapshotMs = await snapshot
    log(`statistics snapshot after the cache expired: ${snapshotMs} ms; update-checks meanwhile: ${during.length}, slowest ${Math.max(...during).toFixed(1)} ms`)
    results['statistics snapshot'] = { ms: snapshotMs, updateChecksDuring: during.length, slowestUpdateCheckMs: Math.max(...during) }

    if (databaseUrl.startsWith('sqlite:')) await showPlans(databaseUrl, tagNames[0]!, titleWords[0]!)
    }
    fs.mkdirSync('.tmp', { recursive: true })
    fs.writeFileSync(path.join('.tmp', 'scale-results.json'), `${JSON.stringify({ scale: SCALE, seeded: { seconds: seeded.seconds, bytes: seeded.bytes }, coldStartMs, results }, null, 2)}\n`)
  } finally {
    await server.stop()
    if (process.env.SCALE_KEEP === '1' || reuse) log(`data kept in ${dataDir}`)
    else fs.rmSync(dataDir, { recursive: true, force: true })
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`\nSCALE BENCHMARK FAILED: ${error instanceof Error ? error.stack : String(error)}\n`)
  process.exit(1)
})

/** Waits until a line of `file` (written by the server) after byte `from` matches `pattern`; returns that line. */
async function waitForLine(file: string, from: number, pattern: RegExp, timeoutMs: number): Promise<string> {
  const until = Date.now() + timeoutMs
  let offset = from
  let partial = ''
  while (Date.now() < until) {
    const size = fs.statSync(file).size
    if (size > offset) {
      const fd = fs.openSync(file, 'r')
      const buffer = Buffer.alloc(size - offset)
      fs.readSync(fd, buffer, 0, buffer.length, offset)
      fs.closeSync(fd)
      offset = size
      const lines = (partial + buffer.toString('utf8')).split('\n')
      partial = lines.pop() ?? ''
      const found = lines.find((line) => pattern.test(line))
      if (found) return found
    }
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  throw new Error(`no line matching ${pattern} in ${file} within ${timeoutMs / 1000} s`)
}

/**
 * The query plans of the requests measured above (SQLite's EXPLAIN QUERY
 * PLAN), for the SQL the repositories really send: captured from the
 * executor while each repository function runs once. A plan line that scans
 * a large table without an index is marked.
 */
async function showPlans(databaseUrl: string, tag: string, titleWord: string): Promise<void> {
  const file = databaseUrl.slice('sqlite:'.length)
  const db = await openDatabase(databaseUrl)
  const SQLite = await loadSqlite()
  const raw = new SQLite(file, { readonly: true })
  const captured: Array<{ sql: string; parameters: readonly unknown[] }> = []
  const executor = db.getExecutor() as unknown as { executeQuery: (query: { sql: string; parameters: readonly unknown[] }, id: unknown) => Promise<unknown> }
  const execute = executor.executeQuery.bind(executor)
  executor.executeQuery = (query, id) => {
    captured.push({ sql: query.sql, parameters: query.parameters })
    return execute(query, id)
  }
  const somePack = raw.prepare('select namespace, pack_id from packs limit 1 offset 4242').get() as { namespace: string; pack_id: string }
  const cases: Array<[string, () => Promise<unknown>]> = [
    ['browse, page 1', () => listPacks(db, {}, { limit: 20, offset: 0 })],
    ['browse, page 1000', () => listPacks(db, {}, { limit: 20, offset: 19_980 })],
    ['browse by downloads, page 1000', () => listPacks(db, {}, { limit: 20, offset: 19_980 }, 'downloads')],
    [`title search "${titleWord}"`, () => listPacks(db, { q: titleWord }, { limit: 20, offset: 0 })],
    ['title search "zedzedzed" (rare)', () => listPacks(db, { q: 'zedzedzed' }, { limit: 20, offset: 0 })],
    [`tag filter "${tag}"`, () => listPacks(db, { tag }, { limit: 20, offset: 0 })],
    ['category filter', () => listPacks(db, { category: 'c7' }, { limit: 20, offset: 0 })],
    ['tag autocomplete, empty q', () => suggestTags(db, '', 10)],
    ['tag autocomplete, "s"', () => suggestTags(db, 's', 10)],
    ['user autocomplete, "kal"', () => searchUsernames(db, 'kal', 10)],
    ['update-check', () => findNewestVersion(db, somePack.namespace, somePack.pack_id)],
    ['pack page', () => loadPackDetail(db, somePack.namespace, somePack.pack_id)],
  ]
  const large = new Set(['packs', 'users', 'versions', 'files', 'pack_tags'])
  log('\nquery plans (SQLite EXPLAIN QUERY PLAN of the SQL each request sends)')
  for (const [name, run] of cases) {
    captured.length = 0
    await run()
    log(`\n${name}:`)
    for (const query of captured) {
      log(`  ${query.sql.length > 150 ? `${query.sql.slice(0, 147)}...` : query.sql}`)
      const plan = raw.prepare(`explain query plan ${query.sql}`).all(...(query.parameters as unknown[])) as Array<{ detail: string }>
      for (const { detail } of plan) {
        const scanned = /^SCAN (\w+)(?! USING)/.exec(detail)?.[1]
        log(`    ${detail}${scanned && large.has(scanned) ? '   <-- scans a large table' : ''}`)
      }
    }
  }
  raw.close()
  await db.destroy()
}

const SEARCH_TARGETS = { p99Ms: 50, requestsPerSecond: 400, updateCheckP99Ms: 5, editMs: 5 }

/**
 * Search at this size: each search of scale-search.ts at 10 connections
 * (p50, p99) and at 50 (searches a second), the update-check beside 20
 * connections searching, a pack's edit through PATCH (the index entry written
 * in its transaction) and the index write alone, and the plans of the SQL.
 */
async function measureSearch(server: RunningServer, databaseUrl: string, gate: Record<string, string>, staff: Record<string, string>,
  manyPacks: string[], packPaths: string[]): Promise<Record<string, unknown>> {
  const results: Record<string, unknown> = {}
  const cases = searchCases(PACKS, CATEGORIES * TAGS_PER_CATEGORY, CATEGORIES, TAGS_PER_PACK)
  const mark = (ok: boolean) => (ok ? '' : ' *')
  log(`\nsearch, GET /api/packs/ (a random one of each line's queries a request)   1 connection (10)      10 connections        50 connections`)
  log(`${'search'.padEnd(46)} ${'hits'.padStart(6)} ${'p50 ms'.padStart(8)} ${'max ms'.padStart(8)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'req/s'.padStart(8)} ${'p99 ms'.padStart(8)}`)
  for (const { name, queries } of cases) {
    const paths = queries.map(urlOf)
    const probe = await fetch(`${server.url}${paths[0]}`, { headers: gate })
    const body = await probe.json() as { total?: number; total_capped?: boolean; detail?: string }
    if (probe.status !== 200) {
      log(`${name.padEnd(46)} HTTP ${probe.status} ${body.detail ?? ''}`)
      continue
    }
    // One at a time first: what one search costs with no queue in front of it.
    const alone: number[] = []
    for (let k = 0; k < 10; k++) {
      const started = performance.now()
      await (await fetch(`${server.url}${paths[Math.floor(Math.random() * paths.length)]}`, { headers: gate })).arrayBuffer()
      alone.push(performance.now() - started)
    }
    const one = percentiles(alone)
    const ten = await wrk(`${server.url}/`, { connections: 10, seconds: DURATION, headers: gate, paths, tolerateTimeouts: true })
    await settle(server, gate)
    // When one search alone takes over 100 ms, 50 connections cannot reach the target rate on one thread, and
    // the queue they leave would take minutes to drain: not run.
    const fifty: WrkFigures = one.p50 > 100 ? { requestsPerSecond: Number.NaN, p50Ms: Number.NaN, p99Ms: Number.NaN, requests: 0 }
      : await wrk(`${server.url}/`, { connections: 50, seconds: DURATION, headers: gate, paths, tolerateTimeouts: true })
    if (fifty.requests > 0) await settle(server, gate)
    results[`search: ${name}`] = { example: paths[0], hits: body.total, one, ten, fifty }
    const hits = `${body.total ?? '?'}${body.total_capped ? '+' : ''}`
    log(`${name.padEnd(46)} ${hits.padStart(6)} ${one.p50.toFixed(1).padStart(8)} ${one.max.toFixed(1).padStart(8)} ${ten.p50Ms.toFixed(2).padStart(8)} ${ten.p99Ms.toFixed(2).padStart(8)}${mark(ten.p99Ms <= SEARCH_TARGETS.p99Ms)}`
      + `${fifty.requestsPerSecond.toFixed(0).padStart(8)}${mark(fifty.requestsPerSecond >= SEARCH_TARGETS.requestsPerSecond)} ${fifty.p99Ms.toFixed(2).padStart(8)}`
      + `${ten.timeouts || fifty.timeouts ? `  (${(ten.timeouts ?? 0) + (fifty.timeouts ?? 0)} over 2 s)` : ''}`)
  }
  log(`  (* misses the target: p99 <= ${SEARCH_TARGETS.p99Ms} ms at 10 connections, >= ${SEARCH_TARGETS.requestsPerSecond} searches a second at 50;`)
  log('   NaN: not run, one search alone over 100 ms; 0 req/s: no answer within the run)')

  // The update-check while 20 connections search (every query above, at random): two wrk at once.
  const everySearch = cases.flatMap((c) => c.queries.map(urlOf))
  const [searching, updating] = await Promise.all([
    wrk(`${server.url}/`, { connections: 20, seconds: DURATION, headers: gate, paths: everySearch, tolerateTimeouts: true }),
    wrk(`${server.url}/`, { connections: 10, seconds: DURATION, headers: gate, paths: manyPacks.map((p) => `/api/packs/${p}/latest`), tolerateTimeouts: true }),
  ])
  await settle(server, gate)
  log('\nupdate-check (10 connections, 30,000 random packs) while 20 connections search (all the searches above, at random)')
  log(`  update-check: ${updating.requestsPerSecond.toFixed(0)} req/s, p50 ${updating.p50Ms.toFixed(2)} ms, p99 ${updating.p99Ms.toFixed(2)} ms${mark(updating.p99Ms <= SEARCH_TARGETS.updateCheckP99Ms)} (target <= ${SEARCH_TARGETS.updateCheckP99Ms} ms)`)
  log(`  searching beside it: ${searching.requestsPerSecond.toFixed(0)} req/s, p50 ${searching.p50Ms.toFixed(2)} ms, p99 ${searching.p99Ms.toFixed(2)} ms${searching.timeouts ? ` (${searching.timeouts} over 2 s)` : ''}`)
  results['search: mixed, update-check'] = updating
  results['search: mixed, searching'] = searching

  // Editing a pack's title through PATCH: its index entry is written in the edit's transaction. 50 edits of
  // random packs, one at a time; the revision is read first (not timed).
  const editTimes: number[] = []
  for (let k = 0; k < 50; k++) {
    const pack = packPaths[Math.floor(Math.random() * packPaths.length)]!
    const current = await (await fetch(`${server.url}/api/packs/${pack}/`, { headers: staff })).json() as { revision: number }
    const started = performance.now()
    const response = await fetch(`${server.url}/api/packs/${pack}/`, {
      method: 'PATCH', headers: { ...staff, 'content-type': 'application/json' },
      body: JSON.stringify({ revision: current.revision, title: `${packTitle(k * 7919)} ${['Remix', 'Update', 'Again'][k % 3]} ${k}` }),
    })
    if (response.status === 200) await response.arrayBuffer()
    editTimes.push(performance.now() - started)
    if (response.status !== 200) log(`  PATCH ${pack}: HTTP ${response.status} (${await response.text().catch(() => '')})`)
  }
  const edits = percentiles(editTimes)
  log(`\nedit a pack's title (PATCH, the index entry written in the same transaction), 50 random packs one at a time: p50 ${edits.p50.toFixed(1)} ms, p99 ${edits.p99.toFixed(1)} ms, max ${edits.max.toFixed(1)} ms`)
  results['search: edit through PATCH'] = edits

  // The index write alone (what the edit adds to its transaction), timed in this process on its own connection.
  const db = await openDatabase(databaseUrl)
  try {
    const ids = (await sql<{ id: string }>`select id from packs order by id limit 50`.execute(db)).rows.map((r) => r.id)
    const writeTimes: number[] = []
    for (const id of ids) {
      const started = performance.now()
      await db.transaction().execute((trx) => reindexPack(trx, id))
      writeTimes.push(performance.now() - started)
    }
    const writes = percentiles(writeTimes)
    log(`index entry written alone (reindexPack in a transaction, this process), 50 packs: p50 ${writes.p50.toFixed(1)} ms, p99 ${writes.p99.toFixed(1)} ms, max ${writes.max.toFixed(1)} ms${mark(writes.p99 <= SEARCH_TARGETS.editMs)} (target <= ${SEARCH_TARGETS.editMs} ms)`)
    results['search: index write alone'] = writes

    const planned = cases.map((c) => ({ name: c.name, query: c.queries[0]! }))
    planned.push({ name: 'plain q', query: { q: 'dragons' } })
    const engine = databaseUrl.startsWith('sqlite:') ? 'sqlite' : 'postgres'
    // First as a server answers while its in-memory copy of the index loads (SQL alone), then as it answers
    // once loaded: what the copy leaves to SQL (the listed packs, the words' rarity, the change log).
    const whileLoading = await showSearchPlans(db, engine, planned, log, 'while the in-memory copy loads (SQL answers; about 11 s after a start)')
    await searchSnapshotOf(db).loaded(db)
    const flagged = await showSearchPlans(db, engine, planned, log, 'once the in-memory copy has loaded (as the server answers)')
    searchSnapshotOf(db).close()
    const verdict = (n: number) => (n === 0 ? 'no whole read of a large table' : `${n} plan lines read a large table whole (marked above)`)
    log(`\nsearch plans: ${verdict(flagged)} once the copy has loaded; while it loads, ${verdict(whileLoading)}`)
    results['search: plans flagged'] = flagged
    results['search: plans flagged while the copy loads'] = whileLoading
  } finally {
    await db.destroy()
  }
  return results
}

/**
 * Waits (at most two minutes) until the server has worked through the requests wrk left queued when it
 * stopped (slow searches outlast the run), so that the next figures are not taken behind them: until an
 * rare-word search (which waits in the heavy reads' line behind them) answers within a second.
 */
async function settle(server: RunningServer, gate: Record<string, string>): Promise<void> {
  const until = Date.now() + 120_000
  const first = Date.now()
  while (Date.now() < until) {
    const started = performance.now()
    await (await fetch(`${server.url}/api/packs/?q=axolotl`, { headers: gate })).arrayBuffer()
    if (performance.now() - started < 1000) break
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  if (Date.now() - first > 1000) log(`  (waited ${((Date.now() - first) / 1000).toFixed(0)} s for the server to finish the queued searches)`)
}

function percentiles(times: number[]): { p50: number; p99: number; max: number } {
  const sorted = [...times].sort((a, b) => a - b)
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!
  return { p50: at(0.5), p99: at(0.99), max: sorted.at(-1)! }
}

/**
 * Notifications at this size: FOLLOWERS users follow one pack, each holding a full list of notifications
 * already (NOTIFICATIONS_KEPT, the bound), so every new version writes one for each and drops each one's
 * oldest, in the publish's transaction. Times 5 publishes through the API, checks the bound held, and
 * measures a follower's list (its counts included) and the header's unread count at 10 connections.
 */
async function measureNotifications(server: RunningServer, databaseUrl: string, gate: Record<string, string>, staff: Record<string, string>,
  packPaths: string[]): Promise<Record<string, unknown>> {
  const [namespace, packId] = packPaths[4242 % packPaths.length]!.split('/') as [string, string]
  const db = await openDatabase(databaseUrl)
  let follower: string
  try {
    const pack = (await db.selectFrom('packs').select('id').where('namespace', '=', namespace).where('pack_id', '=', packId).executeTakeFirstOrThrow()).id
    const users = (await db.selectFrom('users').select(['id', 'username']).orderBy('id').limit(FOLLOWERS).offset(1000).execute())
    follower = users[0]!.username
    // A kept site measured again starts from the same state.
    await db.deleteFrom('pack_follows').where('pack_row_id', '=', pack).execute()
    for (let i = 0; i < users.length; i += 500) await db.deleteFrom('notifications').where('user_id', 'in', users.slice(i, i + 500).map((u) => u.id)).execute()
    const started = Date.now()
    const old = new Date(Date.now() - 86_400_000).toISOString()
    await db.transaction().execute((trx) => insertRows(trx, 'pack_follows', users.map((u) => ({ pack_row_id: pack, user_id: u.id, created_at: old }))))
    for (let i = 0; i < users.length; i += 200) {
      const rows = users.slice(i, i + 200).flatMap((u) => Array.from({ length: NOTIFICATIONS_KEPT }, (_, k) => ({
        id: randomUUID(), user_id: u.id, kind: 'team.invited', created_at: new Date(Date.parse(old) + k * 1000).toISOString(), read_at: k % 2 === 0 ? old : null,
        pack_row_id: null, data: '{"title":"An older pack"}',
      })))
      await db.transaction().execute((trx) => insertRows(trx, 'notifications', rows))
    }
    await db.updateTable('packs').set({ followers: users.length }).where('id', '=', pack).execute()
    log(`\nnotifications: ${users.length.toLocaleString('en')} followers of ${namespace}/${packId}, each with ${NOTIFICATIONS_KEPT} notifications already (seeded in ${((Date.now() - started) / 1000).toFixed(0)} s)`)
  } finally {
    await db.destroy()
  }
  const results: Record<string, unknown> = {}
  const publishTimes: number[] = []
  const fanoutTimes: number[] = []
  const probeTimes: number[] = []
  const watch = await openDatabase(databaseUrl)
  try {
    for (let k = 0; k < 5; k++) {
      const form = new FormData()
      form.set('version_name', `fan-out-${Date.now()}-${k}`)
      form.set('file', new Blob([new Uint8Array(await datapack(48))]), 'fan-out.zip')
      const t = performance.now()
      const response = await fetch(`${server.url}/api/packs/${namespace}/${packId}/versions/`, { method: 'POST', headers: staff, body: form })
      await response.arrayBuffer()
      publishTimes.push(performance.now() - t)
      if (response.status !== 201) log(`  publish: HTTP ${response.status}`)
      // Until every follower is told, an update-check is asked every 5 ms: what the players' mods see meanwhile.
      let done = false
      const probe = (async () => {
        while (!done) {
          const p = performance.now()
          await (await fetch(`${server.url}/api/packs/${packPaths[k]}/latest`, { headers: gate })).arrayBuffer()
          probeTimes.push(performance.now() - p)
          await new Promise((resolve) => setTimeout(resolve, 5))
        }
      })()
      while (Number((await watch.selectFrom('notification_fanouts').select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow()).n) > 0) {
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      fanoutTimes.push(performance.now() - t)
      done = true
      await probe
    }
  } finally {
    await watch.destroy()
  }
  const publish = percentiles(publishTimes)
  const fanout = percentiles(fanoutTimes)
  const during = percentiles(probeTimes)
  log(`  a new version through the API (its transaction writes one fan-out row): p50 ${publish.p50.toFixed(0)} ms, max ${publish.max.toFixed(0)} ms (5 publishes)`)
  log(`  until all ${FOLLOWERS.toLocaleString('en')} followers are told (and each one's oldest dropped), from the publish: p50 ${fanout.p50.toFixed(0)} ms, max ${fanout.max.toFixed(0)} ms`)
  log(`  update-checks asked meanwhile, one every 5 ms: ${probeTimes.length}, p50 ${during.p50.toFixed(1)} ms, p99 ${during.p99.toFixed(1)} ms, max ${during.max.toFixed(1)} ms`)
  results['notifications: publish'] = publish
  results['notifications: fan-out'] = fanout
  results['notifications: update-check during fan-out'] = during
  const token = lastLine((await cliOk(['token', 'create', follower, '--name', 'scale-notifications'], server.env)).stdout)
  const headers = { ...gate, authorization: `Bearer ${follower} ${token}` }
  const listed = await (await fetch(`${server.url}/api/notifications/?limit=100`, { headers })).json() as { total: number; unread: number; items: Array<{ kind: string }> }
  log(`  a follower holds ${listed.total} (bound ${NOTIFICATIONS_KEPT}), ${listed.unread} unread; the newest: ${listed.items[0]?.kind ?? 'none'}`)
  for (const [name, path] of [['list, 50 newest', '/api/notifications/'], ['list, 100, unread only', '/api/notifications/?unread=true&limit=100']] as const) {
    const figures = await wrk(`${server.url}/`, { connections: 10, seconds: DURATION, headers, paths: [path] })
    log(`  ${name} (10 connections): ${figures.requestsPerSecond.toFixed(0)} req/s, p50 ${figures.p50Ms.toFixed(2)} ms, p99 ${figures.p99Ms.toFixed(2)} ms`)
    results[`notifications: ${name}`] = figures
  }
  const raw = await openDatabase(databaseUrl)
  try {
    if (databaseUrl.startsWith('sqlite:')) {
      const SQLite = await loadSqlite()
      const file = new SQLite(databaseUrl.slice('sqlite:'.length), { readonly: true })
      const id = (file.prepare('select id from users where username = ?').get(follower) as { id: string }).id
      for (const [name, text] of [
        ['unread count', 'select count(*) from notifications where user_id = ? and read_at is null'],
        ['list', 'select * from notifications where user_id = ? order by created_at desc, id desc limit 50'],
      ] as const) {
        const plan = file.prepare(`explain query plan ${text}`).all(id) as Array<{ detail: string }>
        log(`  plan of the ${name}: ${plan.map((p) => p.detail).join('; ')}`)
      }
      file.close()
    }
  } finally {
    await raw.destroy()
  }
  return results
}
