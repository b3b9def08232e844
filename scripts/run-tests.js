// Runs the test files under test/ on every backend combination, as parallel
// jobs: child processes of node's test runner, each running one long file or
// several short ones of one combination, compiled to JavaScript first
// (scripts/build-server.js --tests: no TypeScript loader in any process)
// (scripts/test-batch.js, scripts/test-reporter.js):
//
//   node scripts/run-tests.js [--backends sqlite|scaled|all] [--jobs N] [part-of-path ...]
//
// Tiers are folders: test/unit (no backend: no server, no process), then
// test/backends, test/http, test/e2e (and test/*.test.ts), test/fuzz and
// test/browser, which run on EVERY combination unless the file opts out at its
// top with `// backends: sqlite — <reason>`. The scaled combination's servers
// (a throwaway PostgreSQL cluster, one redis-server) are started once here and
// shared by all its jobs; S3 is s3rver inside each job (test/helpers/s3.ts).
// `--help` prints the flags.
import { spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { buildServer } from './build-server.js'
import { buildSync } from './build-sync.js'

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..')
const TEST_DIR = path.join(ROOT, 'test')

/** The backend combinations CI has. Every file outside test/unit runs on each, unless it opts out. */
const COMBOS = {
  sqlite: 'SQLite + local disk + in-process shared state',
  scaled: 'PostgreSQL 15 + S3 (s3rver) + Redis',
}
/** Longest first when no durations are cached: where a file sits says roughly how long it runs. */
const TIERS = ['browser', 'e2e', 'fuzz', 'backends', 'http', 'unit']
const TIER_ESTIMATE = { browser: 40, e2e: 20, fuzz: 20, backends: 8, http: 6, unit: 2 }
/**
 * Files of one combination share a process (scripts/test-batch.js) up to about
 * this many seconds of tests (first fit, longest first): a process costs
 * seconds of CPU before its first test (node, tsx, the app's modules), more
 * than many a file's tests. A file longer than this runs alone.
 */
const BATCH_SECONDS = 30
/**
 * Browser files batch among themselves up to this: the files of a process share one Chromium
 * (test/helpers/browser.ts), whose start and playwright-core's loading (2 to 3 s of CPU) a lone file
 * pays alone.
 */
const BROWSER_BATCH_SECONDS = 90
/** What a job's process costs before its first test, in the estimates. */
const PROCESS_SECONDS = 3
/** What a unit test must not load: each starts a server or a process (or drives a browser). */
const UNIT_FORBIDDEN_HELPERS = ['app', 'server', 's3', 'redis', 'database', 'pg-cluster', 'browser']
const UNIT_FORBIDDEN_MODULES = ['node:child_process', 'child_process', 's3rver', 'playwright-core']
const DURATIONS_FILE = path.join(ROOT, 'node_modules', '.cache', 'packs', 'test-durations.json')

const HELP = `usage: node scripts/run-tests.js [options] [part-of-path ...]

Runs every test/**/*.test.ts whose path contains one of the given parts (all
when none) on every backend combination:
  sqlite   ${COMBOS.sqlite}
  scaled   ${COMBOS.scaled}
test/unit files run once, without a backend (and are refused if they load a
helper that starts a server or a process). A file opts out of a combination
with a comment line at its top:  // backends: sqlite — <why>
Jobs run in parallel, longest first (by the durations of the last run, kept in
node_modules/.cache/packs; else by tier: browser, e2e, fuzz, backends, http,
unit). Short files of one combination share a process, up to about ${BATCH_SECONDS} s of
tests (each file in a suite of its own: scripts/test-batch.js); longer ones
run alone.

options:
  --backends sqlite|scaled|all   combinations to run (default all; unit files run unless scaled alone)
  --jobs N                       jobs at once (default ${defaultJobs()}: 2 per core, minus one on small machines)
  --timeout SECONDS              a job running longer is killed and fails (default 600; 0: no limit)
  --isolate                      one process per file for every tier (slower; to rule out a batch neighbour)
  --scaled-only PART[,PART...]   on the scaled combination, only the files whose path contains one of
                                 these (the others run on sqlite alone): .ci/run's runs on the other
                                 Node.js lines, where the drivers and the end-to-end files are what a
                                 Node release can change on that combination
  --check                        also the rest of \`npm run check\` (the pages' bundle, then the typecheck, import
                                 layers and lint as one more job beside the tests, started first: it is
                                 the longest); its failure fails the run. \`npm run check && node
                                 scripts/run-tests.js\` runs the same, one after the other
  --wait-for-sqlite FILE         start no job until FILE exists and says "ok" (.ci/run compiles
                                 better-sqlite3 meanwhile; the scaled servers start while it does).
                                 Any test may open SQLite: the scaled ones too, for a site of its own
  --list                         print the jobs, their tier and combination, and exit
  --help                         this text

The scaled combination starts a PostgreSQL cluster (initdb, fsync off, on a
free port; as root it runs as the postgres user) and one redis-server, and
gives its jobs PACKS_TEST_DATABASE_URL, PACKS_TEST_STORAGE=s3 and
PACKS_TEST_REDIS_URL; both are removed when the run ends.`

function defaultJobs() {
  // A developer's machine is doing other work too; .ci/run asks for 5 on the 2-core CI machine, where the suite waits more than it computes (62% of both cores at 5).
  const cores = os.availableParallelism()
  return Math.max(2, cores * 2 - 1)
}

// ---------------------------------------------------------------- arguments

function parseArgs(argv) {
  const options = { backends: ['sqlite', 'scaled'], jobs: defaultJobs(), timeout: 600, list: false, isolate: false, check: false, scaledOnly: undefined, waitForSqlite: undefined, filters: [] }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    const value = () => {
      const [flag, inline] = arg.split('=', 2)
      if (inline !== undefined) return inline
      if (i + 1 >= argv.length) usage(`${flag} needs a value`)
      return argv[++i]
    }
    if (arg === '--help' || arg === '-h') {
      console.log(HELP)
      process.exit(0)
    } else if ((arg === '--backends' || arg.startsWith('--backends='))) {
      const v = value()
      if (v === 'all') options.backends = ['sqlite', 'scaled']
      else if (v in COMBOS) options.backends = [v]
      else usage(`--backends ${v}: expected sqlite, scaled or all`)
    } else if ((arg === '--jobs' || arg.startsWith('--jobs='))) {
      const n = Number(value())
      if (!Number.isInteger(n) || n < 1) usage('--jobs needs a whole number of at least 1')
      options.jobs = n
    } else if ((arg === '--timeout' || arg.startsWith('--timeout='))) {
      const n = Number(value())
      if (!Number.isFinite(n) || n < 0) usage('--timeout needs a number of seconds (0: no limit)')
      options.timeout = n
    } else if ((arg === '--wait-for-sqlite' || arg.startsWith('--wait-for-sqlite='))) {
      options.waitForSqlite = path.resolve(value())
    } else if (arg === '--list') {
      options.list = true
    } else if (arg === '--isolate') {
      options.isolate = true
    } else if ((arg === '--scaled-only' || arg.startsWith('--scaled-only='))) {
      options.scaledOnly = value().split(',').filter(Boolean)
      if (options.scaledOnly.length === 0) usage('--scaled-only needs parts of paths, separated by commas')
    } else if (arg === '--check') {
      options.check = true
    } else if (arg.startsWith('-')) {
      usage(`unknown option ${arg}`)
    } else {
      options.filters.push(arg)
    }
  }
  return options
}

function usage(message) {
  console.error(`run-tests: ${message}\n\n${HELP}`)
  process.exit(2)
}

// ---------------------------------------------------------------- discovery

function tierOf(rel) {
  const parts = rel.split('/')
  if (parts.length === 2) return 'e2e' // test/cli.test.ts and its like start the real programs
  if (TIERS.includes(parts[1])) return parts[1]
  return undefined
}

/** `// backends: sqlite — reason` in the file's leading comments: the combinations it runs on, or a problem. */
function readMarker(rel, source) {
  const lines = source.split('\n')
  let inHeader = true
  let marker
  for (const [index, line] of lines.entries()) {
    const trimmed = line.trim()
    if (inHeader && trimmed !== '' && !trimmed.startsWith('//') && !trimmed.startsWith('/*') && !trimmed.startsWith('*')) inHeader = false
    const match = /^\/\/\s*backends\s*:(.*)$/i.exec(trimmed)
    if (!match) continue
    const where = `${rel}:${index + 1}`
    if (!inHeader) return { problem: `${where}: the backends marker must be in the comments at the top of the file` }
    if (marker) return { problem: `${where}: a second backends marker` }
    const body = /^\s*([a-z0-9, ]*?)\s*(?:—|–|--|-|:)\s*(.*)$/i.exec(match[1])
    if (!body) return { problem: `${where}: expected "// backends: <combination> — <reason>"` }
    const combos = body[1].split(/[\s,]+/).filter(Boolean)
    const reason = body[2].trim()
    const unknown = combos.filter((combo) => !(combo in COMBOS))
    if (combos.length === 0) return { problem: `${where}: the marker names no combination (known: ${Object.keys(COMBOS).join(', ')})` }
    if (unknown.length > 0) return { problem: `${where}: unknown combination ${unknown.join(', ')} (known: ${Object.keys(COMBOS).join(', ')})` }
    if (reason === '') return { problem: `${where}: the marker needs a reason after the combination ("// backends: ${combos.join(', ')} — why")` }
    if (Object.keys(COMBOS).every((combo) => combos.includes(combo))) return { problem: `${where}: the marker names every combination: remove it` }
    marker = { combos, reason }
  }
  return { marker }
}

const IMPORT_PATTERN = /(?:^|[\s;])(?:import|export)\s[^'"`;]*?from\s*['"]([^'"]+)['"]|(?:^|[\s;])import\s*['"]([^'"]+)['"]|\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/gm

/** Relative imports are followed through test/ (a helper that loads a forbidden one counts too), not into src/. */
function unitProblems(file) {
  const problems = []
  const seen = new Set()
  const visit = (current, chain) => {
    if (seen.has(current)) return
    seen.add(current)
    const source = fs.readFileSync(current, 'utf8').replace(/^\s*\/\/.*$/gm, '')
    for (const match of source.matchAll(IMPORT_PATTERN)) {
      const specifier = match[1] ?? match[2] ?? match[3]
      const via = [...chain, specifier]
      if (UNIT_FORBIDDEN_MODULES.includes(specifier)) {
        problems.push(via.join(' -> '))
        continue
      }
      if (!specifier.startsWith('.')) continue
      const target = path.resolve(path.dirname(current), specifier).replace(/\.js$/, '.ts')
      if (!target.startsWith(TEST_DIR + path.sep) || !fs.existsSync(target)) continue
      const helper = path.relative(path.join(TEST_DIR, 'helpers'), target).replace(/\.ts$/, '')
      if (UNIT_FORBIDDEN_HELPERS.includes(helper)) {
        problems.push(via.join(' -> '))
        continue
      }
      visit(target, via)
    }
  }
  visit(file, [])
  return problems
}

function discover(options) {
  const files = fs.readdirSync(TEST_DIR, { recursive: true })
    .filter((file) => file.endsWith('.test.ts'))
    .map((file) => path.join('test', file).split(path.sep).join('/'))
    .filter((file) => options.filters.length === 0 || options.filters.some((part) => file.includes(part)))
    .sort()
  const entries = []
  const problems = []
  const optOuts = []
  for (const rel of files) {
    const tier = tierOf(rel)
    if (!tier) {
      problems.push(`${rel}: not in a known tier folder (test/${TIERS.join(', test/')})`)
      continue
    }
    const source = fs.readFileSync(path.join(ROOT, rel), 'utf8')
    const { marker, problem } = readMarker(rel, source)
    if (problem) {
      problems.push(problem)
      continue
    }
    if (tier === 'unit') {
      if (marker) {
        problems.push(`${rel}: a unit test runs without a backend: its backends marker means nothing (move it to test/backends or test/http)`)
        continue
      }
      const forbidden = unitProblems(path.join(ROOT, rel))
      if (forbidden.length > 0) {
        problems.push(`${rel}: a unit test must not start a server or a process, but it imports ${forbidden.join('; ')} (move it to test/backends, test/http or test/e2e)`)
        continue
      }
      if (options.backends.includes('sqlite')) entries.push({ file: rel, tier, combo: 'none' })
      continue
    }
    const combos = marker ? marker.combos : Object.keys(COMBOS)
    if (marker) optOuts.push({ file: rel, combos, reason: marker.reason })
    for (const combo of combos) {
      if (!options.backends.includes(combo)) continue
      if (combo === 'scaled' && options.scaledOnly && !options.scaledOnly.some((part) => rel.includes(part))) continue
      entries.push({ file: rel, tier, combo })
    }
  }
  return { files, entries, problems, optOuts }
}

// ---------------------------------------------------------------- services of the scaled combination

function freePort() {
  return new Promise((resolve, reject) => {
    const probe = net.createServer()
    probe.unref()
    probe.once('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address()
      probe.close(() => resolve(port))
    })
  })
}

const INSTALL_HINT = 'apt-get install -y --no-install-recommends postgresql-15 redis-server'

function findPgBinDir() {
  const candidates = [process.env.PG_BINDIR, '/usr/lib/postgresql/15/bin']
  try {
    for (const version of fs.readdirSync('/usr/lib/postgresql').sort().reverse()) candidates.push(`/usr/lib/postgresql/${version}/bin`)
  } catch {
    // No Debian-style PostgreSQL install.
  }
  return candidates.find((dir) => dir && fs.existsSync(path.join(dir, 'initdb')))
}

/** What the scaled combination lacks on this machine, as lines to print; empty when it can run. */
function scaledPrerequisites() {
  const missing = []
  const binDir = findPgBinDir()
  if (!binDir) missing.push(`no PostgreSQL server (initdb) found: ${INSTALL_HINT} (or set PG_BINDIR)`)
  if (process.getuid?.() === 0 && spawnSync('id', ['postgres'], { stdio: 'ignore' }).status !== 0) {
    missing.push(`running as root needs the postgres system user, which the server package creates: ${INSTALL_HINT}`)
  }
  if (spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).error) missing.push(`no redis-server on PATH: ${INSTALL_HINT}`)
  return { missing, binDir }
}

function run(command, args, what) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    child.stdout.on('data', (chunk) => { output += chunk })
    child.stderr.on('data', (chunk) => { output += chunk })
    child.once('error', reject)
    child.once('close', (code) => code === 0 ? resolve(output) : reject(new Error(`${what} failed (exit ${code}):\n${output}`)))
  })
}

/**
 * Runs `commands` once this process is gone, however it ended: the exit
 * handler cleans up on an error or a signal, but a SIGKILL (a timeout of the
 * caller's) would leave a daemonized PostgreSQL and an orphaned redis-server
 * running for good. Every command is harmless when the cleanup already ran.
 */
function watchdog(commands) {
  const quote = (word) => `'${word.replaceAll("'", "'\\''")}'`
  const script = `while kill -0 ${process.pid} 2>/dev/null; do sleep 1; done; ${commands.map((words) => `${words.map(quote).join(' ')} >/dev/null 2>&1`).join('; ')}`
  spawn('sh', ['-c', script], { detached: true, stdio: 'ignore' }).unref()
}

/** A throwaway cluster, as scripts/with-postgres.sh makes one: temp dir, trust auth, loopback, fsync off. */
async function startPostgres(binDir, cleanups) {
  const asRoot = process.getuid?.() === 0
  const superuser = asRoot ? 'postgres' : os.userInfo().username
  const asPg = (command, args) => asRoot
    ? ['runuser', ['-u', 'postgres', '--', path.join(binDir, command), ...args]]
    : [path.join(binDir, command), args]
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'packs-pg-'))
  cleanups.push(() => fs.rmSync(tmp, { recursive: true, force: true }))
  // World-traversable so the postgres user reaches it when root created it.
  fs.chmodSync(tmp, 0o755)
  if (asRoot) await run('chown', ['postgres:', tmp], 'chown')
  const data = path.join(tmp, 'data')
  const port = await freePort()
  await run(...asPg('initdb', ['-D', data, '-U', superuser, '--auth=trust', '--encoding=UTF8', '--locale=C.UTF-8']), 'initdb')
  // Every scaled job opens pools on databases of its own: room for many connections.
  // fsync off: the cluster is thrown away, durability buys nothing here.
  const settings = `-p ${port} -h 127.0.0.1 -k ${tmp} -c max_connections=600 -c fsync=off -c synchronous_commit=off -c full_page_writes=off`
  try {
    await run(...asPg('pg_ctl', ['-D', data, '-l', path.join(tmp, 'server.log'), '-w', '-t', '60', '-o', settings, 'start']), 'pg_ctl start')
  } catch (error) {
    const log = fs.existsSync(path.join(tmp, 'server.log')) ? fs.readFileSync(path.join(tmp, 'server.log'), 'utf8') : ''
    throw new Error(`${error.message}\n${log}`)
  }
  const [stopCommand, stopArgs] = asPg('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop'])
  cleanups.push(() => spawnSync(stopCommand, stopArgs, { stdio: 'ignore' }))
  watchdog([[stopCommand, ...stopArgs], ['rm', '-rf', tmp]])
  services.push({ name: 'PostgreSQL', pid: Number(fs.readFileSync(path.join(data, 'postmaster.pid'), 'utf8').split('\n')[0]) })
  return `postgres://${superuser}@127.0.0.1:${port}/postgres`
}

/**
 * One redis-server for every scaled job; each test site takes a logical
 * database of its own (test/helpers/redis.ts), hence the many databases.
 */
async function startRedisServer(cleanups) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'packs-redis-'))
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }))
  const port = await freePort()
  const child = spawn('redis-server', [
    '--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--databases', '10000',
    '--save', '', '--appendonly', 'no', '--daemonize', 'no', '--logfile', '',
  ], { stdio: ['ignore', 'pipe', 'pipe'] })
  cleanups.push(() => child.kill('SIGKILL'))
  watchdog([['kill', '-9', String(child.pid)], ['rm', '-rf', dir]])
  services.push({ name: 'redis-server', pid: child.pid })
  await new Promise((resolve, reject) => {
    let output = ''
    const timer = setTimeout(() => reject(new Error(`redis-server did not become ready in 10 s:\n${output}`)), 10_000)
    const onData = (chunk) => {
      output += chunk
      if (output.includes('Ready to accept connections')) {
        clearTimeout(timer)
        child.stdout.off('data', onData)
        child.stdout.resume()
        resolve()
      }
    }
    child.stdout.on('data', onData)
    child.stderr.on('data', (chunk) => { output += chunk })
    child.once('error', (error) => { clearTimeout(timer); reject(error) })
    child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`redis-server exited (${code}):\n${output}`)) })
  })
  child.removeAllListeners('exit')
  child.once('exit', (code, signal) => {
    if (!stopping) console.error(`run-tests: the shared redis-server exited (${code ?? signal}) during the run`)
  })
  return `redis://127.0.0.1:${port}`
}

/** The scaled combination's servers, whose CPU the summary reports (they are no job's children). */
const services = []

/** CPU seconds a process and the children it reaped have used, from Linux's /proc; undefined elsewhere. */
function processCpu(pid) {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
    return (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) / 100
  } catch {
    return undefined
  }
}

async function startScaled(binDir, cleanups) {
  const [databaseUrl, redisUrl] = await Promise.all([startPostgres(binDir, cleanups), startRedisServer(cleanups)])
  return { PACKS_TEST_DATABASE_URL: databaseUrl, PACKS_TEST_STORAGE: 's3', PACKS_TEST_REDIS_URL: redisUrl }
}

// ---------------------------------------------------------------- jobs

function readDurations() {
  try {
    return JSON.parse(fs.readFileSync(DURATIONS_FILE, 'utf8'))
  } catch {
    return {}
  }
}

function writeDurations(durations) {
  try {
    fs.mkdirSync(path.dirname(DURATIONS_FILE), { recursive: true })
    fs.writeFileSync(DURATIONS_FILE, JSON.stringify(durations, null, 1) + '\n')
  } catch {
    // A read-only checkout only loses the ordering hint.
  }
}

function planJobs(entries, estimate, isolate) {
  const jobs = []
  const bins = new Map()
  for (const entry of [...entries].sort((a, b) => estimate(b) - estimate(a))) {
    const browser = entry.tier === 'browser'
    const limit = browser ? BROWSER_BATCH_SECONDS : BATCH_SECONDS
    if (isolate || estimate(entry) > limit) {
      jobs.push({ combo: entry.combo, tier: entry.tier, files: [entry.file], estimate: estimate(entry) + PROCESS_SECONDS })
      continue
    }
    const key = `${entry.combo}${browser ? ' browser' : ''}`
    const open = bins.get(key) ?? []
    bins.set(key, open)
    let bin = open.find((candidate) => candidate.estimate + estimate(entry) <= limit + PROCESS_SECONDS)
    if (!bin) {
      bin = { combo: entry.combo, tier: entry.tier, files: [], estimate: PROCESS_SECONDS }
      open.push(bin)
      jobs.push(bin)
    }
    bin.files.push(entry.file)
    bin.estimate += estimate(entry)
    if (TIERS.indexOf(entry.tier) < TIERS.indexOf(bin.tier)) bin.tier = entry.tier
  }
  return jobs.sort((a, b) => b.estimate - a.estimate)
}

// Loaded into every job: at exit it writes the job's CPU time (its own, and
// that of the children it waited for, servers and browsers included; Linux's
// /proc only) so the summary can say which jobs cost the most.
const USAGE_HOOK = 'data:text/javascript,' + encodeURIComponent(`
import fs from 'node:fs'
const file = process.env.PACKS_TEST_USAGE_FILE
if (file) process.once('exit', () => {
  try {
    const usage = process.resourceUsage()
    let children = 0
    try {
      const fields = fs.readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ')
      children = (Number(fields[13]) + Number(fields[14])) / 100
    } catch {}
    fs.writeFileSync(file, JSON.stringify({ cpu: (usage.userCPUTime + usage.systemCPUTime) / 1e6 + children }))
  } catch {}
})
`)

const live = new Set()
let stopping = false
let jobNumber = 0
const TOOL_CACHES = /^(node-compile-cache|tsx-\d+)$/

/** Runs one job's files in one process; resolves with a result per file and the job's own. */
function runJob(job, env, timeoutSeconds, tmp) {
  const started = performance.now()
  const id = `job-${++jobNumber}`
  const resultsFile = path.join(tmp, `${id}.jsonl`)
  const usageFile = path.join(tmp, `${id}.usage`)
  // The job's own temp directory (TMPDIR, which os.tmpdir() and mktemp read): what its tests leave there is
  // found, named and removed, so `npm test` leaves nothing behind in the machine's temp directory.
  // Mode 1777 as /tmp has it: a test's PostgreSQL cluster runs as the postgres user and keeps its files here.
  const jobTmp = path.join(tmp, `${id}.tmp`)
  fs.mkdirSync(jobTmp)
  fs.chmodSync(jobTmp, 0o1777)
  const args = [
    '--enable-source-maps', '--import', USAGE_HOOK,
    '--test-reporter=spec', '--test-reporter-destination=stdout',
    `--test-reporter=${path.join(ROOT, 'scripts', 'test-reporter.js')}`, `--test-reporter-destination=${resultsFile}`,
    path.join(ROOT, 'scripts', 'test-batch.js'), ...job.files,
  ]
  return new Promise((resolve) => {
    // Its own process group: a timeout or Ctrl-C ends the servers and browsers it started too.
    const child = spawn(process.execPath, args, {
      cwd: ROOT,
      env: { ...env, PACKS_TEST_USAGE_FILE: usageFile, TMPDIR: jobTmp },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    })
    live.add(child)
    let output = ''
    child.stdout.setEncoding('utf8').on('data', (chunk) => { output += chunk })
    child.stderr.setEncoding('utf8').on('data', (chunk) => { output += chunk })
    let timedOut = false
    const timer = timeoutSeconds > 0 ? setTimeout(() => {
      timedOut = true
      killGroup(child, 'SIGKILL')
    }, timeoutSeconds * 1000) : undefined
    const finish = (code, signal, error) => {
      clearTimeout(timer)
      live.delete(child)
      // Whatever the files left running (a server never stopped) goes with them.
      killGroup(child, 'SIGKILL')
      const reported = new Map()
      if (fs.existsSync(resultsFile)) {
        for (const line of fs.readFileSync(resultsFile, 'utf8').split('\n')) {
          if (line.trim() === '') continue
          const counts = JSON.parse(line)
          reported.set(counts.file, counts)
        }
      }
      let cpu
      try {
        cpu = JSON.parse(fs.readFileSync(usageFile, 'utf8')).cpu
      } catch {
        cpu = undefined
      }
      const seconds = (performance.now() - started) / 1000
      const jobProblems = []
      if (error) jobProblems.push(`could not start: ${error.message}`)
      if (timedOut) jobProblems.push(`killed after ${timeoutSeconds} s (--timeout)`)
      else if (signal) jobProblems.push(`ended by ${signal}`)
      const files = job.files.map((file) => {
        const counts = reported.get(file)
        if (!counts) {
          return { file, combo: job.combo, tests: 0, pass: 0, fail: 0, cancelled: 0, skipped: 0, todo: 0, skips: [], failures: [],
            seconds: 0, ok: false, problems: ['did not finish (the process ended first)'] }
        }
        const problems = []
        if (counts.fail > 0 || counts.cancelled > 0) problems.push(`${counts.fail} failed, ${counts.cancelled} cancelled`)
        else if (counts.tests === 0) problems.push('no tests ran: a test file must hold at least one test')
        // A lone file's whole process is its own: its start and any failure after its tests count.
        const own = job.files.length === 1
        return { ...counts, combo: job.combo, seconds: own ? seconds : counts.seconds, ok: problems.length === 0, problems }
      })
      // Caches that tools keep in the temp directory by design (npm's module compile cache on Node 22 and
      // later, tsx's): removed with the rest, not a test's leftovers.
      const leftovers = fs.readdirSync(jobTmp).filter((name) => !TOOL_CACHES.test(name))
      fs.rmSync(jobTmp, { recursive: true, force: true })
      if (leftovers.length > 0 && !timedOut && !signal && files.every((file) => file.ok)) {
        // Reported only when everything passed: a failing test may well stop before its cleanup.
        jobProblems.push(`left ${leftovers.length} entries in the temp directory (${leftovers.slice(0, 5).join(', ')}${leftovers.length > 5 ? ', ...' : ''}): remove what a test creates`)
      }
      if (code !== 0 && !timedOut && !signal && files.every((file) => file.ok)) {
        // Every test passed, yet the process failed: an error after the tests (asynchronous activity they left behind).
        jobProblems.push(`exit code ${code} after all tests passed`)
      }
      const ok = jobProblems.length === 0 && files.every((file) => file.ok)
      resolve({ ...job, seconds, cpu, output, ok, problems: jobProblems, files })
    }
    child.once('error', (error) => finish(null, null, error))
    child.once('close', (code, signal) => finish(code, signal))
  })
}

function killGroup(child, signal) {
  try {
    process.kill(-child.pid, signal)
  } catch {
    // Already gone.
  }
}

// ---------------------------------------------------------------- main

const options = parseArgs(process.argv.slice(2))
const runStart = performance.now()
const { files, entries, problems, optOuts } = discover(options)

if (files.length === 0) {
  console.error(`run-tests: no test files matched ${options.filters.join(' ')}`)
  process.exit(1)
}
if (problems.length > 0) {
  console.error('run-tests: refusing to run:')
  for (const problem of problems) console.error(`  ${problem}`)
  process.exit(1)
}
if (entries.length === 0) {
  console.error(`run-tests: the matching files run on no selected combination (--backends ${options.backends.join(',')})`)
  process.exit(1)
}

const durations = readDurations()
const estimate = (entry) => durations[`${entry.file} ${entry.combo}`] ?? TIER_ESTIMATE[entry.tier]
const jobs = planJobs(entries, estimate, options.isolate)

if (options.list) {
  for (const job of jobs) console.log(`${job.combo.padEnd(6)}  ${job.tier.padEnd(8)}  ~${String(Math.round(job.estimate)).padStart(3)} s  ${job.files.join(' ')}`)
  process.exit(0)
}

// The jobs run the compiled build (dist/src, dist/test), and so do the servers they start (`npm start` runs dist/src/server.js):
// compiled now, so an edit since the last build is what runs. The pages' bundle is built by `npm run build` (`npm test` runs it);
// only when there is none yet is it built here.
{
  const built = performance.now()
  const { files: compiled, changed } = await buildServer(['src', 'test'])
  // The packs-sync client's bundle, which its end-to-end test runs as a process.
  await buildSync()
  // --check builds it as `npm run build` does; otherwise only when there is none yet.
  if (options.check || !fs.existsSync(path.join(ROOT, 'dist', 'web', 'manifest.json'))) {
    const web = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'build-web.js')], { stdio: 'inherit' })
    if (web.status !== 0) process.exit(1)
  }
  console.log(`run-tests: compiled ${compiled} files (${changed} changed) in ${((performance.now() - built) / 1000).toFixed(1)} s`)
}

const needScaled = jobs.some((job) => job.combo === 'scaled')
let binDir
if (needScaled) {
  const check = scaledPrerequisites()
  if (check.missing.length > 0) {
    console.error('run-tests: the scaled combination (PostgreSQL + S3 + Redis) was asked for but cannot run here:')
    for (const line of check.missing) console.error(`  ${line}`)
    console.error('  (--backends sqlite runs the rest; CI installs both in .ci/run)')
    process.exit(1)
  }
  binDir = check.binDir
}

const cleanups = []
function cleanUp() {
  stopping = true
  for (const child of live) killGroup(child, 'SIGKILL')
  for (const cleanup of cleanups.reverse()) {
    try {
      cleanup()
    } catch {
      // Best effort: the rest must still run.
    }
  }
  cleanups.length = 0
}
process.once('exit', cleanUp)
for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143], ['SIGHUP', 129]]) {
  process.once(signal, () => {
    console.error(`\nrun-tests: ${signal}: stopping the jobs and the servers`)
    process.exit(code)
  })
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'packs-run-'))
// Others may pass through (to each job's temp directory, see runJob) but not list it.
fs.chmodSync(tmp, 0o711)
cleanups.push(() => fs.rmSync(tmp, { recursive: true, force: true }))

// What a job inherits: the caller's environment without a backend choice of its own.
const baseEnv = { ...process.env }
for (const name of Object.keys(baseEnv)) if (name.startsWith('PACKS_TEST_')) delete baseEnv[name]

const comboEnv = {
  none: Promise.resolve({ ...baseEnv, PACKS_TEST_BACKENDS: 'none' }),
  sqlite: Promise.resolve({ ...baseEnv, PACKS_TEST_BACKENDS: 'sqlite' }),
  // Started while the first jobs already run; its jobs wait for it, the others do not.
  scaled: needScaled
    ? startScaled(binDir, cleanups).then((services) => ({ ...baseEnv, ...services, PACKS_TEST_BACKENDS: 'scaled' }))
    : undefined,
}
const ready = { none: true, sqlite: true, scaled: false }
let scaledError
comboEnv.scaled?.then(() => { ready.scaled = true }, (error) => {
  scaledError = error
  ready.scaled = true
  console.error(`run-tests: the scaled combination's servers did not start:\n${error.message}`)
})

const fileCount = new Set(entries.map((entry) => entry.file)).size
console.log(`run-tests: ${fileCount} files, ${entries.length} runs (${options.backends.join(' + ')}) in ${jobs.length} jobs, ${options.jobs} at a time`)

const queue = [...jobs]
const results = []

function report(result) {
  for (const file of result.files) {
    const counts = `${file.tests} tests${file.skipped ? `, ${file.skipped} skipped` : ''}${file.todo ? `, ${file.todo} todo` : ''}`
    console.log(`${file.ok ? '✔' : '✖'} ${file.file}  ${file.combo}  ${counts}  ${file.seconds.toFixed(1)} s${file.ok ? '' : `  (${file.problems.join('; ')})`}`)
  }
  const cpu = result.cpu === undefined ? '' : `, ${result.cpu.toFixed(1)} s CPU`
  console.log(`  (${result.files.length === 1 ? 'its process' : `one process for these ${result.files.length}`}: ${result.seconds.toFixed(1)} s${cpu})`)
  if (!result.ok) {
    const what = result.files.length === 1 ? result.files[0].file : `a job of ${result.files.length} files`
    console.log(`──── output of ${what} on ${result.combo}${result.problems.length ? `: ${result.problems.join('; ')}` : ''} ────`)
    console.log(result.output.trimEnd())
    console.log(`──── end of the output of ${what} on ${result.combo} ────`)
  }
}

/** With --wait-for-sqlite: undefined while SQLite's native module is being built, then 'ok' or why it failed. */
let sqliteState = options.waitForSqlite ? undefined : 'ok'
function checkSqlite() {
  if (sqliteState !== undefined) return
  try {
    const text = fs.readFileSync(options.waitForSqlite, 'utf8').trim()
    sqliteState = text === 'ok' ? 'ok' : `better-sqlite3 could not be built: ${text || 'no reason given'}`
    if (sqliteState !== 'ok') console.error(`run-tests: ${sqliteState}`)
  } catch {
    // Not yet.
  }
}

async function worker() {
  while (queue.length > 0) {
    checkSqlite()
    const index = sqliteState === undefined ? -1 : queue.findIndex((job) => ready[job.combo])
    if (index === -1) {
      // What is left waits for the scaled servers to start or for SQLite's native module.
      await new Promise((resolve) => setTimeout(resolve, 200))
      continue
    }
    const job = queue.splice(index, 1)[0]
    let result
    if (sqliteState !== 'ok') {
      const files = job.files.map((file) => ({ file, combo: job.combo, tests: 0, seconds: 0, ok: false, problems: [sqliteState], skips: [], failures: [] }))
      result = { ...job, seconds: 0, output: sqliteState, ok: false, problems: [sqliteState], files }
    } else if (job.combo === 'scaled' && scaledError) {
      const files = job.files.map((file) => ({ file, combo: job.combo, tests: 0, seconds: 0, ok: false, problems: ['the scaled servers did not start'], skips: [], failures: [] }))
      result = { ...job, seconds: 0, output: scaledError.message, ok: false, problems: ['the scaled servers did not start'], files }
    } else {
      result = await runJob(job, await comboEnv[job.combo], options.timeout, tmp)
    }
    results.push(result)
    report(result)
  }
}

/**
 * --check: the typecheck, import layers and lint (`npm run check` without its build, which was done above), as
 * one process that holds a job's place from the start; its output is printed when it ends.
 */
let checkResult
async function checkWorker() {
  const started = performance.now()
  // `times` prints the CPU time of the shell's children (tsc, eslint) on its last line.
  const script = 'npm run --silent typecheck && node scripts/check-imports.js && npm run --silent lint; status=$?; times; exit $status'
  const child = spawn('sh', ['-c', script], { cwd: ROOT, env: process.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true })
  live.add(child)
  let output = ''
  child.stdout.setEncoding('utf8').on('data', (chunk) => { output += chunk })
  child.stderr.setEncoding('utf8').on('data', (chunk) => { output += chunk })
  const code = await new Promise((resolve) => {
    child.once('error', (error) => { output += `could not start: ${error.message}`; resolve(null) })
    child.once('close', (status) => resolve(status))
  })
  live.delete(child)
  const times = /(\d+)m([\d.]+)s (\d+)m([\d.]+)s\s*$/.exec(output)
  const cpu = times ? Number(times[1]) * 60 + Number(times[2]) + Number(times[3]) * 60 + Number(times[4]) : undefined
  if (times) output = output.slice(0, times.index).replace(/\S+ \S+\s*$/, '')
  checkResult = { ok: code === 0, seconds: (performance.now() - started) / 1000, cpu, output }
  console.log(`${checkResult.ok ? '✔' : '✖'} typecheck, import layers and lint  ${checkResult.seconds.toFixed(1)} s`)
  if (!checkResult.ok) console.log(output.trimEnd())
}
const workers = Array.from({ length: Math.min(options.jobs, jobs.length) }, () => worker)
if (options.check) {
  // The check takes one job's place, then that place goes on with the tests.
  workers[0] = async () => {
    await checkWorker()
    await worker()
  }
}
await Promise.all(workers.map((run) => run()))

// ---------------------------------------------------------------- summary

const fileResults = results.flatMap((result) => result.files)
for (const file of fileResults) {
  if (file.ok) durations[`${file.file} ${file.combo}`] = Math.round(file.seconds * 10) / 10
}
writeDurations(durations)

const wall = (performance.now() - runStart) / 1000
console.log('\n──── summary ────')
const rows = [['combination', 'files', 'tests', 'pass', 'fail', 'skipped', 'todo', 'jobs', 'cpu s']]
for (const combo of ['none', ...Object.keys(COMBOS)]) {
  const mine = fileResults.filter((file) => file.combo === combo)
  if (mine.length === 0) continue
  const sum = (key) => mine.reduce((total, file) => total + (file[key] ?? 0), 0)
  const comboJobs = results.filter((result) => result.combo === combo)
  const cpu = comboJobs.reduce((total, result) => total + (result.cpu ?? 0), 0)
  const label = combo === 'none' ? 'unit (none)' : combo
  rows.push([label, mine.length, sum('tests'), sum('pass'), sum('fail') + sum('cancelled'), sum('skipped'), sum('todo'), comboJobs.length, Math.round(cpu)].map(String))
}
const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => row[column].length)))
for (const row of rows) console.log(row.map((cell, column) => column === 0 ? cell.padEnd(widths[column]) : cell.padStart(widths[column])).join('  '))

if (optOuts.length > 0) {
  console.log('\nopt-outs (files that do not run on every combination):')
  for (const { file, combos, reason } of optOuts) console.log(`  ${file}: ${combos.join(', ')} only — ${reason}`)
}
const withSkips = fileResults.filter((file) => file.skips?.length)
if (withSkips.length > 0) {
  console.log('\nskipped tests:')
  for (const file of withSkips) for (const skip of file.skips) console.log(`  ${file.file} [${file.combo}] ${skip}`)
}
console.log('\nslowest files:')
for (const file of [...fileResults].sort((a, b) => b.seconds - a.seconds).slice(0, 8)) {
  console.log(`  ${file.seconds.toFixed(1).padStart(6)} s  ${file.file} [${file.combo}]`)
}
console.log('most CPU per job:')
for (const result of [...results].filter((r) => r.cpu !== undefined).sort((a, b) => b.cpu - a.cpu).slice(0, 5)) {
  console.log(`  ${result.cpu.toFixed(1).padStart(6)} s  ${result.files.length === 1 ? result.files[0].file : `${result.files.length} files (${result.files[0].file}, ...)`} [${result.combo}], ${result.seconds.toFixed(1)} s wall`)
}
const jobsCpu = results.reduce((total, result) => total + (result.cpu ?? 0), 0)
const serviceCpu = services.map((service) => ({ ...service, cpu: processCpu(service.pid) })).filter((service) => service.cpu !== undefined)
const cpu = jobsCpu + serviceCpu.reduce((total, service) => total + service.cpu, 0)
const cores = os.availableParallelism()
const servicesNote = serviceCpu.length ? ` + ${serviceCpu.map((service) => `${service.name} ${service.cpu.toFixed(0)} s`).join(' + ')}` : ''
console.log(`\nwall ${wall.toFixed(1)} s, ${options.jobs} jobs at a time; CPU used: jobs ${jobsCpu.toFixed(0)} s${servicesNote} = ${Math.round((100 * cpu) / (wall * cores))}% of ${cores} cores`)
if (checkResult) console.log(`typecheck, import layers and lint: ${checkResult.ok ? 'passed' : 'FAILED'} in ${checkResult.seconds.toFixed(1)} s${checkResult.cpu === undefined ? '' : `, ${checkResult.cpu.toFixed(0)} s CPU`}`)
const failedFiles = fileResults.filter((file) => !file.ok)
const failedJobs = results.filter((result) => result.problems.length > 0)
if (failedFiles.length > 0 || failedJobs.length > 0) {
  console.log(`\nFAILED: ${failedFiles.length} of ${fileResults.length} file runs${failedJobs.length ? `, ${failedJobs.length} jobs` : ''}`)
  for (const file of failedFiles) {
    console.log(`  ✖ ${file.file} [${file.combo}]: ${file.problems.join('; ')}`)
    for (const failure of file.failures ?? []) console.log(`      ${failure}`)
  }
  for (const result of failedJobs) console.log(`  ✖ job of ${result.files.map((file) => file.file).join(', ')} [${result.combo}]: ${result.problems.join('; ')}`)
} else {
  console.log(`all ${fileResults.length} file runs passed`)
}
// The shared redis-server is a child of this process: exit rather than wait for it.
if (checkResult && !checkResult.ok) console.log('\nFAILED: typecheck, import layers or lint (its output is above)')
process.exit(failedFiles.length > 0 || failedJobs.length > 0 || (checkResult && !checkResult.ok) ? 1 : 0)
