// `npx packs <command>`: the admin CLI (CONTRACT §1). It reads the same
// environment as the server and works on a fresh data directory.
// Exit codes: 0 done; 1 the command was refused (message on stderr);
// 2 the command line itself is wrong (usage on stderr).
import { parseArgs, type ParseArgsConfig } from 'node:util'
import { ConfigError, loadConfig, parseDuration } from './config/index.js'
import { migrateToLatest, openDatabase, type Db } from './db/index.js'
import { TOKEN_NAME_MAX } from './api/constants.js'
import { Gate } from './accounts/gate.js'
import { PasswordHasher } from './accounts/passwords.js'
import { createApiToken } from './accounts/tokens-service.js'
import { createUser, setStaff } from './accounts/users-service.js'
import { DomainError } from './errors.js'
import { createCategory, createTag } from './packs/tags.js'
import { exportSite, importSite } from './maintenance/transfer.js'
import { formatFinding, formatSummary, runDoctor } from './maintenance/doctor.js'
import { openFileStore, type FileStore } from './storage/index.js'
import type { Config } from './config/index.js'

type Options = NonNullable<ParseArgsConfig['options']>
type Values = Record<string, string | boolean | undefined>

interface Command {
  usage: string
  summary: string
  positionals: string[]
  options: Options
  required?: string[]
  /** Resolves to the exit code when it is not 0 (a check that found problems), or nothing. */
  run(db: Db, args: string[], values: Values, out: (line: string) => void, config: Config, err: (line: string) => void): Promise<number | void>
}

class UsageError extends Error {}

const COMMANDS: Record<string, Command> = {
  'user create': {
    usage: 'user create <username> --password <password> [--staff]',
    summary: 'create a user (1-32 characters of A-Z a-z 0-9 _ . -, unique case-insensitively)',
    positionals: ['username'],
    options: { password: { type: 'string' }, staff: { type: 'boolean' } },
    required: ['password'],
    async run(db, [username], values, out, config) {
      const user = await createUser(db, new PasswordHasher(config.passwordHashCost), username!, values.password as string, values.staff === true)
      out(`created ${user.isStaff ? 'staff user' : 'user'} ${user.username}`)
    },
  },
  'user set-staff': {
    usage: 'user set-staff <username> <true|false>',
    summary: 'grant or revoke staff rights',
    positionals: ['username', 'true|false'],
    options: {},
    async run(db, [username, flag], _values, out) {
      if (flag !== 'true' && flag !== 'false') throw new UsageError(`expected true or false, got "${flag}"`)
      const user = await setStaff(db, username!, flag === 'true')
      out(`${user.username} is ${user.isStaff ? 'now staff' : 'no longer staff'}`)
    },
  },
  'token create': {
    usage: 'token create <username> [--name <label>]',
    summary: 'create an API token; the token is printed once, on the last line',
    positionals: ['username'],
    options: { name: { type: 'string' } },
    async run(db, [username], values, out) {
      const name = ((values.name as string | undefined) ?? 'cli').trim()
      if (name.length < 1 || name.length > TOKEN_NAME_MAX) throw new UsageError(`--name must be 1-${TOKEN_NAME_MAX} characters`)
      const { token } = await createApiToken(db, username!, name)
      out(`created API token "${name}" for ${username}; it is shown only this once. Use it as: Authorization: Bearer ${username} <token>`)
      out(token)
    },
  },
  'category create': {
    usage: 'category create <key> --name <display name> --color <#rrggbb>',
    summary: 'create a tag category (key: 1-32 characters of a-z 0-9 _ -)',
    positionals: ['key'],
    options: { name: { type: 'string' }, color: { type: 'string' } },
    required: ['name', 'color'],
    async run(db, [key], values, out) {
      const category = await createCategory(db, key!, values.name as string, values.color as string)
      out(`created category ${category.key} ("${category.name}", ${category.color})`)
    },
  },
  'tag create': {
    usage: 'tag create <name> --category <key>',
    summary: 'create a tag in a category (1-32 characters, unique case-insensitively)',
    positionals: ['name'],
    options: { category: { type: 'string' } },
    required: ['category'],
    async run(db, [name], values, out) {
      const tag = await createTag(db, name!, values.category as string)
      out(`created tag "${tag.name}" in category ${tag.category.key}`)
    },
  },
  'master-password set': {
    usage: 'master-password set <password>',
    summary: 'change the site-wide gate password (stored as a hash)',
    positionals: ['password'],
    options: {},
    async run(db, [password], _values, out, config, err) {
      if (password!.trim() === '') throw new UsageError('the password must not be empty')
      await (await Gate.open(db, null, new PasswordHasher(config.passwordHashCost))).setPassword(password!)
      out('master password changed; running servers use it within a few seconds')
      if (config.masterPassword !== null) {
        err('packs: warning: PACKS_MASTER_PASSWORD is set; while it is, the environment variable overrides the stored password')
      }
    },
  },
  'export': {
    usage: 'export <dir>',
    summary: 'write the whole site (every row, every file, with SHA-256s) into a new directory',
    positionals: ['dir'],
    options: {},
    async run(db, [dir], _values, out, config) {
      const report = await withFileStore(config, (store) => exportSite(db, store, dir!))
      out(`exported ${report.rows} rows and ${report.files} files (${report.bytes} bytes) to ${dir}`)
    },
  },
  'import': {
    usage: 'import <dir>',
    summary: 'load an export into this (empty) site, checking every file\'s SHA-256',
    positionals: ['dir'],
    options: {},
    async run(db, [dir], _values, out, config) {
      const report = await withFileStore(config, (store) => importSite(db, store, dir!))
      out(`imported ${report.rows} rows and ${report.files} files (${report.bytes} bytes) from ${dir}; every file's SHA-256 matched`)
    },
  },
  'doctor': {
    usage: 'doctor [--repair] [--min-age <duration>]',
    summary: 'check that stored files and rows agree (orphan files, rows without files, half-published packs); --repair fixes what is safe',
    positionals: [],
    options: { repair: { type: 'boolean' }, 'min-age': { type: 'string' } },
    async run(db, _args, values, out, config, err) {
      let graceMs = config.orphanGraceMs
      if (typeof values['min-age'] === 'string') {
        // "0" is allowed here (unlike PACKS_ORPHAN_GRACE): with no server and no import running, nothing is in flight.
        try {
          graceMs = values['min-age'].trim() === '0' ? 0 : parseDuration('--min-age', values['min-age'])
        } catch (error) {
          throw new UsageError((error as Error).message)
        }
      }
      const report = await withFileStore(config, (store) => runDoctor(db, store, {
        repair: values.repair === true ? 'all' : 'report',
        graceMs,
        onFinding: (finding) => out(formatFinding(finding)),
      }))
      out(`packs doctor: ${formatSummary(report, graceMs)}`)
      if (report.remaining === 0) return
      err(`packs: ${report.remaining} problem${report.remaining === 1 ? '' : 's'} remain${report.remaining === 1 ? 's' : ''}${values.repair === true ? ' after repair' : ' (packs doctor --repair fixes what is safe to fix)'}`)
      return 1
    },
  },
}

/** The configured store, checked as the server checks it at start, closed after `use`. */
async function withFileStore<T>(config: Config, use: (store: FileStore) => Promise<T>): Promise<T> {
  const store = await openFileStore(config.storageUrl)
  try {
    await store.check?.()
    return await use(store)
  } finally {
    await store.close()
  }
}

function usage(): string {
  const width = Math.max(...Object.values(COMMANDS).map((c) => c.usage.length))
  const lines = Object.values(COMMANDS).map((c) => `  packs ${c.usage.padEnd(width)}  ${c.summary}`)
  return [
    'usage: packs <command>',
    '',
    'commands:',
    ...lines,
    `  packs ${'help'.padEnd(width)}  show this help`,
    '',
    'The environment is the server\'s: PACKS_DATA_DIR, DATABASE_URL, PACKS_MASTER_PASSWORD, ...',
  ].join('\n') + '\n'
}

function usageFailure(output: CliOutput, message: string, command?: Command): number {
  output.stderr(`packs: ${message}\n${command ? `usage: packs ${command.usage}\n` : usage()}`)
  return 2
}

/** Splits argv into the command and its parsed arguments; throws UsageError when they do not fit. */
function parseCommand(command: Command, argv: string[]): { args: string[]; values: Values } {
  let parsed
  try {
    parsed = parseArgs({ args: argv, options: command.options, allowPositionals: true, strict: true })
  } catch (error) {
    // parseArgs reports unknown options and missing option values as TypeErrors with ERR_PARSE_ARGS_* codes.
    throw new UsageError((error as Error).message.split(/\.\s|\n/)[0]!)
  }
  const { positionals, values } = parsed
  if (positionals.length !== command.positionals.length) {
    throw new UsageError(`expected ${command.positionals.map((p) => `<${p}>`).join(' ')}`)
  }
  for (const name of command.required ?? []) {
    if (typeof values[name] !== 'string') throw new UsageError(`missing --${name}`)
  }
  return { args: positionals, values: values as Values }
}

/** Where the CLI writes: the process's own streams, or a test's buffers. */
export interface CliOutput {
  stdout(text: string): void
  stderr(text: string): void
}

const processOutput: CliOutput = {
  stdout: (text) => { process.stdout.write(text) },
  stderr: (text) => { process.stderr.write(text) },
}

/**
 * Runs one command line and resolves to its exit code. bin/packs.js calls it
 * with the process's arguments, environment and streams; tests call it in
 * their own process with a site's environment, which costs no process start.
 */
export async function main(argv: string[], env: NodeJS.ProcessEnv = process.env, output: CliOutput = processOutput): Promise<number> {
  const [group, action, ...rest] = argv
  if (group === undefined || group === 'help' || group === '--help' || group === '-h') {
    output.stdout(usage())
    return 0
  }
  // Two-word commands ("user create") and one-word ones ("export <dir>").
  const twoWords = COMMANDS[`${group} ${action ?? ''}`]
  const command = twoWords ?? COMMANDS[group]
  if (!command) return usageFailure(output, `unknown command "${[group, action].filter(Boolean).join(' ')}"`)
  if (!twoWords && action !== undefined) rest.unshift(action)
  if (rest.includes('--help') || rest.includes('-h')) {
    output.stdout(`usage: packs ${command.usage}\n  ${command.summary}\n`)
    return 0
  }

  let parsed
  try {
    parsed = parseCommand(command, rest)
  } catch (error) {
    if (error instanceof UsageError) return usageFailure(output, error.message, command)
    throw error
  }

  let db: Db | undefined
  try {
    const config = loadConfig(env)
    db = await openDatabase(config.databaseUrl)
    await migrateToLatest(db)
    return (await command.run(db, parsed.args, parsed.values, (line) => output.stdout(`${line}\n`), config, (line) => output.stderr(`${line}\n`))) ?? 0
  } catch (error) {
    if (error instanceof UsageError) return usageFailure(output, error.message, command)
    // Refusals (taken, invalid, unknown) and configuration problems are one line; never a stack.
    if (error instanceof DomainError) output.stderr(`packs: ${error.detail}\n`)
    else if (error instanceof ConfigError) output.stderr(`packs: configuration error: ${error.message}\n`)
    else output.stderr(`packs: failed: ${(error instanceof Error ? error.message : String(error)).split("\n")[0]}\n`)
    return 1
  } finally {
    await db?.destroy()
  }
}

