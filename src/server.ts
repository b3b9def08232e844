// Entry point of `npm start`: config -> buildApp -> listen, and a graceful
// shutdown on SIGINT/SIGTERM (in-flight requests finish, then the database
// closes). With WEB_CONCURRENCY=N (N > 1) this process becomes the primary of
// N cluster workers that share the port; each worker runs the same server.
import cluster, { type Worker } from 'node:cluster'
import { ConfigError, loadConfig, type Config } from './config/index.js'
import { buildApp, prepareSite } from './app.js'

const SHUTDOWN_GRACE_MS = 10_000
/** A worker that dies after it was serving is replaced, but not faster than this (a crash loop must not spin). */
const RESTART_DELAY_MS = 1000

async function main(): Promise<void> {
  const config = loadConfig()
  if (config.webConcurrency > 1 && cluster.isPrimary) return runPrimary(config)
  await runServer(config)
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
    app.close().then(() => process.exit(0), (error) => {
      app.log.error({ err: error }, 'error while shutting down')
      process.exit(1)
    })
  }
  process.on('SIGINT', () => shutdown('SIGINT'))
  process.on('SIGTERM', () => shutdown('SIGTERM'))

  await app.listen({ host: config.host, port: config.port })
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
  // One clear line, no stack, for what the operator can fix (CONTRACT §1).
  if (error instanceof ConfigError) process.stderr.write(`packs: configuration error: ${error.message}\n`)
  else if ((error as NodeJS.ErrnoException)?.code === 'EADDRINUSE') process.stderr.write(`packs: cannot listen: ${(error as Error).message}\n`)
  else process.stderr.write(`packs: failed to start: ${error instanceof Error ? error.message : String(error)}\n`)
  process.exit(1)
})
