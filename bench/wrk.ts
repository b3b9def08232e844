// wrk, the load generator of the benchmark's request-rate figures: a C
// program on one thread, so it takes less of the 2-core machine from the
// servers it measures than a Node.js client would. Installed from Debian
// (`apt-get install wrk`). One run: requests per second, p50 and p99 (wrk's
// own latency percentiles, microsecond resolution) and every non-2xx/3xx
// answer or socket error, which make the run a failure.
import { spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'

export interface WrkFigures {
  requestsPerSecond: number
  p50Ms: number
  p99Ms: number
  requests: number
  /** Requests wrk gave up on after its 2 s timeout (only with `tolerateTimeouts`). */
  timeouts?: number
}

export interface WrkOptions {
  connections: number
  seconds: number
  headers?: Record<string, string>
  /** A POST with this body (through a Lua script, wrk's way). */
  body?: string
  /** Each request asks for one of these paths (on the URL's origin), chosen at random: many packs, pages or terms, not one hot one. */
  paths?: readonly string[]
  /** Report requests that took longer than wrk's 2 s timeout instead of failing (the scale benchmark's slow queries). */
  tolerateTimeouts?: boolean
}

/** The CPU wrk runs on once pinServerAndLoad has pinned the server to another; undefined: not pinned. */
let loadCpu: number | undefined

/**
 * With two cores or more, as the benchmarks' figures are taken: the server (every thread of it, and those
 * it starts later, which inherit it) on CPU 0, this process and every wrk on CPU 1, so
 * that the load generator never takes the server's core and CPU per request is the server's alone. Returns
 * what was done, for the report.
 */
export function pinServerAndLoad(serverPid: number): string {
  if (os.availableParallelism() < 2 || !onPath('taskset')) return 'not pinned (fewer than two cores, or no taskset)'
  for (const [cpu, pid] of [[0, serverPid], [1, process.pid]] as const) {
    const result = spawnSync('taskset', ['-a', '-cp', String(cpu), String(pid)], { encoding: 'utf8' })
    if (result.status !== 0) return `not pinned (taskset: ${result.stderr.trim()})`
  }
  loadCpu = 1
  return 'server pinned to CPU 0 (taskset), load generators to CPU 1'
}

/** Undoes pinServerAndLoad for what runs after: this process may use every CPU again, and wrk runs where it is put. */
export function releasePinning(): void {
  if (loadCpu === undefined) return
  loadCpu = undefined
  spawnSync('taskset', ['-a', '-cp', `0-${os.availableParallelism() - 1}`, String(process.pid)], { encoding: 'utf8' })
}

function onPath(program: string): boolean {
  return (process.env.PATH ?? '').split(':').some((dir) => fs.existsSync(path.join(dir, program)))
}

export function wrkInstalled(): boolean {
  return onPath('wrk')
}

function toMs(value: string): number {
  const match = /^([\d.]+)(us|ms|s)$/.exec(value)
  if (!match) return Number.NaN
  const n = Number(match[1])
  return match[2] === 'us' ? n / 1000 : match[2] === 's' ? n * 1000 : n
}

export async function wrk(url: string, options: WrkOptions): Promise<WrkFigures> {
  const args = ['-t1', `-c${options.connections}`, `-d${options.seconds}s`, '--latency']
  for (const [name, value] of Object.entries(options.headers ?? {})) args.push('-H', `${name}: ${value}`)
  let script: string | undefined
  if (options.body !== undefined) {
    script = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'packs-wrk-')), 'post.lua')
    fs.writeFileSync(script, `wrk.method = "POST"\nwrk.body = ${JSON.stringify(options.body)}\nwrk.headers["Content-Type"] = "application/json"\n`)
    args.push('-s', script)
  } else if (options.paths) {
    script = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'packs-wrk-')), 'paths.lua')
    // JSON strings are Lua strings for these paths (ASCII, no control characters).
    fs.writeFileSync(script, `local paths = {${options.paths.map((p) => JSON.stringify(p)).join(',\n')}}\n`
      + 'request = function() return wrk.format(nil, paths[math.random(#paths)]) end\n')
    args.push('-s', script)
  }
  args.push(url)
  const output = await new Promise<string>((resolve, reject) => {
    const child = loadCpu === undefined ? spawn('wrk', args, { stdio: ['ignore', 'pipe', 'pipe'] })
      : spawn('taskset', ['-c', String(loadCpu), 'wrk', ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => { out += chunk })
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => { out += chunk })
    child.once('error', reject)
    child.once('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`wrk exited with ${code}: ${out}`))))
  })
  if (script) fs.rmSync(path.dirname(script), { recursive: true, force: true })
  const socketErrors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(output)
  const timeouts = Number(socketErrors?.[4] ?? 0)
  const otherSocketErrors = socketErrors ? Number(socketErrors[1]) + Number(socketErrors[2]) + Number(socketErrors[3]) : 0
  const problems = [
    /Non-2xx or 3xx responses: (\d+)/.exec(output)?.[0],
    otherSocketErrors > 0 || (timeouts > 0 && !options.tolerateTimeouts) ? socketErrors?.[0] : undefined,
  ].filter(Boolean)
  if (problems.length > 0) throw new Error(`wrk against ${url}: ${problems.join('; ')}\n${output}`)
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(output)?.[1])
  const requests = Number(/(\d+) requests in/.exec(output)?.[1])
  const p50 = toMs(/^\s+50%\s+(\S+)/m.exec(output)?.[1] ?? '')
  const p99 = toMs(/^\s+99%\s+(\S+)/m.exec(output)?.[1] ?? '')
  if (![rps, requests, p50, p99].every(Number.isFinite)) throw new Error(`could not read wrk's output:\n${output}`)
  return { requestsPerSecond: rps, p50Ms: p50, p99Ms: p99, requests, ...(timeouts > 0 ? { timeouts } : {}) }
}
