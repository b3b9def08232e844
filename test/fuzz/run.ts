// Running cases and judging answers. The properties: never a 5xx; under /api/
// every 4xx (of a request with a body to read) is JSON with a string
// `detail`, a 401 carries WWW-Authenticate; no request is slow or hangs;
// nothing is logged at error level. A run goes through the whole budget and
// groups what it finds by class, so one known bug does not hide the others;
// then each class is shrunk from its first case to a small counterexample.
import fc from 'fast-check'
import type { LightMyRequestResponse } from 'fastify'
import { fuzzCase, render, routeLabel, type FuzzCase, type RenderedRequest } from './model.js'
import type { RouteInfo } from './routes.js'
import type { FuzzSite, LogEntry } from './site.js'

export interface Problem {
  kind: '5xx' | 'no-detail' | 'no-www-authenticate' | 'http' | 'slow' | 'hang' | 'inject-threw' | 'error-logged'
  /** Groups cases that fail the same way: the kind, the route, the status and the server's own message, numbers masked. */
  key: string
  note: string
}

export interface Outcome {
  request: RenderedRequest
  status: number | undefined
  body: string
  ms: number
  logs: LogEntry[]
  problems: Problem[]
}

/** A request still unanswered after this long is reported as hanging (the slow limit is far below it). */
const HANG_MS = Number(process.env.FUZZ_HANG_MS ?? 10_000)

/** How long one request may take: 2 s, plus time to move its body (big uploads while other test jobs keep the machine busy). */
function slowLimit(request: RenderedRequest): number {
  const base = Number(process.env.FUZZ_SLOW_MS ?? 2000)
  return base + Math.ceil((request.payload?.length ?? 0) / (1024 * 1024)) * 500
}

export function isApiUrl(url: string): boolean {
  return url === '/api' || url.startsWith('/api/') || url.startsWith('/api?')
}

/** Ids, numbers and long runs differ from case to case; the failure class should not. */
export function mask(message: string): string {
  return message
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, '<uuid>')
    .replace(/\d+/g, '#')
    .replace(/(.)\1{7,}/g, '$1…')
    .replace(/"[^"]{40,}"/g, '"…"')
    .slice(0, 140)
}

function firstError(logs: LogEntry[]): LogEntry | undefined {
  return logs.find((entry) => entry.level >= 50)
}

/** The path and query as the app will see them through app.inject (light-my-request parses the URL as WHATWG does), or undefined when it cannot be sent that way. */
function injectedUrl(url: string): string | undefined {
  try {
    const parsed = new URL(url.startsWith('//') ? `http://localhost${url}` : url, 'http://localhost')
    return parsed.pathname + parsed.search
  } catch {
    return undefined
  }
}

export async function runCase(fz: FuzzSite, routes: RouteInfo[], c: FuzzCase): Promise<Outcome> {
  const request = render(c, { routes, refs: fz.refs, blobs: fz.blobs, sessions: fz.sessions })
  const seen = injectedUrl(request.url)
  // Not a URL a client could send through inject (the raw-socket pass covers the wire); nothing to judge.
  if (seen === undefined) return { request, status: undefined, body: '', ms: 0, logs: [], problems: [] }
  fz.log.take()
  const started = performance.now()
  let response: LightMyRequestResponse | undefined
  let thrown: unknown
  let timer: NodeJS.Timeout | undefined
  try {
    response = await Promise.race([
      fz.app.inject({ method: request.method as 'GET', url: request.url, headers: request.headers, payload: request.payload, remoteAddress: request.remoteAddress }),
      new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(`no answer in ${HANG_MS} ms`)), HANG_MS) }),
    ])
  } catch (error) {
    thrown = error
  } finally {
    clearTimeout(timer)
  }
  const ms = performance.now() - started
  const logs = fz.log.take()
  const label = routeLabel(c, routes)
  const problems: Problem[] = []
  const add = (kind: Problem['kind'], status: number | string, message: string, note: string) =>
    problems.push({ kind, key: `${kind} | ${label} | ${status} | ${mask(message)}`, note })
  const error = firstError(logs)
  const errorMessage = error ? `${error.msg}: ${error.err?.message ?? ''}` : ''

  if (thrown !== undefined) {
    const message = (thrown as Error).message ?? String(thrown)
    add(message.startsWith('no answer') ? 'hang' : 'inject-threw', '-', message, message)
  } else if (response) {
    const status = response.statusCode
    const body = response.body
    if (status >= 500) add('5xx', status, errorMessage || body, body.slice(0, 300))
    const api = isApiUrl(seen)
    if (api && status >= 400 && status < 500 && request.method !== 'HEAD') {
      let detail: unknown
      try {
        detail = (JSON.parse(body) as { detail?: unknown }).detail
      } catch {
        detail = undefined
      }
      if (typeof detail !== 'string' || !String(response.headers['content-type']).startsWith('application/json')) {
        add('no-detail', status, body, `content-type ${response.headers['content-type']}, body ${body.slice(0, 200)}`)
      }
    }
    if (api && status === 401 && !response.headers['www-authenticate']) add('no-www-authenticate', status, '', 'a 401 without WWW-Authenticate')
    for (const wrong of await conformance(fz, request, response, seen)) add('http', status, wrong, wrong)
    if (ms > slowLimit(request)) add('slow', status, '', `${Math.round(ms)} ms (limit ${slowLimit(request)} ms)`)
    if (error && status < 500) add('error-logged', status, errorMessage, errorMessage)
  }

  const changedPassword = /password/.test(request.url)
  if (response && response.statusCode < 400 && !['GET', 'HEAD', 'OPTIONS'].includes(request.method)) await fz.repair(changedPassword)
  return { request, status: response?.statusCode, body: response?.body ?? '', ms, logs, problems }
}

/**
 * RFC 9110 framing of what was sent: Content-Length is the body's length; a
 * 206 sends exactly its Content-Range; a 304 or a HEAD may carry a
 * Content-Length only if it is the length the 200 to a GET would have
 * (asked again without the conditions, for JSON under /api/ whose bytes do
 * not change between two asks: not the statistics snapshot).
 */
async function conformance(fz: FuzzSite, request: RenderedRequest, response: LightMyRequestResponse, url: string): Promise<string[]> {
  const wrong: string[] = []
  const status = response.statusCode
  const length = response.headers['content-length']
  const sent = response.rawPayload.length
  if (request.method !== 'HEAD' && status !== 304 && length !== undefined && Number(length) !== sent) {
    wrong.push(`Content-Length ${length} on a ${status} whose body has ${sent} bytes`)
  }
  if (status === 206) {
    const range = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(String(response.headers['content-range']))
    if (!range) wrong.push(`a 206 with Content-Range ${JSON.stringify(response.headers['content-range'])}`)
    else if (request.method !== 'HEAD' && Number(range[2]) - Number(range[1]) + 1 !== sent) wrong.push(`a 206 for ${range[0]} with ${sent} bytes`)
  }
  const comparable = isApiUrl(url) && !url.startsWith('/api/stats')
  if (length !== undefined && comparable && (status === 304 || (request.method === 'HEAD' && status === 200))) {
    const headers = { ...request.headers }
    delete headers['if-none-match']
    delete headers['if-range']
    delete headers.range
    const full = await fz.app.inject({ method: 'GET', url: request.url, headers, remoteAddress: request.remoteAddress })
    if (full.statusCode === 200 && Number(length) !== full.rawPayload.length) {
      wrong.push(`Content-Length ${length} on a ${request.method} ${status}, but the 200 to a GET has ${full.rawPayload.length} bytes`)
    }
  }
  return wrong
}

export interface FailureClass {
  key: string
  count: number
  /** fast-check's path of the first case of this class: with the run's seed it replays that case (FUZZ_PATH). */
  path: string
  first: Outcome
  firstCase: FuzzCase
  shrunk?: { path: string; value: FuzzCase; outcome: Outcome }
}

export interface RunReport {
  seed: number
  runs: number
  seconds: number
  statuses: Map<number, number>
  classes: Map<string, FailureClass>
}

/** The whole budget, recording every failure instead of stopping at the first. */
export async function survey(fz: FuzzSite, routes: RouteInfo[], seed: number, runs: number): Promise<RunReport> {
  const started = performance.now()
  const classes = new Map<string, FailureClass>()
  const statuses = new Map<number, number>()
  let index = 0
  const result = await fc.check(fc.asyncProperty(fuzzCase(routes), async (c) => {
    const path = String(index++)
    const outcome = await runCase(fz, routes, c)
    statuses.set(outcome.status ?? 0, (statuses.get(outcome.status ?? 0) ?? 0) + 1)
    for (const problem of outcome.problems) {
      const known = classes.get(problem.key)
      if (known) known.count++
      else classes.set(problem.key, { key: problem.key, count: 1, path, first: outcome, firstCase: c })
    }
    return true
  }), { seed, numRuns: runs })
  if (result.failed) throw new Error(`the survey itself failed: ${String((result.errorInstance as Error | undefined)?.stack ?? result.errorInstance)}`)
  return { seed, runs, seconds: (performance.now() - started) / 1000, statuses, classes }
}

/** Shrinks one class from its first case, keeping to failures of the same class, within a time limit. */
export async function shrink(fz: FuzzSite, routes: RouteInfo[], seed: number, failure: FailureClass, timeLimitMs: number): Promise<void> {
  let last: Outcome | undefined
  const result = await fc.check(fc.asyncProperty(fuzzCase(routes), async (c) => {
    const outcome = await runCase(fz, routes, c)
    const same = outcome.problems.some((p) => p.key === failure.key)
    if (same) last = outcome
    return !same
  }), { seed, path: failure.path, numRuns: 1, interruptAfterTimeLimit: timeLimitMs, markInterruptAsFailure: false })
  if (result.failed && result.counterexample && result.counterexamplePath && last) {
    // Run the shrunk value once more so the outcome printed is the counterexample's own.
    const value = result.counterexample[0]
    failure.shrunk = { path: result.counterexamplePath, value, outcome: await runCase(fz, routes, value) }
  }
}

/** Replays one case (FUZZ_SEED + FUZZ_PATH) and shrinks it against any problem; returns the report line. */
export async function replay(fz: FuzzSite, routes: RouteInfo[], seed: number, path: string): Promise<string> {
  const result = await fc.check(fc.asyncProperty(fuzzCase(routes), async (c) => (await runCase(fz, routes, c)).problems.length === 0),
    { seed, path, numRuns: 1, interruptAfterTimeLimit: 60_000 })
  if (!result.failed) return `FUZZ_SEED=${seed} FUZZ_PATH=${path}: no problem`
  const value = result.counterexample![0]
  const outcome = await runCase(fz, routes, value)
  return `FUZZ_SEED=${seed} FUZZ_PATH=${result.counterexamplePath}\n${describeOutcome(outcome, value)}`
}

const cut = (s: string, n: number) => (s.length > n ? `${s.slice(0, n)}… (${s.length} chars)` : s)

export function describeRequest(request: RenderedRequest): string {
  const headers = Object.entries(request.headers).map(([k, v]) => `    ${k}: ${cut(JSON.stringify(v), 160)}`).join('\n')
  const payload = request.payload
    ? `    body (${request.payload.length} bytes): ${cut(JSON.stringify(request.payload.subarray(0, 400).toString('latin1')), 300)}`
    : '    (no body)'
  return `  ${request.method} ${cut(request.url, 300)}   from ${request.remoteAddress}\n${headers}\n${payload}`
}

export function describeOutcome(outcome: Outcome, value: FuzzCase): string {
  const error = outcome.logs.find((e) => e.level >= 50)
  const stack = error?.err?.stack?.split('\n').slice(0, 8).join('\n      ')
  return [
    describeRequest(outcome.request),
    `  -> ${outcome.status ?? 'no answer'} in ${Math.round(outcome.ms)} ms: ${cut(outcome.body, 300)}`,
    ...outcome.problems.map((p) => `  problem: ${p.kind}: ${p.note}`),
    ...(error ? [`  app log: ${error.msg}${error.err ? `: ${error.err.type ?? ''} ${error.err.code ?? ''} ${error.err.message ?? ''}` : ''}`, ...(stack ? [`      ${stack}`] : [])] : []),
    `  case: ${cut(fc.stringify(value), 600)}`,
  ].join('\n')
}

export function describeReport(report: RunReport, backend: string): string {
  const statuses = [...report.statuses.entries()].sort((a, b) => a[0] - b[0]).map(([s, n]) => `${s || 'none'}×${n}`).join(' ')
  const lines = [
    `fuzz on ${backend}: ${report.runs} cases in ${report.seconds.toFixed(1)} s, seed ${report.seed}; statuses ${statuses}`,
  ]
  if (report.classes.size === 0) return lines[0]!
  lines.push(`${report.classes.size} failure class(es); replay one with FUZZ_SEED=${report.seed} FUZZ_PATH=<path>:`)
  for (const failure of report.classes.values()) {
    const shown = failure.shrunk ?? { path: failure.path, value: failure.firstCase, outcome: failure.first }
    lines.push('', `[${failure.count}×] ${failure.key}`, `  first at path ${failure.path}${failure.shrunk ? `, shrunk to path ${failure.shrunk.path}` : ''}:`,
      describeOutcome(shown.outcome, shown.value))
  }
  return lines.join('\n')
}
