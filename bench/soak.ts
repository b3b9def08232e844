// `npm run soak [minutes]`: the server as a user runs it (`npm start`'s
// command, default settings, a throwaway data directory), seeded through the
// admin CLI and the API, then N minutes (10 by default) of mixed load from this
// process: update-checks (most of the traffic, with and without If-None-Match),
// uploads of thumbnails, media and version archives of a few MiB, draft
// autosaves, pages, downloads with Range, and now and then a new version, a
// deleted draft and the statistics. Every few seconds it samples the server's
// resident memory (/proc/<pid>/status) and open file descriptors
// (/proc/<pid>/fd).
//
// Passes when, after warm-up (the first 20 % of the run), RSS grows by less
// than 5 % (median of the samples of the first half after warm-up vs of the
// second half: each half spans a full cycle of V8's heap growth and major
// collection, which moves RSS by 10 % on its own, so a shorter window would
// measure where in that sawtooth it fell, not growth), no
// request got an unexpected status or failed, the server logged no error, and
// the open descriptors at rest after the load are at most a few more than at
// rest before it. Exits 1 otherwise. Figures go to .tmp/soak-results.json.
//
// Knobs (environment): SOAK_RATE requests per second (150; 0 = as fast as the
// server answers), SOAK_CONCURRENCY requests in flight at most (16),
// SOAK_SAMPLE_SECONDS (5). Not part of `npm test`: it takes minutes.
import { randomBytes, randomUUID } from 'node:crypto'
import fs from 'node:fs'
import http from 'node:http'
import path from 'node:path'
import { MiB, readMemory } from './procfs.js'
import { multipart, png, zip, type Part } from '../test/helpers/fixtures.js'
import { ROOT, cliOk, lastLine, startServer, type RunningServer } from '../test/helpers/server.js'

const number = (raw: string | undefined, name: string, fallback: number, allowZero = false) => {
  const value = raw === undefined || raw === '' ? fallback : Number(raw)
  if (!Number.isFinite(value) || value < 0 || (value === 0 && !allowZero)) throw new Error(`${name}: "${raw}" is not a positive number`)
  return value
}
const MINUTES = number(process.argv[2] ?? process.env.SOAK_MINUTES, 'minutes', 10)
const RATE = number(process.env.SOAK_RATE, 'SOAK_RATE', 150, true)
const CONCURRENCY = Math.round(number(process.env.SOAK_CONCURRENCY, 'SOAK_CONCURRENCY', 16))
const SAMPLE_MS = number(process.env.SOAK_SAMPLE_SECONDS, 'SOAK_SAMPLE_SECONDS', 5) * 1000
const DURATION_MS = MINUTES * 60_000
const WARMUP_SHARE = 0.2
const RSS_GROWTH_LIMIT = 5
/** Descriptors at rest after the load beyond those at rest before it: a leak of one per request would be thousands. */
const FD_GROWTH_LIMIT = 8
const RESULTS = path.join(ROOT, '.tmp', 'soak-results.json')
// The test helpers lower PACKS_PASSWORD_HASH_COST; the soak runs what users run.
const DEFAULT_COST = { PACKS_PASSWORD_HASH_COST: undefined }

const log = (line: string) => process.stdout.write(`${line}\n`)
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const pick = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)]!

// ---------------------------------------------------------------- HTTP client

/** Our own keep-alive pool, so the connections can be closed for the at-rest descriptor counts. */
let agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY })

interface Reply {
  status: number
  headers: http.IncomingHttpHeaders
  body: Buffer
}

interface RequestOptions {
  headers?: Record<string, string>
  body?: Buffer | string
  /** Reads the first chunk, then hangs up: a player cancelling a download. */
  abandon?: boolean
}

let baseUrl = ''

function send(method: string, url: string, options: RequestOptions = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const body = options.body === undefined ? undefined : Buffer.from(options.body)
    const headers: Record<string, string> = { ...options.headers }
    if (body) headers['content-length'] = String(body.length)
    const req = http.request(`${baseUrl}${url}`, { method, agent, headers, timeout: 60_000 }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => {
        if (options.abandon) {
          req.destroy()
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.alloc(0) })
          return
        }
        chunks.push(chunk)
      })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }))
      res.on('error', reject)
    })
    req.on('timeout', () => req.destroy(new Error(`no answer within 60 s: ${method} ${url}`)))
    req.on('error', (error) => {
      if (!options.abandon) reject(error)
    })
    req.end(body)
  })
}

const json = (reply: Reply) => JSON.parse(reply.body.toString('utf8')) as Record<string, unknown>

async function expect(reply: Promise<Reply>, status: number, what: string): Promise<Reply> {
  const res = await reply
  if (res.status !== status) throw new Error(`${what}: expected ${status}, got ${res.status}: ${res.body.toString('utf8').slice(0, 300)}`)
  return res
}

// ---------------------------------------------------------------- the site

interface User {
  name: string
  password: string
  /** Authorization header and the gate. */
  token: Record<string, string>
  /** Cookie and X-CSRF-Token of a signed-in browser. */
  session: Record<string, string>
  drafts: string[]
}

interface Pack {
  owner: User
  namespace: string
  packId: string
  versionFileId: string
  versionSize: number
  mediaFileIds: string[]
  etag: string | null
  versions: number
}

let gate: Record<string, string> = {}
let gateCookie: Record<string, string> = {}
const users: User[] = []
const packs: Pack[] = []
const WORDS = ['caves', 'stone', 'light', 'nether', 'ocean', 'castle', 'redstone', 'biome']

/** A PNG signature followed by random bytes: accepted as an image, exactly `size` bytes. */
function image(size: number): Buffer {
  const head = png()
  return Buffer.concat([head, randomBytes(Math.max(0, size - head.length))])
}

/** A version archive of about `size` bytes: pack.mcmeta and incompressible filler. */
function archive(size: number, packFormat = 48): Promise<Buffer> {
  return zip({
    'pack.mcmeta': JSON.stringify({ pack: { pack_format: packFormat, description: 'soak pack' } }),
    'data/soak/filler.bin': randomBytes(size),
  })
}

function description(bytes: number): string {
  const para = `## ${pick(WORDS)}\n\nThis **pack** changes _${pick(WORDS)}_: [details](https://example.org/${pick(WORDS)}), \`/give\`, and:\n\n`
    + `- more ${pick(WORDS)}\n- fewer ${pick(WORDS)}\n\n| block | light |\n|---|---|\n| ${pick(WORDS)} | 7 |\n\n> ${pick(WORDS)} *quoted*\n\n`
  return para.repeat(Math.ceil(bytes / para.length)).slice(0, bytes)
}

function draftData(title: string, size: number): Record<string, unknown> {
  return {
    title, summary: `All about ${title}`, description: description(size), tags: [pick(WORDS), pick(WORDS)], category: 'worldgen',
    version_name: '1.0.0', changelog: '- first',
  }
}

async function upload(user: User, kind: string, file: Buffer, draft: string, filename: string): Promise<Reply> {
  const form = multipart([{ name: 'kind', value: kind }, { name: 'draft_uuid', value: draft }, { name: 'file', value: file, filename }])
  return send('POST', '/api/uploads/', { headers: { ...user.token, ...form.headers }, body: form.payload })
}

async function seed(server: RunningServer, archives: Buffer[]): Promise<void> {
  const password = /Site password: (\S+)/.exec(server.stdout())?.[1]
  if (!password) throw new Error(`the server did not print a generated site password:\n${server.stdout()}`)
  gate = { 'x-master-password': password }
  const gated = await expect(send('POST', '/gate/', {
    headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ password, next: '/' }).toString(),
  }), 303, 'gate form')
  gateCookie = { cookie: cookiePairs(gated.headers['set-cookie']) }

  await cliOk(['category', 'create', 'worldgen', '--name', 'World generation', '--color', '#3b82f6'], server.env, DEFAULT_COST)
  // A few tags are enough for the chips and the tag filter; each CLI run is a process start.
  for (const word of WORDS.slice(0, 4)) await cliOk(['tag', 'create', word, '--category', 'worldgen'], server.env, DEFAULT_COST)
  for (const name of ['soak-alice', 'soak-bob', 'soak-carol']) {
    const userPassword = `${name}-password`
    await cliOk(['user', 'create', name, '--password', userPassword, ...(name === 'soak-alice' ? ['--staff'] : [])], server.env, DEFAULT_COST)
    const token = lastLine((await cliOk(['token', 'create', name, '--name', 'soak'], server.env, DEFAULT_COST)).stdout)
    const login = await expect(send('POST', '/login/', {
      headers: { ...gate, 'content-type': 'application/json' }, body: JSON.stringify({ username: name, password: userPassword }),
    }), 200, 'sign-in')
    const csrf = String(json(login).csrf_token)
    users.push({
      name, password: userPassword,
      token: { ...gate, authorization: `Bearer ${name} ${token}` },
      session: { cookie: `${gateCookie.cookie}; ${cookiePairs(login.headers['set-cookie'])}`, 'x-csrf-token': csrf },
      drafts: [randomUUID(), randomUUID(), randomUUID()],
    })
  }

  // Two packs each; one description near the largest a draft may hold, so the pack page's Markdown cache matters.
  const sizes = [2_000, 20_000, 6_000, 120_000, 4_000, 10_000]
  for (let i = 0; i < 6; i++) {
    const owner = users[i % users.length]!
    const draft = randomUUID()
    const title = `Soak ${pick(WORDS)} ${i}`
    await expect(send('POST', '/api/draft/', {
      headers: { ...owner.token, 'content-type': 'application/json' }, body: JSON.stringify({ draft, data: draftData(title, sizes[i]!) }),
    }), 200, 'seed draft')
    await expect(upload(owner, 'version', archives[i % archives.length]!, draft, 'pack.zip'), 200, 'seed version')
    await expect(upload(owner, 'thumbnail', image(30_000), draft, 'icon.png'), 200, 'seed thumbnail')
    await expect(upload(owner, 'media', image(800_000), draft, 'shot.png'), 200, 'seed media')
    const published = json(await expect(send('POST', '/api/draft/publish/', {
      headers: { ...owner.token, 'content-type': 'application/json' }, body: JSON.stringify({ draft }),
    }), 201, 'publish'))
    const namespace = String(published.namespace)
    const packId = String(published.pack_id)
    const latest = json(await expect(send('GET', `/api/packs/${namespace}/${packId}/latest`, { headers: gate }), 200, 'seed update-check'))
    const media = (published.media as Array<{ url: string }>).map((m) => fileIdOf(m.url))
    const versionFileId = fileIdOf(String(latest.download_url))
    const head = await expect(send('HEAD', `/api/files/${versionFileId}/`, { headers: gate }), 200, 'seed HEAD')
    packs.push({
      owner, namespace, packId, versionFileId, versionSize: Number(head.headers['content-length']),
      mediaFileIds: media, etag: null, versions: 1,
    })
  }
}

function cookiePairs(setCookie: string[] | undefined): string {
  return (setCookie ?? []).map((c) => c.split(';')[0]!).join('; ')
}

function fileIdOf(url: string): string {
  const id = /\/api\/files\/([0-9a-f-]{36})\//.exec(url)?.[1]
  if (!id) throw new Error(`not a file URL: ${url}`)
  return id
}

// ---------------------------------------------------------------- the load

interface Outcome {
  status: number
  expected: readonly number[]
  detail?: string
}

type Action = () => Promise<Outcome>

const OK = [200] as const

function outcome(reply: Reply, expected: readonly number[]): Outcome {
  return { status: reply.status, expected, detail: expected.includes(reply.status) ? undefined : reply.body.toString('utf8').slice(0, 300) }
}

let archivesForUpload: Buffer[] = []
let smallArchive: Buffer = Buffer.alloc(0)

const actions: Record<string, Action> = {
  async 'update-check'() {
    const pack = pick(packs)
    const conditional = pack.etag !== null && Math.random() < 0.5
    const reply = await send('GET', `/api/packs/${pack.namespace}/${pack.packId}/latest`, {
      headers: conditional ? { ...gate, 'if-none-match': pack.etag! } : gate,
    })
    if (reply.status === 200) pack.etag = String(reply.headers.etag)
    // A 200 to a conditional one is right too: a new version may have come since.
    return outcome(reply, conditional ? [200, 304] : OK)
  },
  async 'update-check unknown pack'() {
    return outcome(await send('GET', `/api/packs/nobody/missing-${Math.floor(Math.random() * 1000)}/latest`, { headers: gate }), [404])
  },
  async 'page: browse'() {
    const url = pick(['/', `/?q=${pick(WORDS)}`, `/?tag=${pick(WORDS)}`, '/?category=worldgen', '/?page=1'])
    return outcome(await send('GET', url, { headers: gateCookie }), OK)
  },
  async 'page: pack'() {
    const pack = pick(packs)
    return outcome(await send('GET', `/packs/${pack.namespace}/${pack.packId}/`, { headers: gateCookie }), OK)
  },
  async 'api: list and autocomplete'() {
    const url = pick(['/api/packs/', '/api/packs/?page=1&per_page=5', `/api/tags/autocomplete/?q=${pick(WORDS).slice(0, 2)}`, '/api/users/autocomplete/?q=soak'])
    return outcome(await send('GET', url, { headers: gate }), OK)
  },
  async 'download: range'() {
    const pack = pick(packs)
    const start = Math.floor(Math.random() * (pack.versionSize - 65_536))
    const end = start + Math.floor(Math.random() * 65_536)
    const reply = await send('GET', `/api/files/${pack.versionFileId}/`, { headers: { ...gate, range: `bytes=${start}-${end}` } })
    if (reply.status === 206 && reply.body.length !== end - start + 1) return { status: reply.status, expected: [206], detail: `${reply.body.length} bytes for ${end - start + 1}` }
    return outcome(reply, [206])
  },
  async 'download: whole file or HEAD'() {
    const pack = pick(packs)
    const media = pick(pack.mediaFileIds)
    return outcome(await send(Math.random() < 0.3 ? 'HEAD' : 'GET', `/api/files/${media}/`, { headers: gate }), OK)
  },
  async 'download: abandoned'() {
    const pack = pick(packs)
    return outcome(await send('GET', `/api/files/${pack.versionFileId}/?download=1`, { headers: gate, abandon: true }), OK)
  },
  async autosave() {
    const user = pick(users)
    const draft = pick(user.drafts)
    // Half from a browser session (cookie and CSRF token), half from a script's token.
    const headers = Math.random() < 0.5 ? user.session : user.token
    const body = JSON.stringify({ draft, data: draftData(`Draft of ${user.name}`, 1_000 + Math.floor(Math.random() * 6_000)) })
    return outcome(await send('POST', '/api/draft/', { headers: { ...headers, 'content-type': 'application/json' }, body }), OK)
  },
  async upload() {
    const user = pick(users)
    const roll = Math.random()
    const [kind, file, name] = roll < 0.5 ? ['thumbnail', image(50_000), 'icon.png'] as const
      : roll < 0.85 ? ['media', image(1024 * 1024), 'shot.png'] as const
        : ['version', pick(archivesForUpload), 'pack.zip'] as const
    const reply = await upload(user, kind, file, pick(user.drafts), name)
    if (reply.status !== 200) return outcome(reply, OK)
    // Deleted again, as the create page's "remove" does: pending uploads stay within the user's quota.
    const uuid = String(json(reply).uuid)
    return outcome(await send('POST', `/api/uploads/${uuid}/delete/`, { headers: user.token }), OK)
  },
}

/** Shares of the traffic, in percent: players' update-checks dominate a real site. */
const WEIGHTS: Record<keyof typeof actions, number> = {
  'update-check': 55,
  'update-check unknown pack': 3,
  'page: browse': 5,
  'page: pack': 6,
  'api: list and autocomplete': 6,
  'download: range': 10,
  'download: whole file or HEAD': 2,
  'download: abandoned': 1,
  autosave: 8,
  upload: 4,
}

/** Less frequent, on timers: each is a request kind of its own in the figures. */
const periodic: Array<{ kind: string; everyMs: number; run: Action }> = [
  {
    kind: 'new version',
    everyMs: 30_000,
    async run() {
      const pack = pick(packs)
      pack.versions += 1
      const parts: Part[] = [
        { name: 'version_name', value: `1.${pack.versions}.0` },
        { name: 'changelog', value: `- soak version ${pack.versions}` },
        { name: 'file', value: smallArchive, filename: 'pack.zip' },
      ]
      const form = multipart(parts)
      const reply = await send('POST', `/api/packs/${pack.namespace}/${pack.packId}/versions/`, { headers: { ...pack.owner.token, ...form.headers }, body: form.payload })
      return outcome(reply, [201])
    },
  },
  {
    kind: 'draft deleted and a new one started',
    everyMs: 60_000,
    async run() {
      const user = pick(users)
      const index = Math.floor(Math.random() * user.drafts.length)
      const old = user.drafts[index]!
      user.drafts[index] = randomUUID()
      // A draft that was never autosaved does not exist yet: 404 is right for it.
      return outcome(await send('DELETE', `/api/draft/?draft=${old}`, { headers: user.token }), [200, 404])
    },
  },
  {
    kind: 'statistics',
    everyMs: 20_000,
    async run() {
      return outcome(await send('GET', '/api/stats/', { headers: users[0]!.token }), OK)
    },
  },
]

interface KindFigures {
  requests: number
  errors: number
  statuses: Record<string, number>
  latencies: number[]
}

const figures = new Map<string, KindFigures>()
const errorExamples: Array<{ kind: string; status: number; detail: string; atSeconds: number }> = []
let errorCount = 0
let loadStarted = 0

async function record(kind: string, action: Action): Promise<void> {
  const entry = figures.get(kind) ?? { requests: 0, errors: 0, statuses: {}, latencies: [] }
  figures.set(kind, entry)
  const started = performance.now()
  let result: Outcome
  try {
    result = await action()
  } catch (error) {
    result = { status: 0, expected: [], detail: (error as Error).message }
  }
  entry.requests += 1
  entry.latencies.push(performance.now() - started)
  entry.statuses[String(result.status)] = (entry.statuses[String(result.status)] ?? 0) + 1
  if (!result.expected.includes(result.status)) {
    entry.errors += 1
    errorCount += 1
    if (errorExamples.length < 50) {
      errorExamples.push({ kind, status: result.status, detail: result.detail ?? '', atSeconds: Math.round((Date.now() - loadStarted) / 1000) })
    }
  }
}

const weighted = Object.entries(WEIGHTS).flatMap(([kind, weight]) => Array.from({ length: weight }, () => kind))

/** Paces all clients together at RATE requests a second (none when RATE is 0). */
let nextSlot = 0
async function slot(): Promise<void> {
  if (RATE === 0) return
  const now = performance.now()
  nextSlot = Math.max(nextSlot + 1000 / RATE, now)
  if (nextSlot > now) await sleep(nextSlot - now)
}

async function client(until: number): Promise<void> {
  while (Date.now() < until) {
    await slot()
    if (Date.now() >= until) break
    const kind = pick(weighted)
    await record(kind, actions[kind]!)
  }
}

// ---------------------------------------------------------------- samples

interface Sample {
  atSeconds: number
  rss: number
  fds: number
}

function openFds(pid: number): number {
  return fs.readdirSync(`/proc/${pid}/fd`).length
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

/** Least-squares growth over the samples' span, in percent of their mean. */
function trendPercent(points: Sample[]): number {
  if (points.length < 2) return 0
  const meanT = points.reduce((sum, p) => sum + p.atSeconds, 0) / points.length
  const meanR = points.reduce((sum, p) => sum + p.rss, 0) / points.length
  const covariance = points.reduce((sum, p) => sum + (p.atSeconds - meanT) * (p.rss - meanR), 0)
  const variance = points.reduce((sum, p) => sum + (p.atSeconds - meanT) ** 2, 0)
  const span = points.at(-1)!.atSeconds - points[0]!.atSeconds
  return variance === 0 ? 0 : ((covariance / variance) * span / meanR) * 100
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0
}

/** Closes our idle keep-alive connections and waits for the server to let go of them. */
async function atRest(pid: number): Promise<number> {
  agent.destroy()
  agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY })
  let fds = openFds(pid)
  for (let i = 0; i < 20; i++) {
    await sleep(250)
    const now = openFds(pid)
    if (now === fds) break
    fds = now
  }
  return fds
}

// ---------------------------------------------------------------- main

async function main(): Promise<void> {
  log(`soak: ${MINUTES} min, ${RATE === 0 ? 'unpaced' : `${RATE} requests/s`}, at most ${CONCURRENCY} in flight`)
  // Exactly `npm start` with default settings: no variable but where the data lives (and the port).
  const server = await startServer({ timeoutMs: 60_000, env: DEFAULT_COST })
  const pid = server.child.pid!
  baseUrl = server.url
  // The request log (info level by default) would pile up in the helper's buffer for ten minutes: read it line
  // by line instead, keeping only what matters (errors and warnings).
  const serverLog = { errors: 0, warnings: 0, examples: [] as string[], stderr: '' }
  let partial = ''
  const stdout = server.child.stdout!
  const startupOutput = server.stdout()
  stdout.removeAllListeners('data')
  stdout.on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n')
    partial = lines.pop()!
    for (const line of lines) {
      const level = /"level":(\d+)/.exec(line)?.[1]
      if (level === undefined) continue
      if (Number(level) >= 50) {
        serverLog.errors += 1
        if (serverLog.examples.length < 20) serverLog.examples.push(line.slice(0, 1000))
      } else if (Number(level) >= 40) {
        serverLog.warnings += 1
        if (serverLog.examples.length < 20) serverLog.examples.push(line.slice(0, 1000))
      }
    }
  })
  server.child.stderr!.removeAllListeners('data')
  server.child.stderr!.on('data', (chunk: string) => { if (serverLog.stderr.length < 10_000) serverLog.stderr += chunk })
  let exited = false
  void server.exited.then(() => { exited = true })

  try {
    const archives = await Promise.all([archive(3 * MiB), archive(4 * MiB), archive(2 * MiB)])
    archivesForUpload = archives
    smallArchive = await archive(256 * 1024)
    const seedStarted = Date.now()
    await seed({ ...server, stdout: () => startupOutput }, archives)
    log(`seeded ${users.length} users and ${packs.length} packs in ${((Date.now() - seedStarted) / 1000).toFixed(1)} s (pid ${pid})`)

    const fdsBefore = await atRest(pid)
    const rssBefore = readMemory(pid).rss
    const samples: Sample[] = []
    loadStarted = Date.now()
    const until = loadStarted + DURATION_MS
    const sampler = setInterval(() => {
      try {
        samples.push({ atSeconds: Math.round((Date.now() - loadStarted) / 1000), rss: readMemory(pid).rss, fds: openFds(pid) })
        const last = samples.at(-1)!
        const done = [...figures.values()].reduce((n, f) => n + f.requests, 0)
        if (samples.length % 12 === 0) {
          log(`  ${last.atSeconds} s: ${done} requests, ${errorCount} errors, RSS ${(last.rss / MiB).toFixed(1)} MiB, ${last.fds} fds`)
        }
      } catch {
        // The server is gone; reported below.
      }
    }, SAMPLE_MS)
    const timers = periodic.map((p) => setInterval(() => { void record(p.kind, p.run) }, p.everyMs))
    await Promise.all(Array.from({ length: CONCURRENCY }, () => client(until)))
    for (const timer of timers) clearInterval(timer)
    clearInterval(sampler)
    await sleep(1000) // a periodic request still in flight
    const loadSeconds = (Date.now() - loadStarted) / 1000

    if (exited) throw new Error(`the server exited during the soak; stderr:\n${serverLog.stderr}`)
    const fdsAfter = await atRest(pid)
    const rssAfterLoad = readMemory(pid).rss

    // RSS: the median of the first half after warm-up against the median of the second half.
    const warmFrom = (DURATION_MS / 1000) * WARMUP_SHARE
    const middle = warmFrom + (DURATION_MS / 1000 - warmFrom) / 2
    const early = samples.filter((s) => s.atSeconds >= warmFrom && s.atSeconds < middle)
    const late = samples.filter((s) => s.atSeconds >= middle)
    if (early.length === 0 || late.length === 0) throw new Error('too few memory samples: run for longer or sample more often')
    const rssWarm = median(early.map((s) => s.rss))
    const rssEnd = median(late.map((s) => s.rss))
    const growth = ((rssEnd - rssWarm) / rssWarm) * 100
    // For the record: the least-squares trend over the same span, and the median of each tenth of the run.
    const trend = trendPercent(samples.filter((s) => s.atSeconds >= warmFrom))
    const tenths = Array.from({ length: 10 }, (_, i) => {
      const inTenth = samples.filter((s) => s.atSeconds >= (DURATION_MS / 10000) * i && s.atSeconds < (DURATION_MS / 10000) * (i + 1))
      return inTenth.length === 0 ? null : mib(median(inTenth.map((s) => s.rss)))
    })
    const fdSamples = samples.map((s) => s.fds)

    const total = [...figures.values()].reduce((n, f) => n + f.requests, 0)
    const kinds = Object.fromEntries([...figures.entries()].sort((a, b) => b[1].requests - a[1].requests).map(([kind, f]) => [kind, {
      requests: f.requests, errors: f.errors, statuses: f.statuses,
      p50_ms: Number(percentile(f.latencies, 50).toFixed(1)), p99_ms: Number(percentile(f.latencies, 99).toFixed(1)),
    }]))
    const failures: string[] = []
    if (growth >= RSS_GROWTH_LIMIT) failures.push(`RSS grew ${growth.toFixed(1)} % after warm-up (limit ${RSS_GROWTH_LIMIT} %)`)
    if (errorCount > 0) failures.push(`${errorCount} requests got an unexpected answer`)
    if (serverLog.errors > 0) failures.push(`the server logged ${serverLog.errors} errors`)
    if (fdsAfter - fdsBefore > FD_GROWTH_LIMIT) failures.push(`open descriptors at rest grew from ${fdsBefore} to ${fdsAfter}`)

    const results = {
      date: new Date().toISOString(),
      settings: { minutes: MINUTES, rate: RATE, concurrency: CONCURRENCY, sample_seconds: SAMPLE_MS / 1000, node: process.version },
      requests: { total, per_second: Number((total / loadSeconds).toFixed(1)), errors: errorCount, by_kind: kinds, error_examples: errorExamples },
      rss: {
        before_load_mib: mib(rssBefore), after_warmup_mib: mib(rssWarm), end_mib: mib(rssEnd), after_load_mib: mib(rssAfterLoad),
        min_after_warmup_mib: mib(Math.min(...samples.filter((s) => s.atSeconds >= warmFrom).map((s) => s.rss))),
        max_mib: mib(Math.max(...samples.map((s) => s.rss))), growth_percent: Number(growth.toFixed(2)), limit_percent: RSS_GROWTH_LIMIT,
        trend_percent: Number(trend.toFixed(2)), median_by_tenth_mib: tenths,
      },
      fds: { at_rest_before: fdsBefore, at_rest_after: fdsAfter, under_load_min: Math.min(...fdSamples), under_load_max: Math.max(...fdSamples), limit_growth: FD_GROWTH_LIMIT },
      server_log: serverLog,
      samples,
      passed: failures.length === 0,
      failures,
    }
    fs.mkdirSync(path.dirname(RESULTS), { recursive: true })
    fs.writeFileSync(RESULTS, `${JSON.stringify(results, null, 2)}\n`)

    log('')
    log(`requests: ${total} in ${loadSeconds.toFixed(0)} s (${results.requests.per_second}/s), ${errorCount} unexpected`)
    for (const [kind, f] of Object.entries(kinds)) {
      log(`  ${kind.padEnd(38)} ${String(f.requests).padStart(7)}  errors ${f.errors}  p50 ${f.p50_ms} ms  p99 ${f.p99_ms} ms  ${JSON.stringify(f.statuses)}`)
    }
    for (const example of errorExamples.slice(0, 10)) log(`  ! ${example.atSeconds} s ${example.kind}: ${example.status} ${example.detail}`)
    log(`server log: ${serverLog.errors} errors, ${serverLog.warnings} warnings`)
    for (const line of serverLog.examples.slice(0, 5)) log(`  ! ${line.slice(0, 300)}`)
    log(`RSS: ${results.rss.after_warmup_mib} MiB after warm-up -> ${results.rss.end_mib} MiB at the end (medians of each half after warm-up): `
      + `${growth >= 0 ? '+' : ''}${growth.toFixed(2)} % (before load ${results.rss.before_load_mib} MiB, max ${results.rss.max_mib} MiB, `
      + `trend ${trend >= 0 ? '+' : ''}${trend.toFixed(2)} %)`)
    log(`RSS medians by tenth of the run (MiB): ${tenths.map((t) => t ?? '-').join(' ')}`)
    log(`open descriptors at rest: ${fdsBefore} before, ${fdsAfter} after (under load ${results.fds.under_load_min}-${results.fds.under_load_max})`)
    log(`figures: ${path.relative(process.cwd(), RESULTS)}`)
    log(failures.length === 0 ? 'PASSED' : `FAILED: ${failures.join('; ')}`)
    await server.stop()
    fs.rmSync(server.dataDir, { recursive: true, force: true })
    process.exitCode = failures.length === 0 ? 0 : 1
  } catch (error) {
    await server.stop().catch(() => {})
    fs.rmSync(server.dataDir, { recursive: true, force: true })
    throw error
  } finally {
    agent.destroy()
  }
}

const mib = (bytes: number) => Number((bytes / MiB).toFixed(1))

process.once('SIGINT', () => process.exit(130))
main().catch((error: unknown) => {
  process.stderr.write(`soak: ${error instanceof Error ? error.stack ?? error.message : String(error)}\n`)
  process.exit(1)
})
