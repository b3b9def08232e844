// `packs backup` / `packs restore` on PostgreSQL (src/maintenance/backup.ts):
// PostgreSQL's own pg_dump (custom format) and pg_restore, found on PATH or
// under /usr/lib/postgresql/*/bin (Debian's layout). The password goes to
// them in their environment (PGPASSWORD), never on their command line, where
// every user of the machine could read it in the process list: the CLI itself
// got it through its environment (DATABASE_URL), which on Linux only the same
// user and root can read (/proc/<pid>/environ is 0400), so the child's
// environment shows it to nobody new, and unlike a password file it leaves
// nothing on disk if the process is killed.
import { execFile, spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { promisify } from 'node:util'
import { sql } from 'kysely'
import type { Db } from '../db/index.js'
import { BadRequest, Conflict } from '../errors.js'

const run = promisify(execFile)

interface PgTool {
  path: string
  /** As the tool prints it: "15.18". */
  version: string
  major: number
}

/** "pg_dump (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)" -> 15.18 */
function parseVersion(text: string): { version: string; major: number } | undefined {
  const match = /\(PostgreSQL\) (\d+)(\.\d+)?/.exec(text)
  return match ? { version: `${match[1]}${match[2] ?? ''}`, major: Number(match[1]) } : undefined
}

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK)
    return fs.statSync(file).isFile()
  } catch {
    return false
  }
}

/**
 * The newest `name` (pg_dump, pg_restore) on PATH or under
 * /usr/lib/postgresql/<version>/bin: a machine may have several client
 * versions, and only one at least as new as the server can dump it.
 */
export async function findPgTool(name: 'pg_dump' | 'pg_restore'): Promise<PgTool | undefined> {
  const dirs = (process.env.PATH ?? '').split(path.delimiter).filter((dir) => dir !== '')
  try {
    for (const version of fs.readdirSync('/usr/lib/postgresql')) dirs.push(path.join('/usr/lib/postgresql', version, 'bin'))
  } catch {
    // No Debian-style PostgreSQL install.
  }
  let best: PgTool | undefined
  for (const file of [...new Set(dirs.map((dir) => path.join(dir, name)))].filter(isExecutable)) {
    const found = await run(file, ['--version'], { timeout: 10_000 }).then(({ stdout }) => parseVersion(stdout), () => undefined)
    if (found && (!best || found.major > best.major)) best = { path: file, ...found }
  }
  return best
}

/** The connection string without its password, and the password apart (for PGPASSWORD). */
function connection(databaseUrl: string): { dbname: string; password: string | undefined } {
  const url = new URL(databaseUrl)
  const password = url.password === '' ? undefined : decodeURIComponent(url.password)
  url.password = ''
  return { dbname: url.toString(), password }
}

function toolEnv(password: string | undefined): NodeJS.ProcessEnv {
  // PGCONNECT_TIMEOUT: an unreachable host must fail the command, not hang it (as the server's own 10 s).
  const env: NodeJS.ProcessEnv = { ...process.env, PGCONNECT_TIMEOUT: '10' }
  if (password !== undefined) env.PGPASSWORD = password
  return env
}

/** Runs a PostgreSQL tool to its end; rejects with the first line of what it said when it fails. */
function runTool(tool: PgTool, args: string[], password: string | undefined, stdout: number | 'ignore'): { done: Promise<void>; kill(): void } {
  const name = path.basename(tool.path)
  const child = spawn(tool.path, args, { env: toolEnv(password), stdio: ['ignore', stdout, 'pipe'] })
  let said = ''
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => { if (said.length < 65_536) said += chunk })
  const done = new Promise<void>((resolve, reject) => {
    child.once('error', (error) => reject(new Error(`${name} could not be started: ${error.message}`)))
    child.once('close', (code, signal) => {
      if (code === 0) return resolve()
      // Its messages name the host, the database and the role, never the password.
      const line = said.split('\n').map((l) => l.trim()).find((l) => /error|fatal/i.test(l)) ?? said.split('\n')[0]?.trim() ?? ''
      reject(new Error(`${name} ${signal ? `was killed (${signal})` : `exited ${code}`}${line ? `: ${line}` : ''}`))
    })
  })
  return { done, kill: () => { child.kill('SIGTERM') } }
}

async function serverMajor(db: Db): Promise<number> {
  const { rows } = await sql<{ server_version_num: string }>`show server_version_num`.execute(db)
  return Math.floor(Number(rows[0]!.server_version_num) / 10_000)
}

/**
 * pg_dump of the live database into `destFd` (custom format), and `read` run
 * on the very same snapshot: a repeatable-read transaction exports its
 * snapshot, pg_dump takes it (--snapshot), and `read` queries inside that
 * transaction while pg_dump works. What `read` finds (the files the rows
 * name) is exactly what the dump holds, though the server keeps writing.
 */
export async function snapshotPostgres<T>(db: Db, databaseUrl: string, destFd: number, read: (db: Db) => Promise<T>): Promise<{ result: T; tool: string; toolMajor: number }> {
  const server = await serverMajor(db)
  const tool = await findPgTool('pg_dump')
  if (!tool) {
    throw new BadRequest(`pg_dump was not found on PATH or under /usr/lib/postgresql/*/bin: install PostgreSQL's client tools of the server's version (Debian: apt-get install postgresql-client-${server})`)
  }
  if (tool.major < server) {
    throw new BadRequest(`pg_dump ${tool.version} (${tool.path}) is older than the server (PostgreSQL ${server}) and cannot dump it: install postgresql-client-${server}`)
  }
  const { dbname, password } = connection(databaseUrl)
  const result = await db.transaction().setIsolationLevel('repeatable read').execute(async (trx) => {
    const { rows } = await sql<{ id: string }>`select pg_export_snapshot() as id`.execute(trx)
    const dump = runTool(tool, ['--format=custom', `--snapshot=${rows[0]!.id}`, '--no-password', `--dbname=${dbname}`], password, destFd)
    let named: T
    try {
      named = await read(trx)
    } catch (error) {
      dump.kill()
      await dump.done.catch(() => {})
      throw error
    }
    // The snapshot lives as long as this transaction: it stays open until pg_dump is done with it.
    await dump.done
    return named
  })
  return { result, tool: `pg_dump ${tool.version}`, toolMajor: tool.major }
}

/**
 * Every table, view and foreign or materialized table in the database, in any
 * schema but PostgreSQL's own: by name when it is in the schema Packs creates
 * its tables in (the first of the search path), else as schema.name, so a
 * table of the same name in another schema is never taken for Packs' own.
 */
export async function postgresTables(db: Db): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`
    select case when n.nspname = current_schema() then c.relname else n.nspname || '.' || c.relname end as name
    from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace
    where c.relkind in ('r', 'p', 'v', 'm', 'f') and n.nspname !~ '^pg_' and n.nspname <> 'information_schema'
    order by 1`.execute(db)
  return rows.map((row) => row.name)
}

/**
 * Refuses a target database that other sessions are connected to: a running
 * server would go on writing while pg_restore drops and recreates its tables.
 */
export async function assertPostgresTargetIdle(db: Db): Promise<void> {
  const { rows } = await sql<{ n: string | number }>`
    select count(*) as n from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`.execute(db)
  const others = Number(rows[0]!.n)
  if (others > 0) {
    throw new Conflict(`the target database has ${others} other connection${others === 1 ? '' : 's'} (a server still running on it?): stop the servers before restoring`)
  }
}

/**
 * pg_restore of a dump into the target database, as one transaction: a
 * failure leaves the target as it was. --clean --if-exists drops the tables a
 * server or CLI already created there (the caller checked they hold no
 * site); --no-owner and --no-privileges make the target's role own what it
 * restores, whatever role took the dump.
 */
export async function restorePostgres(dumpFile: string, databaseUrl: string, dumpedWithMajor: number): Promise<void> {
  const tool = await findPgTool('pg_restore')
  if (!tool) throw new BadRequest('pg_restore was not found on PATH or under /usr/lib/postgresql/*/bin: install PostgreSQL\'s client tools (Debian: postgresql-client)')
  if (tool.major < dumpedWithMajor) {
    throw new BadRequest(`pg_restore ${tool.version} (${tool.path}) is older than the pg_dump ${dumpedWithMajor} that wrote the backup and cannot read it: install postgresql-client-${dumpedWithMajor}`)
  }
  const { dbname, password } = connection(databaseUrl)
  const restore = runTool(tool, [
    '--single-transaction', '--exit-on-error', '--clean', '--if-exists', '--no-owner', '--no-privileges', '--no-password',
    `--dbname=${dbname}`, dumpFile,
  ], password, 'ignore')
  await restore.done
}
