// Starts the real server as a child process, exactly as `npm start` does
// (package.json's start script: `exec node dist/src/server.js`, the build of
// scripts/build-server.js, from the project root), on a free loopback
// port and a throwaway data directory; and runs the admin CLI against the same
// environment: in this process by default (the CLI's own main(), no process
// start), or as `node bin/packs.js` (what `npx packs` runs) when a test is
// about the process itself. Used by the end-to-end, CLI and browser tests and
// the benchmark. Every server and CLI hashes passwords at a low scrypt cost.
import { spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { PROJECT_ROOT } from '../../src/config/paths.js'
import { tempDir } from './temp.js'

/** The project root, found from this file (run from test/ or from its build in dist/test/) so the helper works from any clone and any cwd. */
export const ROOT = PROJECT_ROOT

/** `undefined` removes a variable inherited from the caller's environment. */
export type EnvOverrides = Record<string, string | undefined>

export interface ExitInfo {
  code: number | null
  signal: NodeJS.Signals | null
}

export interface RunningServer {
  url: string
  port: number
  dataDir: string
  /** The environment the server runs with; runCli(args, server.env) talks to the same site. */
  env: NodeJS.ProcessEnv
  child: ChildProcess
  /** Everything the server has written to stdout / stderr so far. */
  stdout(): string
  stderr(): string
  /**
   * Resolves with the match once stdout matches `pattern` (at once if it
   * already does); rejects after `timeoutMs` or when the server exits first.
   */
  waitForStdout(pattern: RegExp, timeoutMs?: number): Promise<RegExpExecArray>
  /** Resolves when the process has exited (whether stop() or something else ended it). */
  exited: Promise<ExitInfo>
  /** SIGTERM, then waits for the exit; SIGKILL (and a rejection) if it does not exit within `timeoutMs`. */
  stop(timeoutMs?: number): Promise<ExitInfo>
}

export interface StartOptions {
  /** Extra or overriding environment variables. */
  env?: EnvOverrides
  /** Reuse a data directory (e.g. to start a second time on the same site); a new temp dir otherwise. */
  dataDir?: string
  /** How long to wait for GET /healthz to answer 200 (a bound for a machine under load, not a wait). */
  timeoutMs?: number
  /**
   * Standard output goes to this file, as a service manager would send it, instead of into this process's
   * memory: for the benchmark, whose servers write an access-log line per request. stdout() reads the file.
   */
  stdoutFile?: string
}

// Variables the server reads (docs/configuration.md's table): a developer's or CI's own settings
// must not leak into a test's server, which gets exactly what the test gives it.
const SERVER_VARIABLES = /^(PORT|HOST|PACKS_.*|DATABASE_URL|STORAGE_URL|REDIS_URL|WEB_CONCURRENCY|LOG_LEVEL|NODE_TEST_CONTEXT)$/

/**
 * scrypt's N for the passwords a test's server and CLI hash: every sign-up,
 * sign-in and `user create` at the production cost (~0.1 s of a core each)
 * would dominate the suite. A test may override it (`undefined` for the default).
 */
export const TEST_HASH_COST = '1024'
const TEST_VARIABLES: EnvOverrides = { PACKS_PASSWORD_HASH_COST: TEST_HASH_COST }

function baseEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [name, value] of Object.entries(process.env)) {
    if (!SERVER_VARIABLES.test(name)) env[name] = value
  }
  return env
}

function applyOverrides(env: NodeJS.ProcessEnv, overrides: EnvOverrides): NodeJS.ProcessEnv {
  const result = { ...env }
  for (const [name, value] of Object.entries(overrides)) {
    if (value === undefined) delete result[name]
    else result[name] = value
  }
  return result
}

/** A port nobody is listening on right now: bind port 0, read it, release it. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer()
    probe.unref()
    probe.once('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address()
      const port = typeof address === 'object' && address ? address.port : 0
      probe.close(() => (port ? resolve(port) : reject(new Error('could not find a free port'))))
    })
  })
}

export function tempDataDir(): string {
  return tempDir('packs-e2e-')
}

// Children still running when the test process exits (a failed assertion, a
// crash) are killed, so a failing run never leaves servers behind.
const live = new Set<ChildProcess>()
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL')
})

function track(child: ChildProcess): Promise<ExitInfo> {
  live.add(child)
  return new Promise((resolve) => {
    // 'close', not 'exit': the output pipes are drained by then, so stdout is complete.
    child.once('close', (code, signal) => {
      live.delete(child)
      resolve({ code, signal })
    })
  })
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * How long a process may take to start (a server to answer /healthz, a CLI to
 * finish, a bad configuration to stop it): seconds when the machine is idle,
 * but the test runner runs several test files at once, and a small CI machine is then busy.
 */
const START_TIMEOUT_MS = 60_000

/**
 * Resolves with null after `ms`, for a race with a process's exit. Its timer
 * does not keep this process alive: the child being waited on does, and a
 * timer left from a race the exit won must not hold a finished test file open
 * (it did, for 15 s after every stop()).
 */
const giveUpAfter = (ms: number) => new Promise<null>((resolve) => { setTimeout(() => resolve(null), ms).unref() })

/** The server command of `npm start`, read from package.json so the two cannot drift apart. */
function startCommand(): string[] {
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts?: { start?: string } }
  const start = pkg.scripts?.start
  // `exec` makes npm's shell become node, so a signal sent to `npm start` reaches the server itself.
  if (!start || !/^(exec )?node( \S+)+$/.test(start)) throw new Error(`package.json scripts.start is not a plain node command: ${start}`)
  return start.replace(/^exec /, '').split(' ').slice(1)
}

export async function startServer(options: StartOptions = {}): Promise<RunningServer> {
  const dataDir = options.dataDir ?? tempDataDir()
  const port = await freePort()
  const env = applyOverrides(baseEnv(), {
    PORT: String(port),
    HOST: '127.0.0.1',
    PACKS_DATA_DIR: dataDir,
    ...TEST_VARIABLES,
    ...options.env,
  })
  const outFd = options.stdoutFile === undefined ? undefined : fs.openSync(options.stdoutFile, 'a')
  const child = spawn(process.execPath, startCommand(), { cwd: ROOT, env, stdio: ['ignore', outFd ?? 'pipe', 'pipe'] })
  if (outFd !== undefined) fs.closeSync(outFd)
  const exited = track(child)
  let piped = ''
  const readOut = () => (options.stdoutFile === undefined ? piped : fs.readFileSync(options.stdoutFile, 'utf8'))
  let err = ''
  const outputWaiters = new Set<() => void>()
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    piped += chunk
    for (const check of outputWaiters) check()
  })
  // A file gives no events: its waiters look again on a timer.
  const poller = options.stdoutFile === undefined ? undefined : setInterval(() => { for (const check of outputWaiters) check() }, 50)
  poller?.unref()
  void exited.then(() => clearInterval(poller))
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => { err += chunk })
  const waitForStdout = (pattern: RegExp, timeoutMs = 10_000) => new Promise<RegExpExecArray>((resolve, reject) => {
    const finish = (error: Error | null, match?: RegExpExecArray) => {
      clearTimeout(timer)
      outputWaiters.delete(check)
      if (error) reject(error)
      else resolve(match!)
    }
    const check = () => {
      const match = pattern.exec(readOut())
      if (match) finish(null, match)
    }
    const timer = setTimeout(() => finish(new Error(`stdout did not match ${pattern} within ${timeoutMs} ms; stdout:\n${readOut()}\nstderr:\n${err}`)), timeoutMs)
    outputWaiters.add(check)
    void exited.then(() => {
      check()
      finish(new Error(`the server exited before stdout matched ${pattern}; stdout:\n${readOut()}\nstderr:\n${err}`))
    })
    check()
  })

  const url = `http://127.0.0.1:${port}`
  let exitInfo: ExitInfo | null = null
  void exited.then((info) => { exitInfo = info })

  const timeoutMs = options.timeoutMs ?? START_TIMEOUT_MS
  const deadline = Date.now() + timeoutMs
  while (true) {
    if (exitInfo) {
      const info: ExitInfo = exitInfo
      throw new Error(`server exited during start-up (code ${info.code}, signal ${info.signal}); stderr:\n${err}\nstdout:\n${readOut()}`)
    }
    try {
      const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1000) })
      await res.arrayBuffer()
      if (res.status === 200) break
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL')
      await exited
      throw new Error(`server did not answer GET /healthz within ${timeoutMs} ms; stderr:\n${err}\nstdout:\n${readOut()}`)
    }
    await sleep(100)
  }

  return {
    url,
    port,
    dataDir,
    env,
    child,
    stdout: readOut,
    stderr: () => err,
    waitForStdout,
    exited,
    async stop(timeoutMs = 15_000) {
      if (exitInfo) return exitInfo
      child.kill('SIGTERM')
      const result = await Promise.race([exited, giveUpAfter(timeoutMs)])
      if (result) return result
      child.kill('SIGKILL')
      await exited
      throw new Error(`server did not exit within ${timeoutMs} ms of SIGTERM; stderr:\n${err}`)
    },
  }
}

export interface SuiteBackends {
  /** "SQLite + disk" or "PostgreSQL + S3 + Redis": what a message names. */
  name: string
  /** DATABASE_URL, STORAGE_URL and REDIS_URL for the server; empty on the sqlite combination (the data directory's defaults). */
  env: Record<string, string>
  /** The server's DATABASE_URL as openDatabase takes it, also for the data directory's SQLite file. */
  databaseUrl(dataDir: string): string
  /** The bucket on the scaled combination, to read what it really holds. */
  bucket?: import('./s3.js').TestBucket
  /** Drops the database and hands the Redis database back. */
  release(): Promise<void>
}

/**
 * Fresh backends of this run's combination for a server started here (the
 * same choice makeSite makes in-process): on the scaled one, as
 * scripts/run-tests.js sets PACKS_TEST_*, a new PostgreSQL database, S3 bucket
 * and Redis database; on the sqlite one, nothing to set. The helpers are
 * loaded only when needed, so a benchmark never loads pg, s3rver or the SDK.
 */
export async function suiteBackends(): Promise<SuiteBackends> {
  const { createTestDatabase } = await import('./database.js')
  const database = await createTestDatabase({ migrated: true })
  const bucket = process.env.PACKS_TEST_STORAGE === 's3' ? await (await import('./s3.js')).s3Bucket() : undefined
  const redis = await (await import('./redis.js')).takeRedisDatabase()
  const env: Record<string, string> = {}
  if (database.url) env.DATABASE_URL = database.url
  if (bucket) env.STORAGE_URL = bucket.storageUrl
  if (redis) env.REDIS_URL = redis.url
  return {
    name: [database.url ? 'PostgreSQL' : 'SQLite', bucket ? 'S3' : 'disk', ...(redis ? ['Redis'] : [])].join(' + '),
    env,
    databaseUrl: (dataDir) => database.url ?? `sqlite:${path.join(dataDir, 'packs.db')}`,
    bucket,
    async release() {
      await redis?.release()
      await database.drop()
    },
  }
}

export interface CliResult {
  code: number | null
  stdout: string
  stderr: string
}

export interface CliOptions {
  /**
   * Run `node bin/packs.js` (what `npx packs` runs) in a child process, for
   * what only a process shows: its exit code as the shell sees it, its
   * streams, its start-up. Otherwise the CLI's main() runs in this process on
   * the same arguments and environment (the command's behaviour is the same,
   * without a process start and the modules loaded for every call).
   */
  process?: boolean
}

/** The CLI's environment: the caller's `env` (a running server's, or this process's without server settings) and `overrides`. */
function cliEnv(env: NodeJS.ProcessEnv, overrides: EnvOverrides): NodeJS.ProcessEnv {
  return applyOverrides({ ...TEST_VARIABLES, ...env }, overrides)
}

/**
 * Runs `packs ...args` from the project root. Pass a running server's `env`
 * to act on the same site; `overrides` go on top (`undefined` removes one).
 */
export async function runCli(args: string[], env: NodeJS.ProcessEnv = baseEnv(), overrides: EnvOverrides = {}, options: CliOptions = {}): Promise<CliResult> {
  if (options.process) return spawnCli(args, env, overrides).result
  const { main } = await import('../../src/cli.js')
  let stdout = ''
  let stderr = ''
  const code = await main(args, cliEnv(env, overrides), {
    stdout: (text) => { stdout += text },
    stderr: (text) => { stderr += text },
  })
  return { code, stdout, stderr }
}

export interface SpawnedCli {
  child: ChildProcess
  /** Resolves when the process has exited (SIGKILL after START_TIMEOUT_MS). */
  result: Promise<CliResult>
}

/** Starts `node bin/packs.js ...args` (what `npx packs` runs) as runCli does with `{ process: true }`, handing over the child (to kill it midway, say). */
export function spawnCli(args: string[], env: NodeJS.ProcessEnv = baseEnv(), overrides: EnvOverrides = {}): SpawnedCli {
  const child = spawn(process.execPath, [path.join('bin', 'packs.js'), ...args], {
    cwd: ROOT,
    env: cliEnv(env, overrides),
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const exited = track(child)
  let stdout = ''
  let stderr = ''
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => { stdout += chunk })
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk })
  const killer = setTimeout(() => child.kill('SIGKILL'), START_TIMEOUT_MS)
  const result = exited.then(({ code }) => {
    clearTimeout(killer)
    return { code, stdout, stderr }
  })
  return { child, result }
}

/** Runs the CLI and fails with its output unless it exits 0. */
export async function cliOk(args: string[], env: NodeJS.ProcessEnv, overrides: EnvOverrides = {}, options: CliOptions = {}): Promise<CliResult> {
  const result = await runCli(args, env, overrides, options)
  if (result.code !== 0) {
    throw new Error(`packs ${args.join(' ')} exited ${result.code}\nstdout:\n${result.stdout}\nstderr:\n${result.stderr}`)
  }
  return result
}

/** `packs token create` prints the raw token alone on the last line of stdout (docs/decisions.md#running-it). */
export function lastLine(text: string): string {
  const lines = text.split('\n').map((line) => line.trim()).filter((line) => line !== '')
  const last = lines[lines.length - 1]
  if (last === undefined) throw new Error('no output')
  return last
}

/**
 * Runs the server as `npm start` does, expecting it to fail at start-up
 * (bad configuration): resolves with its exit code and output.
 */
export async function startExpectingFailure(env: EnvOverrides, timeoutMs = START_TIMEOUT_MS): Promise<CliResult> {
  const dataDir = tempDataDir()
  try {
    const full = applyOverrides(baseEnv(), { HOST: '127.0.0.1', PORT: String(await freePort()), PACKS_DATA_DIR: dataDir, ...TEST_VARIABLES, ...env })
    const child = spawn(process.execPath, startCommand(), { cwd: ROOT, env: full, stdio: ['ignore', 'pipe', 'pipe'] })
    const exited = track(child)
    let stdout = ''
    let stderr = ''
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => { stdout += chunk })
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk })
    const result = await Promise.race([exited, giveUpAfter(timeoutMs)])
    if (!result) {
      child.kill('SIGKILL')
      await exited
      throw new Error(`server with ${JSON.stringify(env)} was expected to fail but kept running; stdout:\n${stdout}`)
    }
    return { code: result.code, stdout, stderr }
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
}
