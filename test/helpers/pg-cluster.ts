// A PostgreSQL cluster of one test's own, which it may stop and start again
// (an outage of the database). Same approach as
// scripts/with-postgres.sh: initdb in a temp directory, pg_ctl on a free
// loopback port with trust auth and the sockets inside that directory, so
// nothing touches the host's own PostgreSQL; as root (CI) the server runs as
// the `postgres` system user, since PostgreSQL refuses to run as root.
// Missing binaries: skipped locally with the reason printed, failed in CI.
import { execFile, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { freePort } from './server.js'
import { tempDir } from './temp.js'

const run = promisify(execFile)

function findBinDir(): string | undefined {
  const candidates = [process.env.PG_BINDIR, '/usr/lib/postgresql/15/bin']
  try {
    for (const version of fs.readdirSync('/usr/lib/postgresql').sort().reverse()) candidates.push(`/usr/lib/postgresql/${version}/bin`)
  } catch {
    // No Debian-style PostgreSQL install.
  }
  return candidates.find((dir) => dir !== undefined && dir !== '' && fs.existsSync(path.join(dir, 'initdb')))
}

const binDir = findBinDir()
const asRoot = process.getuid?.() === 0
const postgresUser = asRoot && spawnSync('id', ['postgres'], { stdio: 'ignore' }).status === 0

/** For node:test's `skip` option: false when the cluster can be started, else why not (never skipped in CI). */
export const pgClusterSkip: string | false = process.env.CI
  ? false
  : !binDir
    ? 'no PostgreSQL server binaries (apt-get install postgresql-15, or set PG_BINDIR); the database outage tests are skipped outside CI'
    : asRoot && !postgresUser
      ? 'running as root needs the postgres system user (installed with the server package); the database outage tests are skipped outside CI'
      : false

if (pgClusterSkip) console.warn(`SKIPPED: ${pgClusterSkip}`)

export interface PgCluster {
  /** Superuser URL of the `postgres` database: create the test's databases through it. */
  adminUrl: string
  /** The URL of database `name` on this cluster. */
  urlOf(name: string): string
  /** Fast shutdown (open sessions are ended with 57P01 admin_shutdown); the data stays for start(). */
  stop(): Promise<void>
  /** Starts the same cluster on the same port again. */
  start(): Promise<void>
  /** Stops it (immediately) and removes its directory. */
  destroy(): Promise<void>
}

export async function startPgCluster(): Promise<PgCluster> {
  if (!binDir) throw new Error('no PostgreSQL server binaries found (apt-get install postgresql-15, or set PG_BINDIR)')
  const superuser = asRoot ? 'postgres' : os.userInfo().username
  const asPg = (command: string, args: string[]) => asRoot
    ? run('runuser', ['-u', 'postgres', '--', path.join(binDir, command), ...args])
    : run(path.join(binDir, command), args)

  const tmp = tempDir('packs-pgc-')
  // World-traversable so the postgres user reaches it when root created it.
  fs.chmodSync(tmp, 0o755)
  if (asRoot) await run('chown', ['postgres:', tmp])
  const data = path.join(tmp, 'data')
  const log = path.join(tmp, 'server.log')
  const port = await freePort()
  const withLog = async (what: string, action: () => Promise<unknown>) => {
    try {
      await action()
    } catch (error) {
      const serverLog = fs.existsSync(log) ? fs.readFileSync(log, 'utf8').slice(-4000) : ''
      throw new Error(`${what} failed: ${(error as Error).message}\n${serverLog}`)
    }
  }

  await withLog('initdb', () => asPg('initdb', ['-D', data, '-U', superuser, '--auth=trust', '--encoding=UTF8', '--locale=C.UTF-8']))
  const start = () => withLog('pg_ctl start', () => asPg('pg_ctl', [
    '-D', data, '-l', log, '-w', '-t', '60',
    '-o', `-p ${port} -h 127.0.0.1 -k ${tmp} -c fsync=off -c synchronous_commit=off -c full_page_writes=off`,
    'start',
  ]))
  await start()
  let running = true

  const urlOf = (name: string) => `postgres://${superuser}@127.0.0.1:${port}/${name}`
  return {
    adminUrl: urlOf('postgres'),
    urlOf,
    async stop() {
      if (!running) return
      await withLog('pg_ctl stop', () => asPg('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']))
      running = false
    },
    async start() {
      if (running) return
      await start()
      running = true
    },
    async destroy() {
      if (running) await asPg('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']).catch(() => {})
      running = false
      fs.rmSync(tmp, { recursive: true, force: true })
    },
  }
}
