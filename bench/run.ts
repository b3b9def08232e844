// `npm run bench`: the real server, started as `npm start` starts it (the
// build, then `node dist/src/server.js`), on loopback only.
//
//  a) Update-check: GET /api/packs/{namespace}/{pack_id}/latest on a server
//     with no setting at all (access log on, generated gate password, its
//     stdout to a file as a service manager would take it), against a bare
//     node:http server answering the same bytes, with wrk (Debian's): 200s
//     (target >= 0.55 x bare, each on one core; p99 <= 3.5 ms unpinned) and
//     304s (target >= 0.5 x bare).
//  b) Uploads: a multipart body with a 400 MiB version archive, written to a
//     file and sent with curl to Packs and to a loopback sink that discards it
//     (target >= 0.5 x the sink), watching the server's resident memory
//     (target: growth < 32 MiB) and its CPU (target <= 2.5 core-seconds a GiB).
//
// Every part but c runs pinned when it can: the servers measured on CPU 0, this process and the wrk and
// curl it starts on CPU 1 (taskset).
//  c) What a second worker adds: WEB_CONCURRENCY=1 against 2, both on one local
//     redis-server (several workers need REDIS_URL). No target: a figure.
//  d) The batch update-check: 200 packs in one POST /api/update-check/, against
//     a bare node:http server sending the same answer, and the single check on
//     the same server (packs answered per second both ways). No target: figures.
//  e) What REDIS_URL costs the update-check: one worker with it against one
//     without (target >= 0.8).
//  f) Downloads: a 100 MiB archive, against nginx (Debian's, one worker) serving
//     the same file from the same disk with sendfile on and off (target >= 0.5
//     x the faster, each on one core), and a Range request.
//  g) Downloads behind nginx: the server as `npm start` starts it plus PACKS_ACCEL_REDIRECT, behind nginx
//     with the runbook's internal location (docs/deploy.md), against nginx serving the file alone, both on
//     one core, wrk on the other (target >= 0.9 x the faster nginx alone), and Packs' CPU per download
//     from /proc/<pid>/stat (target < 1 ms).
//
// Exits non-zero only when something fails (a non-2xx/3xx, a wrong byte, a crash);
// a missed target is printed as "TARGET MISSED". Figures go to .tmp/bench-results.json.
//
// Knobs (environment): BENCH_DURATION seconds per run (8), BENCH_ROUNDS (3),
// BENCH_CONNECTIONS (50), BENCH_WARMUP seconds (2), BENCH_UPLOAD_MIB (400),
// BENCH_ONLY (a comma list of update-check, upload, workers, batch, redis, download, download-nginx).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { createHash, randomUUID } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import autocannon from 'autocannon'
import { datapack } from '../test/helpers/fixtures.js'
import { ROOT, cliOk, freePort, lastLine, startServer, type RunningServer } from '../test/helpers/server.js'
import { MiB, readCpuSeconds, readMemory, resetPeak, sampleRss } from './procfs.js'
import { accelLocation, proxyLocation, startNginx } from '../test/helpers/nginx.js'
import { redisSkip, startRedis } from '../test/helpers/redis.js'
import { bigZip, curlUpload, streamUpload, writeMultipartFile } from './stream-upload.js'
import { pinServerAndLoad, releasePinning, wrk, wrkInstalled } from './wrk.js'

const MASTER_PASSWORD = 'bench-master-password'
const number = (name: string, fallback: number) => {
  const raw = process.env[name]
  const value = raw === undefined || raw === '' ? fallback : Number(raw)
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name}: "${raw}" is not a positive number`)
  return value
}
const DURATION = number('BENCH_DURATION', 8)
const ROUNDS = Math.round(number('BENCH_ROUNDS', 3))
const CONNECTIONS = Math.round(number('BENCH_CONNECTIONS', 50))
const WARMUP = number('BENCH_WARMUP', 2)
const UPLOAD_BYTES = Math.round(number('BENCH_UPLOAD_MIB', 400) * MiB)

/** A failure (not a missed target): the benchmark exits 1 after cleaning up. */
class BenchFailure extends Error {}

// The server production-like: quiet logs, gate password from the environment.
// PACKS_PASSWORD_HASH_COST unset: the test helpers lower it, the bench runs what users run.
const SERVER_ENV = { LOG_LEVEL: 'warn', NODE_ENV: 'production', PACKS_MASTER_PASSWORD: MASTER_PASSWORD, PACKS_PASSWORD_HASH_COST: undefined }
const DEFAULT_COST = { PACKS_PASSWORD_HASH_COST: undefined }
const GATE = { 'x-master-password': MASTER_PASSWORD }

const children: ChildProcess[] = []
const servers: RunningServer[] = []
// Ctrl-C still runs the exit hooks that kill the children.
process.once('SIGINT', () => process.exit(130))
process.once('exit', () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL')
})

const log = (line: string) => process.stdout.write(`${line}\n`)

async function expectStatus(res: Response, status: number, what: string): Promise<string> {
  const text = await res.text()
  if (res.status !== status) throw new BenchFailure(`${what}: expected ${status}, got ${res.status}: ${text.slice(0, 500)}`)
  return text
}

async function start(env: Record<string, string | undefined> = {}, pinned = true): Promise<RunningServer> {
  const server = await startServer({ env: { ...SERVER_ENV, ...env } })
  servers.push(server)
  if (pinned) onServerCore(server.child.pid!)
  return server
}

/**
 * Pinning, as every figure here is taken since it could be (with two cores or more, and taskset): the servers
 * measured (Packs, its baselines, nginx; every thread of each) on CPU 0, this process and so every wrk it starts
 * on CPU 1, so the load generator never takes the server's core and CPU per unit of work is the server's own.
 */
const PIN = os.availableParallelism() >= 2 && (process.env.PATH ?? '').split(':').some((dir) => fs.existsSync(path.join(dir, 'taskset')))
function onServerCore(pid: number, cpus = '0'): void {
  if (PIN) spawnSync('taskset', ['-a', '-cp', cpus, String(pid)], { encoding: 'utf8' })
}
/** Every CPU again, for a process pinned before (a measurement of the unpinned default). */
const ALL_CPUS = `0-${os.availableParallelism() - 1}`

async function stop(server: RunningServer): Promise<void> {
  const exit = await server.stop()
  if (exit.code !== 0) throw new BenchFailure(`server exited with ${JSON.stringify(exit)} on SIGTERM; stderr:\n${server.stderr()}`)
  fs.rmSync(server.dataDir, { recursive: true, force: true })
}

/** A user and an API token made with the admin CLI, as an operator would; returns request headers. */
async function seedUser(server: RunningServer, username: string, gate: Record<string, string> = GATE): Promise<Record<string, string>> {
  await cliOk(['user', 'create', username, '--password', 'bench-password-0123'], server.env, DEFAULT_COST)
  const token = lastLine((await cliOk(['token', 'create', username, '--name', 'bench'], server.env, DEFAULT_COST)).stdout)
  return { ...gate, authorization: `Bearer ${username} ${token}` }
}

/** Upload, draft, publish: one pack with one version. Returns its update-check path and exact answer. */
async function seedPack(server: RunningServer, headers: Record<string, string>, title = 'Bench Pack', gate: Record<string, string> = GATE) {
  const draft = randomUUID()
  const form = new FormData()
  form.append('kind', 'version')
  form.append('draft_uuid', draft)
  form.append('file', new Blob([await datapack(48)], { type: 'application/zip' }), 'bench-pack-1.0.0.zip')
  await expectStatus(await fetch(`${server.url}/api/uploads/`, { method: 'POST', headers, body: form }), 200, 'upload version')

  const data = { title, summary: 'A pack to benchmark the update-check', version_name: '1.0.0', changelog: 'First.' }
  const json = { ...headers, 'content-type': 'application/json' }
  await expectStatus(await fetch(`${server.url}/api/draft/`, { method: 'POST', headers: json, body: JSON.stringify({ draft, data }) }), 200, 'save draft')
  const published = JSON.parse(await expectStatus(
    await fetch(`${server.url}/api/draft/publish/`, { method: 'POST', headers: json, body: JSON.stringify({ draft }) }), 201, 'publish')) as { namespace: string; pack_id: string }

  const id = `${published.namespace}:${published.pack_id}`
  const latestPath = `/api/packs/${published.namespace}/${published.pack_id}/latest`
  const res = await fetch(`${server.url}${latestPath}`, { headers: gate })
  const body = Buffer.from(await res.arrayBuffer())
  if (res.status !== 200) throw new BenchFailure(`update-check: expected 200, got ${res.status}: ${body.toString()}`)
  const latest = JSON.parse(body.toString()) as { version?: string; pack_format?: number | null }
  if (latest.version !== '1.0.0' || latest.pack_format !== 48) throw new BenchFailure(`update-check answered ${body.toString()}`)
  return { id, latestPath, body, etag: res.headers.get('etag') ?? '', contentType: res.headers.get('content-type') ?? 'application/json', headers: headerFields(res) }
}

/** The header fields an answer carried, but those Node's http adds to every response (the baseline gets them from Node too). */
function headerFields(res: Response): [string, string][] {
  return [...res.headers].filter(([name]) => !['date', 'connection', 'keep-alive', 'transfer-encoding'].includes(name))
}

/** The bare node:http baseline, in its own process; resolves with its URL once it listens. */
/** `sink`: true for the upload's loopback sink (reads and discards), 'store' for its floor (hashes both, writes to `storeDir`). */
async function startBare(
  body: Buffer, contentType: string, notModified = false, sink: boolean | 'store' = false, headers?: [string, string][], storeDir = '',
): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join('bench', 'bare-server.ts')], {
    cwd: ROOT,
    env: {
      ...process.env, NODE_ENV: 'production', BENCH_BODY_B64: body.toString('base64'), BENCH_CONTENT_TYPE: contentType,
      BENCH_NOT_MODIFIED: notModified ? '1' : '0', BENCH_SINK: sink === 'store' ? 'store' : sink ? '1' : '0', BENCH_STORE_DIR: storeDir, BENCH_HEADERS_JSON: headers ? JSON.stringify(headers) : '',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  children.push(child)
  onServerCore(child.pid!)
  const port = await new Promise<number>((resolve, reject) => {
    let out = ''
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk
      const line = /^(\d+)\n/.exec(out)
      if (line) resolve(Number(line[1]))
    })
    child.once('exit', (code) => reject(new BenchFailure(`bare server exited with ${code} before listening`)))
    setTimeout(() => reject(new BenchFailure('bare server did not start within 20 s')), 20_000).unref()
  })
  return { url: `http://127.0.0.1:${port}`, child }
}

interface RunFigures {
  requestsPerSecond: number
  p50Ms: number
  p99Ms: number
  requests: number
}

/** One autocannon run; any non-200, wrong body, error or timeout is a failure. */
async function load(name: string, url: string, seconds: number, expectBody: string, request: { method?: 'POST'; body?: string } = {}, gate: Record<string, string> = GATE): Promise<RunFigures> {
  const result = await autocannon({
    url,
    connections: CONNECTIONS,
    pipelining: 1,
    duration: seconds,
    headers: request.body === undefined ? gate : { ...gate, 'content-type': 'application/json' },
    ...request,
    expectBody,
  })
  const codes = Object.entries(result.statusCodeStats ?? {}).filter(([code]) => code !== '200')
  const problems = [
    result.non2xx > 0 && `${result.non2xx} non-2xx responses`,
    codes.length > 0 && `status codes other than 200: ${codes.map(([code, s]) => `${code} x${s.count ?? '?'}`).join(', ')}`,
    result.errors > 0 && `${result.errors} connection errors`,
    result.timeouts > 0 && `${result.timeouts} timeouts`,
    result.mismatches > 0 && `${result.mismatches} responses with a different body`,
    result['2xx'] === 0 && 'no successful response at all',
  ].filter(Boolean)
  if (problems.length > 0) throw new BenchFailure(`${name} (${url}): ${problems.join('; ')}`)
  return { requestsPerSecond: result.requests.average, p50Ms: result.latency.p50, p99Ms: result.latency.p99, requests: result['2xx'] }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

function medianOf(runs: RunFigures[]): RunFigures {
  return {
    requestsPerSecond: median(runs.map((r) => r.requestsPerSecond)),
    p50Ms: median(runs.map((r) => r.p50Ms)),
    p99Ms: median(runs.map((r) => r.p99Ms)),
    requests: runs.reduce((sum, r) => sum + r.requests, 0),
  }
}

/** The server with no setting at all, as `npm start` runs it; its log goes to a file, as a service manager would take it. */
const DEFAULT_ENV = { LOG_LEVEL: undefined, NODE_ENV: undefined, PACKS_MASTER_PASSWORD: undefined, PACKS_PASSWORD_HASH_COST: undefined, PACKS_ACCESS_LOG: undefined }
/** Pinned (the server on one core, wrk on the other): what the update-check must keep of a bare node:http server's rate. */
const UPDATE_CHECK_TARGET = 0.55
const NOT_MODIFIED_TARGET = 0.5
/** Unpinned, as the server runs by default, at BENCH_CONNECTIONS: the update-check's p99. */
const P99_TARGET_MS = 3.5

async function startDefault(env: Record<string, string | undefined> = {}): Promise<{ server: RunningServer; gate: Record<string, string>; log: string }> {
  const logFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'packs-bench-log-')), 'stdout.log')
  const server = await startServer({ env: { ...DEFAULT_ENV, ...env }, stdoutFile: logFile })
  servers.push(server)
  onServerCore(server.child.pid!)
  // No PACKS_MASTER_PASSWORD: the first start generates one and prints it once, as the README describes.
  const password = (await server.waitForStdout(/Site password: (\S+)/))[1]!
  return { server, gate: { 'x-master-password': password }, log: logFile }
}

/** Rounds of wrk against each target, alternating, after a warm-up of each; medians. */
async function alternate<T extends string>(targets: Record<T, { url: string; headers?: Record<string, string> }>, connections: number): Promise<{ medians: Record<T, RunFigures>; runs: Record<T, RunFigures[]> }> {
  const names = Object.keys(targets) as T[]
  for (const name of names) await wrk(targets[name].url, { connections, seconds: WARMUP, headers: targets[name].headers })
  const runs = Object.fromEntries(names.map((name) => [name, [] as RunFigures[]])) as Record<T, RunFigures[]>
  for (let round = 1; round <= ROUNDS; round++) {
    for (const name of names) {
      const figures = await wrk(targets[name].url, { connections, seconds: DURATION, headers: targets[name].headers })
      runs[name].push(figures)
      log(`  round ${round} ${name.padEnd(14)} ${figures.requestsPerSecond.toFixed(0).padStart(7)} req/s  p50 ${figures.p50Ms.toFixed(2)} ms  p99 ${figures.p99Ms.toFixed(2)} ms`)
    }
  }
  const medians = Object.fromEntries(names.map((name) => [name, medianOf(runs[name])])) as Record<T, RunFigures>
  return { medians, runs }
}

/**
 * a) The update-check as users get it: the server started with no setting at
 * all (`npm start`: access log on, generated gate password), against a bare
 * node:http server sending the same bytes, with wrk; and the conditional
 * check (If-None-Match, 304) against a bare 304.
 */
async function updateCheckThroughput() {
  log('\n== a) update-check: the server as `npm start` starts it, no settings (access log on) ==')
  const { server, gate, log: logFile } = await startDefault()
  const headers = await seedUser(server, 'bench', gate)
  const { latestPath, body, etag, contentType, headers: answerHeaders } = await seedPack(server, headers, 'Bench Pack', gate)
  const conditional = { ...gate, 'if-none-match': etag }
  const check304 = await fetch(`${server.url}${latestPath}`, { headers: conditional })
  if (check304.status !== 304) throw new BenchFailure(`If-None-Match: expected 304, got ${check304.status}`)
  // The baselines answer with the same header fields and body, so both sides write the same bytes.
  const bare = await startBare(body, contentType, false, false, answerHeaders)
  const bare304 = await startBare(body, contentType, true, false, headerFields(check304))
  log(`packs: GET ${server.url}${latestPath} (${body.length} bytes, X-Master-Password checked); bare: node:http, same bytes (header fields: ${answerHeaders.map(([name]) => name).join(', ')})`)
  log(`wrk, 1 thread, ${CONNECTIONS} connections, ${WARMUP} s warm-up each, then ${ROUNDS} x ${DURATION} s alternating`)
  const { medians, runs } = await alternate({
    packs: { url: `${server.url}${latestPath}`, headers: gate },
    bare: { url: `${bare.url}${latestPath}` },
    'packs 304': { url: `${server.url}${latestPath}`, headers: conditional },
    'bare 304': { url: `${bare304.url}${latestPath}` },
  }, CONNECTIONS)
  if (server.child.exitCode !== null) throw new BenchFailure(`our server died during the load: ${server.stderr()}`)
  // The p99 as a default server runs: on every CPU, with wrk beside it.
  onServerCore(server.child.pid!, ALL_CPUS)
  onServerCore(process.pid, ALL_CPUS)
  const unpinned = await wrk(`${server.url}${latestPath}`, { connections: CONNECTIONS, seconds: DURATION, headers: gate })
  onServerCore(process.pid, '1')
  log(`  unpinned        ${unpinned.requestsPerSecond.toFixed(0).padStart(7)} req/s  p50 ${unpinned.p50Ms.toFixed(2)} ms  p99 ${unpinned.p99Ms.toFixed(2)} ms`)
  const accessLines = fs.readFileSync(logFile, 'utf8').split('\n').filter((line) => line.includes('"msg":"request"')).length
  const memory = readMemory(server.child.pid!)
  bare.child.kill('SIGTERM')
  bare304.child.kill('SIGTERM')
  await stop(server)
  fs.rmSync(path.dirname(logFile), { recursive: true, force: true })
  const ratio = medians.packs.requestsPerSecond / medians.bare.requestsPerSecond
  const ratio304 = medians['packs 304'].requestsPerSecond / medians['bare 304'].requestsPerSecond
  return {
    path: latestPath,
    settings: 'none (npm start defaults: LOG_LEVEL info, access log on, generated gate password)',
    connections: CONNECTIONS,
    durationSeconds: DURATION,
    rounds: ROUNDS,
    packs: medians.packs,
    unpinned,
    bare: medians.bare,
    packs304: medians['packs 304'],
    bare304: medians['bare 304'],
    runs,
    ratio,
    ratio304,
    accessLogLines: accessLines,
    target: UPDATE_CHECK_TARGET,
    target304: NOT_MODIFIED_TARGET,
    met: ratio >= UPDATE_CHECK_TARGET && unpinned.p99Ms <= P99_TARGET_MS,
    met304: ratio304 >= NOT_MODIFIED_TARGET,
    serverRssAfterMiB: memory.rss / MiB,
    serverPeakRssMiB: memory.hwm / MiB,
  }
}

/**
 * e) What REDIS_URL costs the update-check: one worker with REDIS_URL against
 * one without, both otherwise at their defaults. Target: >= 0.8.
 */
async function redisTax() {
  log('\n== e) the update-check with REDIS_URL (one worker) against the same server without it ==')
  if (redisSkip) {
    log(`skipped: ${redisSkip}`)
    return null
  }
  const redis = await startRedis()
  try {
    const targets = {} as Record<'without Redis' | 'with Redis', { url: string; headers: Record<string, string>; server: RunningServer }>
    for (const [name, env] of [['without Redis', {}], ['with Redis', { REDIS_URL: redis.url }]] as const) {
      const { server, gate } = await startDefault(env)
      const headers = await seedUser(server, 'bench', gate)
      const { latestPath } = await seedPack(server, headers, 'Bench Pack', gate)
      targets[name] = { url: `${server.url}${latestPath}`, headers: gate, server }
    }
    const { medians, runs } = await alternate(targets, CONNECTIONS)
    for (const { server } of Object.values(targets)) await stop(server)
    const ratio = medians['with Redis'].requestsPerSecond / medians['without Redis'].requestsPerSecond
    return { without: medians['without Redis'], with: medians['with Redis'], runs, ratio, target: 0.8, met: ratio >= 0.8 }
  } finally {
    await redis.stop()
  }
}

const UPLOAD_TARGET = 0.5
/** Server CPU (all its threads, user and system) per GiB of a large version upload; SHA-256 and SHA-1 alone take about 1.1-1.4. */
const UPLOAD_CPU_TARGET = 2.5

/** A process's CPU so far (all threads), in seconds: user and system, from /proc/<pid>/stat. */
function cpuSecondsOf(pid: number): { user: number; system: number } {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
  return { user: Number(fields[11]) / 100, system: Number(fields[12]) / 100 }
}
const UPLOAD_GROWTH_TARGET_MIB = 32

/**
 * b) Uploads: one multipart body with a 400 MiB `version` archive, written to
 * a file first and sent with curl, in turn to Packs (no settings), to a
 * loopback sink (bare node:http reading and discarding the same body) and to
 * the floor (bare node:http hashing it with both hashes and writing it to
 * disk: what any server that streams and hashes must spend), 3 times each;
 * Packs' and the floor's CPU per GiB, Packs' resident memory watched during
 * its first upload, and that upload's stored bytes checked against what was sent.
 */
async function uploadMemory() {
  log(`\n== b) uploads: a ${(UPLOAD_BYTES / MiB).toFixed(0)} MiB version archive with curl, Packs (no settings) against a loopback sink and the floor (bare, hashing both, writing to disk) ==`)
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'packs-bench-upload-'))
  try {
    const body = await writeMultipartFile(path.join(work, 'body.bin'), { kind: 'version' }, 'huge-pack.zip', bigZip(UPLOAD_BYTES))
    const { server, gate } = await startDefault()
    const headers = await seedUser(server, 'uploader', gate)
    const sinkServer = await startBare(Buffer.from('{}'), 'application/json', false, true)
    const floorServer = await startBare(Buffer.alloc(0), 'application/json', false, 'store', undefined, work)
    const floorPid = floorServer.child.pid!
    const floorCpu = { user: 0, system: 0 }
    const pid = server.child.pid!
    await expectStatus(await fetch(`${server.url}/api/schema/`, { headers: gate }), 200, 'warm-up request')
    await new Promise((resolve) => setTimeout(resolve, 500))
    const before = readMemory(pid)
    const peakReset = resetPeak(pid)
    const sampler = sampleRss(pid)
    const runs: { packs: number[]; sink: number[] } = { packs: [], sink: [] }
    let firstUpload: { url: string; content_type: string } | undefined
    let sampledPeak = 0
    const cpu = { user: 0, system: 0 }
    for (let round = 1; round <= ROUNDS; round++) {
      const cpuBefore = cpuSecondsOf(pid)
      const packs = await curlUpload(`${server.url}/api/uploads/`, headers, body)
      const cpuAfter = cpuSecondsOf(pid)
      cpu.user += cpuAfter.user - cpuBefore.user
      cpu.system += cpuAfter.system - cpuBefore.system
      if (packs.status !== 200) throw new BenchFailure(`upload: expected 200, got ${packs.status}: ${packs.body.slice(0, 300)}`)
      if (round === 1) {
        sampledPeak = sampler.stop()
        firstUpload = JSON.parse(packs.body) as { url: string; content_type: string }
      }
      const sink = await curlUpload(`${sinkServer.url}/`, {}, body)
      if (sink.status !== 200) throw new BenchFailure(`sink: ${sink.status}`)
      const floorBefore = cpuSecondsOf(floorPid)
      const floor = await curlUpload(`${floorServer.url}/`, {}, body)
      const floorAfter = cpuSecondsOf(floorPid)
      if (floor.status !== 200) throw new BenchFailure(`floor: ${floor.status}`)
      floorCpu.user += floorAfter.user - floorBefore.user
      floorCpu.system += floorAfter.system - floorBefore.system
      runs.packs.push(body.fileBytes / MiB / packs.seconds)
      runs.sink.push(body.fileBytes / MiB / sink.seconds)
      log(`  round ${round} packs ${runs.packs.at(-1)!.toFixed(0).padStart(6)} MiB/s   sink ${runs.sink.at(-1)!.toFixed(0).padStart(6)} MiB/s`)
    }
    const after = readMemory(pid)
    if (firstUpload!.content_type !== 'application/zip') throw new BenchFailure(`upload stored as ${firstUpload!.content_type}, expected application/zip`)
    // What was stored is what was sent: size from HEAD, bytes from a full download.
    const fileUrl = new URL(firstUpload!.url, server.url)
    const head = await fetch(fileUrl, { method: 'HEAD', headers: gate })
    if (head.status !== 200 || Number(head.headers.get('content-length')) !== body.fileBytes) {
      throw new BenchFailure(`stored file: HEAD ${head.status}, Content-Length ${head.headers.get('content-length')}, sent ${body.fileBytes} bytes`)
    }
    const download = await fetch(fileUrl, { headers: gate })
    if (download.status !== 200 || !download.body) throw new BenchFailure(`download of the stored file: ${download.status}`)
    const hash = createHash('sha256')
    for await (const chunk of download.body as unknown as AsyncIterable<Uint8Array>) hash.update(chunk)
    if (hash.digest('hex') !== body.sha256) throw new BenchFailure('the stored file differs from the bytes sent')
    sinkServer.child.kill('SIGTERM')
    floorServer.child.kill('SIGTERM')
    await stop(server)
    const peak = peakReset ? Math.max(after.hwm, sampledPeak) : sampledPeak
    const growthMiB = (peak - before.rss) / MiB
    const packsMiBps = median(runs.packs)
    const sinkMiBps = median(runs.sink)
    const ratio = packsMiBps / sinkMiBps
    return {
      bytes: body.fileBytes,
      packsMiBps,
      sinkMiBps,
      ratio,
      runs,
      coreSecondsPerGiB: (cpu.user + cpu.system) / (ROUNDS * body.fileBytes / 1024 ** 3),
      userSecondsPerGiB: cpu.user / (ROUNDS * body.fileBytes / 1024 ** 3),
      systemSecondsPerGiB: cpu.system / (ROUNDS * body.fileBytes / 1024 ** 3),
      floorCoreSecondsPerGiB: (floorCpu.user + floorCpu.system) / (ROUNDS * body.fileBytes / 1024 ** 3),
      floorUserSecondsPerGiB: floorCpu.user / (ROUNDS * body.fileBytes / 1024 ** 3),
      floorSystemSecondsPerGiB: floorCpu.system / (ROUNDS * body.fileBytes / 1024 ** 3),
      megabytesPerSecond: packsMiBps * MiB / 1e6,
      baselineRssMiB: before.rss / MiB,
      peakRssMiB: peak / MiB,
      rssAfterMiB: after.rss / MiB,
      growthMiB,
      peakFrom: peakReset ? 'VmHWM (reset before the first upload) and 50 ms VmRSS samples' : '50 ms VmRSS samples',
      target: UPLOAD_TARGET,
      growthTarget: UPLOAD_GROWTH_TARGET_MIB,
      met: ratio >= UPLOAD_TARGET && growthMiB < UPLOAD_GROWTH_TARGET_MIB,
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true })
  }
}

async function workerScaling() {
  log('\n== c) what a second worker adds (WEB_CONCURRENCY=1 vs 2, both with REDIS_URL; not pinned: the second worker needs the second core) ==')
  onServerCore(process.pid, ALL_CPUS)
  try {
    return await workerScalingUnpinned()
  } finally {
    onServerCore(process.pid, '1')
  }
}

async function workerScalingUnpinned() {
  if (redisSkip) {
    log(`skipped: ${redisSkip}`)
    return null
  }
  const redis = await startRedis()
  try {
    const targets: Record<'one' | 'two', { url: string; server: RunningServer; expectBody: string }> = {} as never
    for (const [name, workers] of [['one', '1'], ['two', '2']] as const) {
      const server = await start({ WEB_CONCURRENCY: workers, REDIS_URL: redis.url }, false)
      const headers = await seedUser(server, `bench${workers}`)
      const { latestPath, body } = await seedPack(server, headers)
      targets[name] = { url: `${server.url}${latestPath}`, server, expectBody: body.toString('utf8') }
    }
    // The two sites are separate (own data dirs, own packs), so each expects its own body.
    for (const name of ['one', 'two'] as const) await load(`${name} warm-up`, targets[name].url, WARMUP, targets[name].expectBody)
    const runs: { one: RunFigures[]; two: RunFigures[] } = { one: [], two: [] }
    for (let round = 1; round <= ROUNDS; round++) {
      for (const name of ['one', 'two'] as const) {
        const figures = await load(`${name} worker(s)`, targets[name].url, DURATION, targets[name].expectBody)
        runs[name].push(figures)
        log(`  round ${round} ${name === 'one' ? '1 worker ' : '2 workers'} ${figures.requestsPerSecond.toFixed(0).padStart(7)} req/s  p50 ${figures.p50Ms} ms  p99 ${figures.p99Ms} ms`)
      }
    }
    await stop(targets.one.server)
    await stop(targets.two.server)
    const one = medianOf(runs.one)
    const two = medianOf(runs.two)
    return { one, two, runs, speedup: two.requestsPerSecond / one.requestsPerSecond, cpus: os.cpus().length }
  } finally {
    await redis.stop()
  }
}

/** Packs in one batch: the most the API takes. */
const BATCH_PACKS = 200

/**
 * d) The batch update-check at 200 packs: what a player with 200
 * packs costs the site in one POST /api/update-check/, against a bare
 * node:http server answering the same bytes, and against the single check
 * on the same server (packs answered per second either way).
 */
async function batchCheck() {
  log(`\n== d) batch update-check: ${BATCH_PACKS} packs in one request ==`)
  const { server, gate } = await startDefault()
  const headers = await seedUser(server, 'bench', gate)
  const ids: string[] = []
  let single: Awaited<ReturnType<typeof seedPack>> | undefined
  // Four publishes at a time: seeding is not what is measured.
  for (let i = 0; i < BATCH_PACKS; i += 4) {
    const seeded = await Promise.all([0, 1, 2, 3].filter((j) => i + j < BATCH_PACKS).map((j) => seedPack(server, headers, `Bench Pack ${i + j + 1}`, gate)))
    for (const pack of seeded) ids.push(pack.id)
    single ??= seeded[0]
  }
  const requestBody = JSON.stringify({ packs: ids })
  const first = await fetch(`${server.url}/api/update-check/`, { method: 'POST', headers: { ...gate, 'content-type': 'application/json' }, body: requestBody })
  const answer = Buffer.from(await first.arrayBuffer())
  if (first.status !== 200) throw new BenchFailure(`batch: expected 200, got ${first.status}: ${answer.toString().slice(0, 500)}`)
  const parsed = JSON.parse(answer.toString()) as { packs: Record<string, unknown> }
  if (Object.values(parsed.packs).filter((v) => v !== null).length !== BATCH_PACKS) throw new BenchFailure('batch: not every pack was answered')
  const bare = await startBare(answer, first.headers.get('content-type') ?? 'application/json')
  const post = { method: 'POST' as const, body: requestBody }
  const targets = { batch: `${server.url}/api/update-check/`, bare: `${bare.url}/api/update-check/` }
  log(`packs: POST ${targets.batch} (${requestBody.length} bytes in, ${answer.length} bytes out, signed)`)
  log(`bare:  POST ${targets.bare} (same bytes out, node:http)`)
  const expectBody = answer.toString('utf8')
  const singleBody = single!.body.toString('utf8')
  await load('batch warm-up', targets.batch, WARMUP, expectBody, post, gate)
  await load('bare warm-up', targets.bare, WARMUP, expectBody, post, gate)
  await load('single warm-up', `${server.url}${single!.latestPath}`, WARMUP, singleBody, {}, gate)
  const runs: { batch: RunFigures[]; bare: RunFigures[]; single: RunFigures[] } = { batch: [], bare: [], single: [] }
  for (let round = 1; round <= ROUNDS; round++) {
    for (const name of ['batch', 'bare', 'single'] as const) {
      const figures = name === 'single'
        ? await load(name, `${server.url}${single!.latestPath}`, DURATION, singleBody, {}, gate)
        : await load(name, targets[name], DURATION, expectBody, post, gate)
      runs[name].push(figures)
      log(`  round ${round} ${name.padEnd(6)} ${figures.requestsPerSecond.toFixed(0).padStart(7)} req/s  p50 ${figures.p50Ms} ms  p99 ${figures.p99Ms} ms`)
    }
    if (server.child.exitCode !== null) throw new BenchFailure(`our server died during the load: ${server.stderr()}`)
  }
  bare.child.kill('SIGTERM')
  await stop(server)
  const batch = medianOf(runs.batch)
  const baseline = medianOf(runs.bare)
  const one = medianOf(runs.single)
  return {
    packs: BATCH_PACKS,
    requestBytes: requestBody.length,
    answerBytes: answer.length,
    connections: CONNECTIONS,
    batch,
    bare: baseline,
    single: one,
    runs,
    ratio: batch.requestsPerSecond / baseline.requestsPerSecond,
    packsPerSecond: { batch: batch.requestsPerSecond * BATCH_PACKS, single: one.requestsPerSecond },
  }
}

const DOWNLOAD_BYTES = 100 * MiB
/** Alone (no nginx in front), Packs on one core against nginx serving the same file on the same core (part g holds the 0.9 behind nginx). */
const DOWNLOAD_TARGET = 0.5

/** The largest file under `dir`: the stored archive (the store keeps files under two-character folders). */
function largestFile(dir: string): string {
  let best = { path: '', size: -1 }
  for (const entry of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue
    const full = path.join(entry.parentPath, entry.name)
    const size = fs.statSync(full).size
    if (size > best.size) best = { path: full, size }
  }
  return best.path
}

/**
 * f) Downloads: one 100 MiB version archive through the file API
 * (download=1, counted), against nginx serving the same file from the same
 * disk with sendfile on and off, 4 connections each; and a Range request for
 * its second half. Target: >= 0.5 x the faster nginx, both on one core.
 */
async function downloadThroughput() {
  log('\n== f) downloads: a 100 MiB archive, Packs (no settings) against nginx with sendfile on and off, wrk 4 connections ==')
  const { server, gate } = await startDefault()
  const headers = await seedUser(server, 'bench', gate)
  const upload = await streamUpload({ url: `${server.url}/api/uploads/`, headers, fields: { kind: 'version' }, filename: 'download-bench.zip', file: bigZip(DOWNLOAD_BYTES) })
  if (upload.status !== 200) throw new BenchFailure(`upload: expected 200, got ${upload.status}: ${upload.body.slice(0, 300)}`)
  const fileUrl = new URL((JSON.parse(upload.body) as { url: string }).url, server.url)
  const stored = largestFile(path.join(server.dataDir, 'files'))
  if (fs.statSync(stored).size !== upload.fileBytes) throw new BenchFailure(`the stored file is not the upload: ${stored}`)
  // nginx serving the same file at /file, one worker as Packs has one process; started on the server's core.
  const onServerCore = PIN ? ['taskset', '-c', '0'] : []
  const fileLocation = `location = /file { alias ${stored}; default_type application/octet-stream; }`
  const withSendfile = await startNginx({ server: fileLocation, sendfile: true, prefixCommand: onServerCore })
  const copying = await startNginx({ server: fileLocation, sendfile: false, prefixCommand: onServerCore })
  const half = Math.floor(upload.fileBytes / 2)
  const { medians, runs } = await alternate({
    packs: { url: `${fileUrl.href}?download=1`, headers: gate },
    'packs range': { url: `${fileUrl.href}?download=1`, headers: { ...gate, range: `bytes=${half}-` } },
    'nginx sendfile': { url: `${withSendfile.url}/file` },
    'nginx copying': { url: `${copying.url}/file` },
  }, 4)
  for (const nginx of [withSendfile, copying]) await nginx.stop()
  await stop(server)
  const mibps = (figures: RunFigures, bytes: number) => (figures.requestsPerSecond * bytes) / MiB
  const result = {
    bytes: upload.fileBytes,
    packs: mibps(medians.packs, upload.fileBytes),
    packsRange: mibps(medians['packs range'], upload.fileBytes - half),
    nginxSendfile: mibps(medians['nginx sendfile'], upload.fileBytes),
    nginxCopying: mibps(medians['nginx copying'], upload.fileBytes),
    runs,
  }
  const ratio = result.packs / Math.max(result.nginxSendfile, result.nginxCopying)
  return { ...result, ratio, target: DOWNLOAD_TARGET, met: ratio >= DOWNLOAD_TARGET }
}

const NGINX_DOWNLOAD_TARGET = 0.9
const CPU_PER_DOWNLOAD_TARGET_MS = 1

/**
 * g) Downloads behind nginx, in the runbook's "One machine behind nginx" shape: the server as `npm start`
 * starts it plus PACKS_ACCEL_REDIRECT, behind Debian's nginx with the runbook's internal location over the
 * store (Packs decides, nginx sends the bytes), against nginx serving the same file alone; with sendfile on
 * and off for both. Packs and nginx share CPU 0 and wrk has CPU 1, so nginx's bytes and Packs' decisions
 * compete for one core, as they would on a busy machine. Packs' CPU per download is its CPU time during
 * its own rounds (every thread, from /proc/<pid>/stat) over the downloads wrk completed in them, less what
 * the same server spends as long in nginx's rounds, where it serves nothing beside nginx on its core (its
 * timers: a 100 MiB download takes long enough that they would otherwise count for more than the answer).
 */
async function downloadBehindNginx() {
  log('\n== g) downloads behind nginx: a 100 MiB archive, Packs (npm start + PACKS_ACCEL_REDIRECT) behind nginx against nginx alone, wrk 4 connections ==')
  const { server, gate } = await startDefault({ PACKS_ACCEL_REDIRECT: '/_packs_files/' })
  const headers = await seedUser(server, 'bench', gate)
  const upload = await streamUpload({ url: `${server.url}/api/uploads/`, headers, fields: { kind: 'version' }, filename: 'download-bench.zip', file: bigZip(DOWNLOAD_BYTES) })
  if (upload.status !== 200) throw new BenchFailure(`upload: expected 200, got ${upload.status}: ${upload.body.slice(0, 300)}`)
  const filePath = new URL((JSON.parse(upload.body) as { url: string }).url, server.url).pathname
  const stored = largestFile(path.join(server.dataDir, 'files'))
  const pinning = pinServerAndLoad(server.child.pid!)
  const pinned = pinning.startsWith('server pinned')
  const onServerCore = pinned ? ['taskset', '-c', '0'] : []
  log(`${pinning}; nginx on the server's CPU too`)
  const fronts = {
    sendfile: await startNginx({ upstream: `127.0.0.1:${server.port}`, server: `${proxyLocation()}\n${accelLocation(path.join(server.dataDir, 'files'))}`, sendfile: true, prefixCommand: onServerCore }),
    copying: await startNginx({ upstream: `127.0.0.1:${server.port}`, server: `${proxyLocation()}\n${accelLocation(path.join(server.dataDir, 'files'))}`, sendfile: false, prefixCommand: onServerCore }),
  }
  const aloneLocation = `location = /file { alias ${stored}; default_type application/octet-stream; }`
  const alone = {
    sendfile: await startNginx({ server: aloneLocation, sendfile: true, prefixCommand: onServerCore }),
    copying: await startNginx({ server: aloneLocation, sendfile: false, prefixCommand: onServerCore }),
  }
  try {
    // The bytes through nginx are the upload's, and Packs itself sent none of them.
    const expected = createHash('sha256').update(fs.readFileSync(stored)).digest('hex')
    for (const front of Object.values(fronts)) {
      const res = await fetch(`${front.url}${filePath}?download=1`, { headers: gate })
      const got = createHash('sha256').update(Buffer.from(await res.arrayBuffer())).digest('hex')
      if (res.status !== 200 || got !== expected) throw new BenchFailure(`through nginx: status ${res.status}, sha256 ${got}, stored ${expected}`)
    }
    const direct = await fetch(`${server.url}${filePath}?download=1`, { headers: gate })
    if (!direct.headers.get('x-accel-redirect') || (await direct.arrayBuffer()).byteLength !== 0) throw new BenchFailure('the server answered the download itself: PACKS_ACCEL_REDIRECT is not in effect')

    const targets = {
      'packs+nginx sendfile': { url: `${fronts.sendfile.url}${filePath}?download=1`, headers: gate, packs: true },
      'packs+nginx copying': { url: `${fronts.copying.url}${filePath}?download=1`, headers: gate, packs: true },
      'nginx sendfile': { url: `${alone.sendfile.url}/file`, headers: {}, packs: false },
      'nginx copying': { url: `${alone.copying.url}/file`, headers: {}, packs: false },
    }
    type Name = keyof typeof targets
    const names = Object.keys(targets) as Name[]
    for (const name of names) await wrk(targets[name].url, { connections: 4, seconds: WARMUP, headers: targets[name].headers })
    const runs = Object.fromEntries(names.map((name) => [name, [] as RunFigures[]])) as Record<Name, RunFigures[]>
    // Packs' CPU and the time, in its own rounds and in nginx's (where it only idles, beside nginx on its core).
    const spent = { packs: { cpu: 0, seconds: 0 }, alone: { cpu: 0, seconds: 0 } }
    let packsDownloads = 0
    for (let round = 1; round <= ROUNDS; round++) {
      for (const name of names) {
        const cpuBefore = readCpuSeconds(server.child.pid!)
        const startedAt = performance.now()
        const figures = await wrk(targets[name].url, { connections: 4, seconds: DURATION, headers: targets[name].headers })
        const cpu = readCpuSeconds(server.child.pid!) - cpuBefore
        const side = targets[name].packs ? spent.packs : spent.alone
        side.cpu += cpu
        side.seconds += (performance.now() - startedAt) / 1000
        if (targets[name].packs) packsDownloads += figures.requests
        runs[name].push(figures)
        const mibps = (figures.requestsPerSecond * upload.fileBytes) / MiB
        log(`  round ${round} ${name.padEnd(21)} ${mibps.toFixed(0).padStart(6)} MiB/s  ${figures.requests} downloads, Packs CPU ${(cpu * 1000).toFixed(0)} ms`)
      }
    }
    // The same decision at a rate where nothing else counts: one byte of the same file (a range from byte 0
    // is counted as a download), so nginx sends almost nothing and Packs' timers are a rounding error.
    const oneByte = { ...gate, range: 'bytes=0-0' }
    const rateCpuBefore = readCpuSeconds(server.child.pid!)
    const atRate = await wrk(targets['packs+nginx sendfile'].url, { connections: 4, seconds: DURATION, headers: oneByte })
    const cpuPerDecisionMs = ((readCpuSeconds(server.child.pid!) - rateCpuBefore) * 1000) / atRate.requests
    log(`  one byte of it at a time, to see Packs' part alone: ${atRate.requestsPerSecond.toFixed(0)} downloads/s, Packs CPU ${(cpuPerDecisionMs * 1000).toFixed(0)} µs each`)
    // What any request costs this server at the downloads' own rate: the figure above is that rate's, and on a
    // shared machine a server woken a few times a second pays for cold caches on every request, whatever it does.
    const rate = packsDownloads / spent.packs.seconds
    const controlCpuBefore = readCpuSeconds(server.child.pid!)
    const controlStart = performance.now()
    let controls = 0
    while (performance.now() - controlStart < DURATION * 1000) {
      const res = await fetch(`${fronts.sendfile.url}/healthz`)
      await res.arrayBuffer()
      controls++
      await new Promise((resolve) => setTimeout(resolve, 1000 / rate))
    }
    const controlSeconds = (performance.now() - controlStart) / 1000
    const healthzCpuMs = (Math.max(0, readCpuSeconds(server.child.pid!) - controlCpuBefore - (spent.alone.cpu / spent.alone.seconds) * controlSeconds) * 1000) / controls
    log(`  GET /healthz through nginx at that rate (${rate.toFixed(1)} a second): Packs CPU ${(healthzCpuMs * 1000).toFixed(0)} µs each`)
    if (server.child.exitCode !== null) throw new BenchFailure(`our server died during the load: ${server.stderr()}`)
    const mibps = (name: Name) => (medianOf(runs[name]).requestsPerSecond * upload.fileBytes) / MiB
    const behind = Math.max(mibps('packs+nginx sendfile'), mibps('packs+nginx copying'))
    const nginxAlone = Math.max(mibps('nginx sendfile'), mibps('nginx copying'))
    const background = (spent.alone.cpu / spent.alone.seconds) * spent.packs.seconds
    const cpuPerDownloadMs = packsDownloads > 0 ? (Math.max(0, spent.packs.cpu - background) * 1000) / packsDownloads : Number.NaN
    const ratio = behind / nginxAlone
    return {
      bytes: upload.fileBytes,
      pinning,
      pinned,
      mibps: Object.fromEntries(names.map((name) => [name, mibps(name)])) as Record<Name, number>,
      runs,
      ratio,
      target: NGINX_DOWNLOAD_TARGET,
      packsCpuSeconds: spent.packs.cpu,
      backgroundCpuSeconds: background,
      backgroundCpuPerSecond: spent.alone.cpu / spent.alone.seconds,
      packsDownloads,
      cpuPerDownloadMs,
      cpuPerDecisionMs,
      decisionsPerSecond: atRate.requestsPerSecond,
      healthzCpuMs,
      healthzPerSecond: rate,
      cpuTargetMs: CPU_PER_DOWNLOAD_TARGET_MS,
      met: ratio >= NGINX_DOWNLOAD_TARGET && cpuPerDownloadMs < CPU_PER_DOWNLOAD_TARGET_MS,
    }
  } finally {
    for (const nginx of [...Object.values(fronts), ...Object.values(alone)]) await nginx.stop()
    releasePinning()
    await stop(server)
  }
}

function verdict(met: boolean): string {
  return met ? 'ok' : 'TARGET MISSED'
}

async function main(): Promise<void> {
  const started = Date.now()
  const environment = {
    node: process.version,
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model ?? 'unknown',
    platform: `${os.type()} ${os.release()}`,
    memoryMiB: Math.round(os.totalmem() / MiB),
  }
  if (!wrkInstalled()) throw new BenchFailure('wrk is not installed: apt-get install wrk (the load generator of the request-rate figures)')
  // This process, and so every wrk and curl it starts, on CPU 1; each server is moved to CPU 0 as it starts.
  onServerCore(process.pid, '1')
  log(PIN ? 'pinned: the servers measured on CPU 0, the load generators on CPU 1 (taskset); part c on both' : 'not pinned (fewer than two cores, or no taskset)')
  log(`Packs benchmark: node ${environment.node}, ${environment.cpus} x ${environment.cpuModel}, ${environment.platform}`)
  const loadBefore = os.loadavg()[0]!
  // Server, baseline and load generator need a CPU each; other work on the machine skews the ratio.
  if (loadBefore > environment.cpus / 2) {
    log(`WARNING: the machine is busy (1-min load average ${loadBefore.toFixed(1)} on ${environment.cpus} CPUs): figures will be unreliable`)
  }

  // BENCH_ONLY=batch (or a comma list of update-check, upload, workers, batch) runs only those parts.
  const only = new Set((process.env.BENCH_ONLY ?? '').split(',').map((part) => part.trim()).filter(Boolean))
  const want = (part: string) => only.size === 0 || only.has(part)
  const throughput = want('update-check') ? await updateCheckThroughput() : undefined
  const upload = want('upload') ? await uploadMemory() : undefined
  const workers = want('workers') ? await workerScaling() : undefined
  const batch = want('batch') ? await batchCheck() : undefined
  const redisCost = want('redis') ? await redisTax() : undefined
  const download = want('download') ? await downloadThroughput() : undefined
  const downloadNginx = want('download-nginx') ? await downloadBehindNginx() : undefined

  const f = (n: number, digits = 0) => n.toFixed(digits).padStart(9)
  log('\n== summary ==')
  if (throughput) {
    log(`update-check GET ${throughput.path}, no settings, wrk ${throughput.connections} connections, median of ${throughput.rounds} x ${throughput.durationSeconds} s`)
    log(`                      req/s    p50 ms    p99 ms`)
    log(`  packs           ${f(throughput.packs.requestsPerSecond)} ${f(throughput.packs.p50Ms, 2)} ${f(throughput.packs.p99Ms, 2)}`)
    log(`  bare node:http  ${f(throughput.bare.requestsPerSecond)} ${f(throughput.bare.p50Ms, 2)} ${f(throughput.bare.p99Ms, 2)}`)
    log(`  packs unpinned  ${f(throughput.unpinned.requestsPerSecond)} ${f(throughput.unpinned.p50Ms, 2)} ${f(throughput.unpinned.p99Ms, 2)}`)
    log(`  ratio ${throughput.ratio.toFixed(2)} pinned (target >= ${UPDATE_CHECK_TARGET}), p99 unpinned ${throughput.unpinned.p99Ms.toFixed(2)} ms (target <= ${P99_TARGET_MS} ms): ${verdict(throughput.met)}`)
    log(`  packs 304       ${f(throughput.packs304.requestsPerSecond)} ${f(throughput.packs304.p50Ms, 2)} ${f(throughput.packs304.p99Ms, 2)}`)
    log(`  bare 304        ${f(throughput.bare304.requestsPerSecond)} ${f(throughput.bare304.p50Ms, 2)} ${f(throughput.bare304.p99Ms, 2)}`)
    log(`  ratio ${throughput.ratio304.toFixed(2)} (target >= ${NOT_MODIFIED_TARGET}): ${verdict(throughput.met304)}`)
    log(`  ${throughput.accessLogLines} access-log lines written`)
  }
  if (upload) {
    log(`upload of a ${(upload.bytes / MiB).toFixed(0)} MiB version archive with curl, median of ${ROUNDS}:`)
    log(`  packs ${upload.packsMiBps.toFixed(0)} MiB/s, loopback sink ${upload.sinkMiBps.toFixed(0)} MiB/s: ratio ${upload.ratio.toFixed(2)} (target >= ${UPLOAD_TARGET}): ${verdict(upload.ratio >= UPLOAD_TARGET)}`)
    log(`  server RSS baseline ${upload.baselineRssMiB.toFixed(1)} MiB, peak ${upload.peakRssMiB.toFixed(1)} MiB: growth ${upload.growthMiB.toFixed(1)} MiB (target < ${UPLOAD_GROWTH_TARGET_MIB} MiB): ${verdict(upload.growthMiB < UPLOAD_GROWTH_TARGET_MIB)}`)
    log(`  server CPU ${upload.coreSecondsPerGiB.toFixed(2)} core-seconds per GiB uploaded (user ${upload.userSecondsPerGiB.toFixed(2)}, system ${upload.systemSecondsPerGiB.toFixed(2)}; target <= ${UPLOAD_CPU_TARGET}): ${verdict(upload.coreSecondsPerGiB <= UPLOAD_CPU_TARGET)}`)
    log(`  the floor, bare node:http hashing both and writing the same body to disk: ${upload.floorCoreSecondsPerGiB.toFixed(2)} core-seconds per GiB (user ${upload.floorUserSecondsPerGiB.toFixed(2)}, system ${upload.floorSystemSecondsPerGiB.toFixed(2)}); Packs ${(upload.coreSecondsPerGiB / upload.floorCoreSecondsPerGiB).toFixed(2)} x the floor`)
  }

  if (workers) {
    log(`update-check with WEB_CONCURRENCY=1 vs 2 (Redis on, ${workers.cpus} CPUs shared with the load generator):`)
    log(`  1 worker        ${f(workers.one.requestsPerSecond)} ${f(workers.one.p50Ms)} ${f(workers.one.p99Ms)}`)
    log(`  2 workers       ${f(workers.two.requestsPerSecond)} ${f(workers.two.p50Ms)} ${f(workers.two.p99Ms)}`)
    log(`  a second worker gives x${workers.speedup.toFixed(2)}`)
  }

  if (batch) {
    log(`batch update-check, ${batch.packs} packs a request (${batch.answerBytes} bytes), median of ${ROUNDS} x ${DURATION} s:`)
    log(`  packs batch     ${f(batch.batch.requestsPerSecond)} ${f(batch.batch.p50Ms)} ${f(batch.batch.p99Ms)}   = ${batch.packsPerSecond.batch.toFixed(0)} packs/s`)
    log(`  bare node:http  ${f(batch.bare.requestsPerSecond)} ${f(batch.bare.p50Ms)} ${f(batch.bare.p99Ms)}   ratio ${batch.ratio.toFixed(2)}`)
    log(`  single checks   ${f(batch.single.requestsPerSecond)} ${f(batch.single.p50Ms)} ${f(batch.single.p99Ms)}   = ${batch.packsPerSecond.single.toFixed(0)} packs/s`)
  }

  if (redisCost) {
    log(`update-check with REDIS_URL, one worker, against the same server without it:`)
    log(`  without Redis   ${f(redisCost.without.requestsPerSecond)} ${f(redisCost.without.p50Ms, 2)} ${f(redisCost.without.p99Ms, 2)}`)
    log(`  with Redis      ${f(redisCost.with.requestsPerSecond)} ${f(redisCost.with.p50Ms, 2)} ${f(redisCost.with.p99Ms, 2)}`)
    log(`  ratio ${redisCost.ratio.toFixed(2)} (target >= 0.8): ${verdict(redisCost.met)}`)
  }

  if (download) {
    log(`download of a ${(download.bytes / MiB).toFixed(0)} MiB archive, 4 connections, MiB/s:`)
    log(`  packs           ${f(download.packs)}   (a Range for the second half: ${download.packsRange.toFixed(0)} MiB/s)`)
    log(`  nginx sendfile  ${f(download.nginxSendfile)}`)
    log(`  nginx copying   ${f(download.nginxCopying)}`)
    log(`  ratio to the faster nginx ${download.ratio.toFixed(2)} (target >= ${DOWNLOAD_TARGET}): ${verdict(download.met)}`)
  }

  if (downloadNginx) {
    log(`download of a ${(downloadNginx.bytes / MiB).toFixed(0)} MiB archive behind nginx (PACKS_ACCEL_REDIRECT), 4 connections, MiB/s (${downloadNginx.pinning}):`)
    for (const [name, value] of Object.entries(downloadNginx.mibps)) log(`  ${name.padEnd(21)} ${f(value)}`)
    log(`  ratio of the faster Packs behind nginx to the faster nginx alone ${downloadNginx.ratio.toFixed(2)} (target >= ${NGINX_DOWNLOAD_TARGET})`)
    log(`  Packs' CPU per download ${(downloadNginx.cpuPerDownloadMs * 1000).toFixed(0)} µs: ${(downloadNginx.packsCpuSeconds * 1000).toFixed(0)} ms in its rounds, less `
      + `${(downloadNginx.backgroundCpuSeconds * 1000).toFixed(0)} ms it spends as long serving nothing beside nginx (${(downloadNginx.backgroundCpuPerSecond * 1000).toFixed(1)} ms a second), `
      + `for ${downloadNginx.packsDownloads} downloads (target < ${CPU_PER_DOWNLOAD_TARGET_MS} ms): ${verdict(downloadNginx.met)}`)
    log(`  (the same decision ${downloadNginx.decisionsPerSecond.toFixed(0)} times a second, one byte each: ${(downloadNginx.cpuPerDecisionMs * 1000).toFixed(0)} µs of Packs' CPU per download; `
      + `GET /healthz at the downloads' ${downloadNginx.healthzPerSecond.toFixed(1)} a second: ${(downloadNginx.healthzCpuMs * 1000).toFixed(0)} µs)`)
  }

  const loadAverage = { before: loadBefore, after: os.loadavg()[0]! }
  log(`machine 1-min load average: ${loadAverage.before.toFixed(2)} before, ${loadAverage.after.toFixed(2)} after (the benchmark itself adds about 2)`)
  const results = { generatedAt: new Date().toISOString(), totalSeconds: (Date.now() - started) / 1000, environment, loadAverage, throughput, upload, workers, batch, redis: redisCost, download, downloadNginx }
  const out = path.join(ROOT, '.tmp', 'bench-results.json')
  fs.mkdirSync(path.dirname(out), { recursive: true })
  fs.writeFileSync(out, `${JSON.stringify(results, null, 2)}\n`)
  log(`\nfigures written to ${path.relative(process.cwd(), out) || out} (${results.totalSeconds.toFixed(0)} s in all)`)
  if ((throughput && (!throughput.met || !throughput.met304)) || (upload && !upload.met) || (redisCost && !redisCost.met) || (download && !download.met) || (downloadNginx && !downloadNginx.met)) log('TARGET MISSED (see above); this is reported, not a failure')
}

main().then(
  () => process.exit(0),
  async (error: unknown) => {
    process.stderr.write(`\nBENCHMARK FAILED: ${error instanceof Error ? (error instanceof BenchFailure ? error.message : error.stack) : String(error)}\n`)
    for (const server of servers) {
      await server.stop(5000).catch(() => undefined)
      fs.rmSync(server.dataDir, { recursive: true, force: true })
    }
    process.exit(1)
  },
)
