// Starts the real server as a child process, exactly as `npm start` does
// (`node --import tsx src/server.ts` from the project root), on a free loopback
// port and a throwaway data directory; and runs the admin CLI (`bin/packs.js`)
// against the same environment. Used by the end-to-end tests and the benchmark.
import { spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

/** The project root, found from this file so the helper works from any clone and any cwd. */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..')

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
  /** How long to wait for GET /healthz to answer 200. */
  timeoutMs?: number
}

// Variables the server reads (CONTRACT §1): a developer's or CI's own settings
// must not leak into a test's server, which gets exactly what the test gives it.
const SERVER_VARIABLES = /^(PORT|HOST|PACKS_.*|DATABASE_URL|STORAGE_URL|REDIS_URL|WEB_CONCURRENCY|LOG_LEVEL|NODE_TEST_CONTEXT)$/

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
  return fs.mkdtempSync(path.join(os.tmpdir(), 'packs-e2e-'))
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

/** The server command of `npm start`, read from package.json so the two cannot drift apart. */
function startCommand(): string[] {
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts?: { start?: string } }
  const start = pkg.scripts?.start
  if (!start || !/^node( \S+)+$/.test(start)) throw new Error(`package.json scripts.start is not a plain node command: ${start}`)
  return start.split(' ').slice(1)
}

export async function startServer(options: StartOptions = {}): Promise<RunningServer> {
  const dataDir = options.dataDir ?? tempDataDir()
  const port = await freePort()
  const env = applyOverrides(baseEnv(), {
    PORT: String(port),
    HOST: '127.0.0.1',
    PACKS_DATA_DIR: dataDir,
    ...options.env,
  })
  const child = spawn(process.execPath, startCommand(), { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] })
  const exited = track(child)
  let out = ''
  let err = ''
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => { out += chunk })
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => { err += chunk })

  const url = `http://127.0.0.1:${port}`
  let exitInfo: ExitInfo | null = null
  void exited.then((info) => { exitInfo = info })

  const deadline = Date.now() + (options.timeoutMs ?? 20_000)
  while (true) {
    if (exitInfo) {
      const info: ExitInfo = exitInfo
      throw new Error(`server exited during start-up (code ${info.code}, signal ${info.signal}); stderr:\n${err}\nstdout:\n${out}`)
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
      throw new Error(`server did not answer GET /healthz within ${options.timeoutMs ?? 20_000} ms; stderr:\n${err}\nstdout:\n${out}`)
    }
    await sleep(100)
  }

  return {
    url,
    port,
    dataDir,
    env,
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    async stop(timeoutMs = 15_000) {
      if (exitInfo) return exitInfo
      child.kill('SIGTERM')
      const timer = sleep(timeoutMs).then(() => null)
      const result = await Promise.race([exited, timer])
      if (result) return result
      child.kill('SIGKILL')
      await exited
      throw new Error(`server did not exit within ${timeoutMs} ms of SIGTERM; stderr:\n${err}`)
    },
  }
}

export interface CliResult {
  code: number | null
  stdout: string
  stderr: string
}

/**
 * Runs `node bin/packs.js ...args` (what `npx packs` runs) from the project root.
 * Pass a running server's `env` to act on the same site; `overrides` go on top.
 */
export async function runCli(args: string[], env: NodeJS.ProcessEnv = baseEnv(), overrides: EnvOverrides = {}): Promise<CliResult> {
  const child = spawn(process.execPath, [path.join('bin', 'packs.js'), ...args], {
    cwd: ROOT,
    env: applyOverrides(env, overrides),
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const exited = track(child)
  let stdout = ''
  let stderr = ''
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => { stdout += chunk })
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk })
  const killer = setTimeout(() => child.kill('SIGKILL'), 30_000)
  const { code } = await exited
  clearTimeout(killer)
  return { code, stdout, stderr }
}

/** Runs the CLI and fails with its output unless it exits 0. */
export async function cliOk(args: string[], env: NodeJS.ProcessEnv): Promise<CliResult> {
  const result = await runCli(args, env)
  if (result.code !== 0) {
    throw new Error(`packs ${args.join(' ')} exited ${result.code}\nstdout:\n${result.stdout}\nstderr:\n${result.stderr}`)
  }
  return result
}

/** `packs token create` prints the raw token alone on the last line of stdout (CONTRACT §1). */
export function lastLine(text: string): string {
  const lines = text.split('\n').map((line) => line.trim()).filter((line) => line !== '')
  const last = lines[lines.length - 1]
  if (last === undefined) throw new Error('no output')
  return last
}

/**
 * Runs `node --import tsx src/server.ts` expecting it to fail at start-up
 * (bad configuration): resolves with its exit code and output.
 */
export async function startExpectingFailure(env: EnvOverrides, timeoutMs = 20_000): Promise<CliResult> {
  const dataDir = tempDataDir()
  try {
    const full = applyOverrides(baseEnv(), { HOST: '127.0.0.1', PORT: String(await freePort()), PACKS_DATA_DIR: dataDir, ...env })
    const child = spawn(process.execPath, startCommand(), { cwd: ROOT, env: full, stdio: ['ignore', 'pipe', 'pipe'] })
    const exited = track(child)
    let stdout = ''
    let stderr = ''
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => { stdout += chunk })
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk })
    const timer = sleep(timeoutMs).then(() => null)
    const result = await Promise.race([exited, timer])
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
