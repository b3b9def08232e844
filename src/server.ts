// Entry point of `npm start` (the production entry: it builds nothing, `npm ci`
// did; systemd runs `node dist/src/server.js` directly, docs/deploy.md):
// config -> buildApp -> listen, then one line naming what it runs on, and a graceful
// shutdown on SIGINT/SIGTERM (in-flight requests finish, then the database
// closes). With WEB_CONCURRENCY=N (N > 1) this process becomes the primary of
// N cluster workers that share the port; each worker runs the same server.
import cluster, { type Worker } from 'node:cluster'
import { ConfigError, loadConfig, type Config } from './config/index.js'
import { buildApp, prepareSite } from './app.js'
import { describeRuntime } from './config/describe.js'
import { describeSiteFilesTightened, makeSiteFilesPrivate } from './maintenance/private-files.js'
import { serveClusterMetrics } from './stats/prometheus.js'
import { pino } from 'pino'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const SHUTDOWN_GRACE_MS = 10_000
/** A worker that dies after it was serving is replaced, but not faster than this (a crash loop must not spin). */
const RESTART_DELAY_MS = 1000

async function main(): Promise<void> {
  const config = loadConfig()
  // Once per start, before the database and the store are opened; a primary does it for its workers.
  if (cluster.isPrimary) makeSiteFilesPrivateAtStart(config)
  if (config.webConcurrency > 1 && cluster.isPrimary) return runPrimary(config)
  await runServer(config)
}

/**
 * `npm start` runs the build that `npm ci` made and builds nothing itself (it may run from a read-only
 * checkout, and two instances from one checkout must not rebuild it under each other). A checkout whose
 * sources changed since (a `git pull` without `npm ci`, an edit) would then run old code without a word:
 * this says so. Null when the build is current or this is not a checkout with sources beside the build.
 */
function staleBuildWarning(): string | null {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..')
  const src = path.join(root, 'src')
  try {
    const built = fs.statSync(path.join(root, 'dist', 'src', '.built')).mtimeMs
    const changed = fs.readdirSync(src, { recursive: true, encoding: 'utf8' })
      .find((file) => file.endsWith('.ts') && fs.statSync(path.join(src, file)).mtimeMs > built)
    return changed === undefined ? null : `packs: src/${changed} changed after the last build, so this server runs the old code: run \`npm run build\` (or \`npm ci\`, or \`npm run dev\` to build and start)`
  } catch {
    return null
  }
}

/** The start-up line naming what this server runs on, and the warnings about its shape and its build. */
function announce(log: { info(fields: object, message: string): void; warn(message: string): void }, config: Config): void {
  const runtime = describeRuntime(config)
  log.info(runtime.fields, runtime.message)
  for (const warning of [...runtime.warnings, staleBuildWarning()]) if (warning) log.warn(warning)
}

/**
 * A site's files made before they were private (0755/0644 under the usual umask) lose the group's and
 * others' permissions, with one line saying how many did; no line when none needed it.
 */
function makeSiteFilesPrivateAtStart(config: Config): void {
  const { info, warning } = describeSiteFilesTightened(makeSiteFilesPrivate(config), config)
  if (!info && !warning) return
  // The app's logger does not exist yet; this one writes the same JSON lines to stdout.
  const log = pino({ level: config.logLevel })
  if (info) log.info(info.fields, info.message)
  if (warning) log.warn(warning)
}

function printGeneratedPassword(password: string): void {
  // Printed once, on the terminal only, never through the logger.
  process.stdout.write(
    `\nPacks: no PACKS_MASTER_PASSWORD was set, so a site password was generated.\n` +
      `  Site password: ${password}\n` +
      `It is stored only as a hash and will not be shown again; change it with \`npx packs master-password set <password>\`.\n\n`,
  )
}

async function runServer(config: Config): Promise<void> {
  const app = await buildApp(config)
  if (app.generatedMasterPassword) printGeneratedPassword(app.generatedMasterPassword)

  let closing = false
  const shutdown = (signal: string) => {
    if (closing) return
    closing = true
    app.log.info({ signal }, 'shutting down')
    const force = setTimeout(() => process.exit(1), SHUTDOWN_GRACE_MS)
    force.unref()
    // Node closes idle keep-alive connections once, as close() begins. A connection whose answer was still
    // going out then (a request that arrived just before the signal, a download whose last bytes the client
    // already has) becomes idle only later, and would hold close() for its whole keep-alive timeout (65 s),
    // past the grace: the process would exit 1 with nothing said. Idle connections are closed again until
    // close() is done; answers in flight still finish.
    const reap = setInterval(() => app.server.closeIdleConnections(), 25)
    reap.unref()
    app.close().then(() => process.exit(0), (error) => {
      app.log.error({ err: error }, 'error while shutting down')
      process.exit(1)
    })
  }
  process.on('SIGINT', () => shutdown('SIGINT'))
  process.on('SIGTERM', () => shutdown('SIGTERM'))

  await app.listen({ host: config.host, port: config.port })
  // A worker's primary has said it already, once for all workers.
  if (cluster.isPrimary) {
    announce(app.log, config)
  }
}

async function runPrimary(config: Config): Promise<void> {
  const workers = config.webConcurrency
  // Each worker keeps the update-check cache, the failed-attempt counts and the
  // statistics snapshot; only Redis makes them one for all workers. Without it
  // a publish through one worker could leave another answering the old version.
  if (!config.redisUrl) {
    throw new ConfigError(`WEB_CONCURRENCY=${workers} needs REDIS_URL: workers share the update-check cache, failed-attempt counts and statistics through Redis`)
  }
  const generated = await prepareSite(config)
  if (generated) printGeneratedPassword(generated)
  // A scrape reaches one worker; that worker asks here for every worker's figures (src/stats/prometheus.ts).
  if (config.metricsToken !== null) await serveClusterMetrics()
  // The primary has no Fastify logger; this one writes the same JSON lines to stdout.
  announce(pino({ level: config.logLevel }), config)

  let stopping = false
  const serving = new WeakSet<Worker>()
  const fork = () => {
    const worker = cluster.fork()
    worker.once('listening', () => serving.add(worker))
    worker.once('exit', (code, signal) => {
      if (stopping) return
      if (!serving.has(worker)) {
        // It never got to listen: a configuration problem every worker would hit. Its own line is on stderr.
        process.stderr.write(`packs: worker exited during start-up (code ${code}${signal ? `, signal ${signal}` : ''})\n`)
        stopAll(1)
        return
      }
      process.stderr.write(`packs: worker ${worker.process.pid} died (code ${code}${signal ? `, signal ${signal}` : ''}); starting another\n`)
      setTimeout(() => { if (!stopping) fork() }, RESTART_DELAY_MS).unref()
    })
  }

  const stopAll = (exitCode: number) => {
    if (stopping) return
    stopping = true
    const live = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined && !w.isDead())
    if (live.length === 0) process.exit(exitCode)
    let left = live.length
    for (const worker of live) {
      worker.once('exit', () => { if (--left === 0) process.exit(exitCode) })
      worker.process.kill('SIGTERM')
    }
    setTimeout(() => process.exit(1), SHUTDOWN_GRACE_MS + 2000).unref()
  }
  process.on('SIGINT', () => stopAll(0))
  process.on('SIGTERM', () => stopAll(0))

  for (let i = 0; i < workers; i++) fork()
}

main().catch((error: unknown) => {
  // One clear line, no stack, for what the operator can fix (docs/decisions.md#running-it).
  if (error instanceof ConfigError) process.stderr.write(`packs: configuration error: ${error.message}\n`)
  else if ((error as NodeJS.ErrnoException)?.code === 'EADDRINUSE') process.stderr.write(`packs: cannot listen: ${(error as Error).message}\n`)
  else process.stderr.write(`packs: failed to start: ${error instanceof Error ? error.message : String(error)}\n`)
  process.exit(1)
})
