// Entry point of `npm start`: config -> buildApp -> listen, and a graceful
// shutdown on SIGINT/SIGTERM (in-flight requests finish, then the database closes).
import { ConfigError, loadConfig } from './config.js'
import { buildApp } from './app.js'

async function main(): Promise<void> {
  const config = loadConfig()
  const app = await buildApp(config)

  if (app.generatedMasterPassword) {
    // Printed once, on the terminal only, never through the logger.
    process.stdout.write(
      `\nPacks: no PACKS_MASTER_PASSWORD was set, so a site password was generated.\n` +
        `  Site password: ${app.generatedMasterPassword}\n` +
        `It is stored only as a hash and will not be shown again; change it with \`npx packs master-password set <password>\`.\n\n`,
    )
  }

  let closing = false
  const shutdown = (signal: string) => {
    if (closing) return
    closing = true
    app.log.info({ signal }, 'shutting down')
    const force = setTimeout(() => process.exit(1), 10_000)
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

main().catch((error: unknown) => {
  // One clear line, no stack, for what the operator can fix (CONTRACT §1).
  if (error instanceof ConfigError) process.stderr.write(`packs: configuration error: ${error.message}\n`)
  else if ((error as NodeJS.ErrnoException)?.code === 'EADDRINUSE') process.stderr.write(`packs: cannot listen: ${(error as Error).message}\n`)
  else process.stderr.write(`packs: failed to start: ${error instanceof Error ? error.message : String(error)}\n`)
  process.exit(1)
})
