// backends: sqlite — each case chooses its own backends by URL in the process it starts
//
// Optional backends are loaded only when configured: on SQLite and a
// local disk neither the server nor the CLI loads pg, the AWS SDK or the Redis
// client, and each of them is loaded once its URL asks for it. A module hook
// in the child process writes down every module URL it resolves; Node 20's
// process.moduleLoadList does not list ES modules. Every child ends on its own
// (none calls process.exit), so a start that failed has closed what it opened.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { pathToFileURL } from 'node:url'
import { redisSkip, startRedis, type RedisServer } from '../helpers/redis.js'
import { ROOT } from '../helpers/server.js'
import { tempDir } from '../helpers/temp.js'


/** How each optional backend's modules are recognised by URL. */
const PACKAGES = {
  // 13 on Node 22 and later, 12 (the better-sqlite3-node20 alias) on Node 20: src/db/index.ts, loadSqlite.
  'better-sqlite3': /\/node_modules\/better-sqlite3(-node20)?\//,
  'pg': /\/node_modules\/pg(-[a-z]+)?\//,
  'the AWS SDK': /\/node_modules\/@(aws-sdk|smithy)\//,
  'redis': /\/node_modules\/(redis|@redis\/[a-z-]+)\//,
  // Not a backend, but loaded on demand the same way: only when PACKS_METRICS_TOKEN turns /metrics on.
  'prom-client': /\/node_modules\/prom-client\//,
}
type Package = keyof typeof PACKAGES

// Records what is resolved in the loader thread, synchronously, so nothing is
// lost when the child exits. The children run the compiled build (dist/src/,
// what `npm start` and `npx packs` run).
const HOOKS = `
import fs from 'node:fs'
let file
export function initialize(data) { file = data.file }
export async function resolve(specifier, context, nextResolve) {
  const result = await nextResolve(specifier, context)
  fs.appendFileSync(file, result.url + '\\n')
  return result
}`
const REGISTER = `
import { register } from 'node:module'
register(new URL('./hooks.mjs', import.meta.url), { data: { file: process.env.LOADED_MODULES_FILE } })`

// Builds the app as `npm start` does (without listening) once per step, asks
// it one thing and closes it; a marker line in the module list before each
// step says which step loaded what first (a module stays loaded, so a later
// step that uses it again loads nothing).
const STEPS = `
const { buildApp } = await import(${JSON.stringify(pathToFileURL(path.join(ROOT, 'dist/src/app.js')).href)})
const { loadConfig } = await import(${JSON.stringify(pathToFileURL(path.join(ROOT, 'dist/src/config/index.js')).href)})
const fs = await import('node:fs')
for (const step of JSON.parse(process.env.STEPS)) {
  fs.appendFileSync(process.env.LOADED_MODULES_FILE, '#step ' + step.name + '\\n')
  let outcome
  try {
    const app = await buildApp(loadConfig({ ...process.env, ...step.env }), { logger: false, sweep: false })
    outcome = 'healthz ' + (await app.inject({ url: '/healthz' })).statusCode
    await app.close()
  } catch (error) {
    outcome = 'failed: ' + error.name + ': ' + error.message
  }
  console.log(JSON.stringify({ step: step.name, outcome }))
}`

let dir: string

before(() => {
  dir = tempDir('packs-optional-backends-')
  fs.writeFileSync(path.join(dir, 'hooks.mjs'), HOOKS)
  fs.writeFileSync(path.join(dir, 'register.mjs'), REGISTER)
})
after(() => fs.rmSync(dir, { recursive: true, force: true }))

interface Run {
  stdout: string
  stderr: string
  code: number | null
  /** The optional packages each step loaded first (the steps of STEPS; '' before the first step, and for a command). */
  loaded: Map<string, Set<Package>>
  /** Each step's outcome line (STEPS). */
  outcomes: Map<string, string>
}

let runs = 0

/** Runs node with the hook on `args` (a script, or -e code), with only `env` set of the backend variables. */
async function run(args: string[], env: Record<string, string>): Promise<Run> {
  const id = ++runs
  const modulesFile = path.join(dir, `modules-${id}.txt`)
  fs.writeFileSync(modulesFile, '')
  const childEnv: NodeJS.ProcessEnv = { ...process.env }
  for (const name of Object.keys(childEnv)) {
    if (/^(DATABASE_URL|STORAGE_URL|REDIS_URL|PACKS_.*|AWS_.*)$/.test(name)) delete childEnv[name]
  }
  Object.assign(childEnv, {
    PACKS_DATA_DIR: path.join(dir, `data-${id}`),
    PACKS_MASTER_PASSWORD: 'optional-backends',
    PACKS_PASSWORD_HASH_COST: '1024',
    // So an S3 store gets as far as its endpoint (which refuses the connection).
    AWS_ACCESS_KEY_ID: 'optional-backends',
    AWS_SECRET_ACCESS_KEY: 'optional-backends',
    LOADED_MODULES_FILE: modulesFile,
    ...env,
  })
  // The recording hook uses module.register(), which Node 26 deprecates (DEP0205) with a warning on stderr,
  // where the tests read the process's own lines; the warning is about this instrument, not the server.
  const child = spawn(process.execPath, ['--disable-warning=DEP0205', '--import', pathToFileURL(path.join(dir, 'register.mjs')).href, ...args], {
    cwd: ROOT, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => { stdout += chunk })
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk })
  // A child that does not end by itself still holds something open (a connection, a timer).
  const killer = setTimeout(() => child.kill('SIGKILL'), 60_000)
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.once('exit', (c, s) => resolve([c, s])))
  clearTimeout(killer)
  assert.equal(signal, null, `the child did not end by itself within 60 s; stdout:\n${stdout}\nstderr:\n${stderr}`)
  const urls = fs.readFileSync(modulesFile, 'utf8').split('\n').filter(Boolean)
  assert.ok(urls.some((url) => url.endsWith('/dist/src/config/index.js')), `the hook recorded the project's modules: ${urls.slice(0, 5).join(', ')}`)
  const loaded = new Map<string, Set<Package>>([['', new Set()]])
  let current = loaded.get('')!
  // A module is loaded by the step that first resolves it; a later import of it resolves again but loads nothing.
  const seen = new Set<string>()
  for (const url of urls) {
    if (url.startsWith('#step ')) {
      current = new Set()
      loaded.set(url.slice('#step '.length), current)
      continue
    }
    if (seen.has(url)) continue
    seen.add(url)
    for (const name of Object.keys(PACKAGES) as Package[]) if (PACKAGES[name].test(url)) current.add(name)
  }
  const outcomes = new Map<string, string>()
  for (const line of stdout.split('\n')) {
    if (!line.startsWith('{')) continue
    const { step, outcome } = JSON.parse(line) as { step: string; outcome: string }
    outcomes.set(step, outcome)
  }
  return { stdout, stderr, code, loaded, outcomes }
}

function assertLoaded(result: Run, step: string, expected: Package[]): void {
  assert.deepEqual([...result.loaded.get(step) ?? []].sort(), [...expected].sort(), `loaded during ${step || 'the run'}; stdout:\n${result.stdout}\nstderr:\n${result.stderr}`)
}

function outcome(result: Run, step: string): string {
  const line = result.outcomes.get(step)
  assert.ok(line !== undefined, `step ${step} ran; stdout:\n${result.stdout}\nstderr:\n${result.stderr}`)
  return line
}

describe('optional backends are loaded only when configured', () => {
  let server: Run
  before(async () => {
    server = await run(['--input-type=module', '-e', STEPS], {
      STEPS: JSON.stringify([
        { name: 'sqlite', env: {} },
        { name: 'metrics', env: { PACKS_METRICS_TOKEN: 'optional-backends-scrape-token-0123456789' } },
        // Nothing listens on port 1: each start below fails at its backend's first round trip, after loading its client.
        { name: 's3', env: { STORAGE_URL: 's3://bucket1?endpoint=http://127.0.0.1:1&region=us-east-1' } },
        { name: 'redis', env: { REDIS_URL: 'redis://127.0.0.1:1' } },
        { name: 'postgres', env: { DATABASE_URL: 'postgres://packs@127.0.0.1:1/packs' } },
      ]),
    })
  })

  test('importing the app loads no driver or client at all', () => {
    assertLoaded(server, '', [])
  })

  test('the server on SQLite and a local disk loads better-sqlite3 and none of pg, the AWS SDK, redis', () => {
    assert.equal(outcome(server, 'sqlite'), 'healthz 200')
    assertLoaded(server, 'sqlite', ['better-sqlite3'])
  })

  test('PACKS_METRICS_TOKEN loads prom-client, and nothing else does', () => {
    assert.equal(outcome(server, 'metrics'), 'healthz 200')
    assertLoaded(server, 'metrics', ['prom-client'])
  })

  test('an s3:// STORAGE_URL loads the AWS SDK', () => {
    assert.match(outcome(server, 's3'), /^failed: ConfigError: STORAGE_URL: cannot reach http:\/\/127\.0\.0\.1:1/)
    assertLoaded(server, 's3', ['the AWS SDK'])
  })

  test('a REDIS_URL loads the Redis client', () => {
    assert.match(outcome(server, 'redis'), /^failed: ConfigError: REDIS_URL: cannot connect to redis:\/\/127\.0\.0\.1:1/)
    assertLoaded(server, 'redis', ['redis'])
  })

  test('a postgres:// DATABASE_URL loads pg', () => {
    assert.match(outcome(server, 'postgres'), /^failed: ConfigError: DATABASE_URL: cannot connect to the PostgreSQL database/)
    assertLoaded(server, 'postgres', ['pg'])
  })

  test('the CLI on SQLite and a local disk loads none of them, even for a command that opens the store', async () => {
    const result = await run(['bin/packs.js', 'doctor'], {})
    assert.equal(result.code, 0, result.stderr)
    assert.match(result.stdout, /^packs doctor: /m)
    assertLoaded(result, '', ['better-sqlite3'])
  })

  test('the CLI on PostgreSQL loads pg and not better-sqlite3', async () => {
    const result = await run(['bin/packs.js', 'doctor'], { DATABASE_URL: 'postgres://packs@127.0.0.1:1/packs' })
    assert.equal(result.code, 1, result.stderr)
    assert.match(result.stderr, /^packs: configuration error: DATABASE_URL: cannot connect to the PostgreSQL database/)
    assertLoaded(result, '', ['pg'])
  })
})

describe('a start that fails after Redis connected', { skip: redisSkip }, () => {
  let redis: RedisServer
  before(async () => { redis = await startRedis() })
  after(async () => { await redis?.stop() })

  test('closes the Redis connection: the process ends by itself', async () => {
    // A regular file where the store's directory should be: the storage plugin fails after shared-state connected.
    const notADirectory = path.join(dir, 'not-a-directory')
    fs.writeFileSync(notADirectory, '')
    const result = await run(['--input-type=module', '-e', STEPS], {
      STEPS: JSON.stringify([{ name: 'bad storage', env: { REDIS_URL: redis.url, STORAGE_URL: `file:${notADirectory}/files` } }]),
    })
    assert.match(outcome(result, 'bad storage'), /^failed: ConfigError: STORAGE_URL: .* is not a writable directory/)
  })
})
