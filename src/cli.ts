// `npx packs <command>`: the admin CLI (docs/decisions.md#running-it). It reads the same
// environment as the server and works on a fresh data directory.
// Exit codes: 0 done; 1 the command was refused (message on stderr);
// 2 the command line itself is wrong (usage on stderr).
import { parseArgs, type ParseArgsConfig } from 'node:util'
import { ConfigError, loadConfig, parseDuration } from './config/index.js'
import { migrateToLatest, openDatabase, type Db } from './db/index.js'
import { PACK_ID_HOLD_DAYS, TOKEN_MAX_DAYS, TOKEN_NAME_MAX } from './api/constants.js'
import { Gate } from './auth/gate.js'
import { PasswordHasher } from './auth/passwords.js'
import { createApiToken } from './accounts/tokens-service.js'
import { createUser, setStaff } from './accounts/users-service.js'
import { setUserDisabled } from './moderation/account-service.js'
import { CLI_ACTOR } from './audit/service.js'
import { setPackHidden } from './moderation/pack-service.js'
import { deletePack } from './packs/delete-service.js'
import { allowArchiveCopy, showArchiveClaim, transferArchiveClaim } from './packs/archive-claims.js'
import { MemoryUpdateCheckCache, type UpdateCheckCache } from './update-check/cache.js'
import { DomainError } from './errors.js'
import { createCategory, createTag } from './packs/tags.js'
import { exportSite, importSite } from './maintenance/transfer.js'
import { backupSite, formatCounts, restoreSite } from './maintenance/backup.js'
import { DEFAULT_GRACE_DAYS, MAX_GRACE_DAYS, RELOAD_INTERVAL_MS, Signer, rotateSigningKey } from './signing/service.js'
import { formatFinding, formatSummary, runDoctor } from './maintenance/doctor.js'
import { openFileStore, type FileStore } from './storage/index.js'
import type { Config } from './config/index.js'

type Options = NonNullable<ParseArgsConfig['options']>
type Values = Record<string, string | boolean | undefined>

interface CommandBase {
  usage: string
  summary: string
  positionals: string[]
  options: Options
  required?: string[]
}

/** A command on the database main() opened and migrated. */
interface DatabaseCommand extends CommandBase {
  /** Resolves to the exit code when it is not 0 (a check that found problems), or nothing. */
  run(db: Db, args: string[], values: Values, out: (line: string) => void, config: Config, err: (line: string) => void): Promise<number | void>
}

/**
 * A command that opens the database itself, if at all: main() neither opens
 * nor migrates it. A backup must not change the site it copies (a newer CLI
 * would migrate a database an older server still runs on), and a restore
 * must find its target as it is, and replace a SQLite file that no
 * connection of this process holds.
 */
interface StandaloneCommand extends CommandBase {
  runWithoutDatabase(args: string[], values: Values, out: (line: string) => void, config: Config, err: (line: string) => void): Promise<number | void>
}

type Command = DatabaseCommand | StandaloneCommand

class UsageError extends Error {}

const COMMANDS: Record<string, Command> = {
  'user create': {
    usage: 'user create <username> (--password <password> | --password-stdin) [--staff]',
    summary: 'create a user (1-32 characters of A-Z a-z 0-9 _ . -, unique case-insensitively); --password-stdin reads '
      + 'the password from the first line of standard input, so it is not in the process list',
    positionals: ['username'],
    options: { password: { type: 'string' }, 'password-stdin': { type: 'boolean' }, staff: { type: 'boolean' } },
    async run(db, [username], values, out, config) {
      const fromStdin = values['password-stdin'] === true
      if (fromStdin === (values.password !== undefined)) throw new UsageError('give exactly one of --password <password> and --password-stdin')
      const password = fromStdin ? await firstLineOfStdin() : values.password as string
      const user = await createUser(db, new PasswordHasher(config.passwordHashCost), username!, password, values.staff === true)
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
    usage: 'token create <username> [--name <label>] [--read-only | --pack <namespace:pack_id> ...] [--expires-in-days <N>]',
    summary: 'create an API token: full access, or --read-only, or with --pack (repeatable) only new versions of those packs '
      + 'of the user; the token is printed once, on the last line',
    positionals: ['username'],
    options: { name: { type: 'string' }, 'read-only': { type: 'boolean' }, pack: { type: 'string', multiple: true }, 'expires-in-days': { type: 'string' } },
    async run(db, [username], values, out) {
      const name = ((values.name as string | undefined) ?? 'cli').trim()
      if (name.length < 1 || name.length > TOKEN_NAME_MAX) throw new UsageError(`--name must be 1-${TOKEN_NAME_MAX} characters`)
      const packs = (values.pack as unknown as string[] | undefined) ?? []
      if (values['read-only'] === true && packs.length > 0) {
        throw new UsageError('--read-only and --pack do not go together: a --pack token may already only read, and publish versions of its packs')
      }
      const days = values['expires-in-days'] as string | undefined
      if (days !== undefined && (!/^\d{1,5}$/.test(days) || Number(days) < 1 || Number(days) > TOKEN_MAX_DAYS)) {
        throw new UsageError(`--expires-in-days must be a whole number of days from 1 to ${TOKEN_MAX_DAYS}`)
      }
      const scope = values['read-only'] === true ? 'read' : packs.length > 0 ? 'publish' : 'full'
      const expiresAt = days === undefined ? null : new Date(Date.now() + Number(days) * 86_400_000)
      const { token, record } = await createApiToken(db, username!, name, expiresAt, { scope, packs })
      const reach = record.scope === 'read' ? 'read-only' : record.scope === 'publish' ? `publish-only (new versions of ${record.packs.join(', ')})` : 'full-access'
      const expiry = record.expires_at === null ? 'it never expires' : `it expires ${record.expires_at}`
      out(`created ${reach} API token "${name}" for ${username}; ${expiry}; it is shown only this once. Use it as: Authorization: Bearer ${username} <token>`)
      out(token)
    },
  },
  'user disable': {
    usage: 'user disable <username> [--reason <text>]',
    summary: 'disable an account: no sign-in, its sessions end, its tokens stop working, its packs are hidden (reversible)',
    positionals: ['username'],
    options: { reason: { type: 'string' } },
    async run(db, [username], values, out, config, err) {
      const account = await withUpdateCheckCache(config, err, (updateCheckCache) =>
        setUserDisabled({ db, updateCheckCache }, CLI_ACTOR, username!, true, values.reason as string | undefined))
      out(`${account.username} is disabled: it cannot sign in, its sessions and tokens do not work, its packs are hidden`)
    },
  },
  'user enable': {
    usage: 'user enable <username> [--reason <text>]',
    summary: 'enable a disabled account again (its tokens work again, its packs are shown again)',
    positionals: ['username'],
    options: { reason: { type: 'string' } },
    async run(db, [username], values, out, config, err) {
      const account = await withUpdateCheckCache(config, err, (updateCheckCache) =>
        setUserDisabled({ db, updateCheckCache }, CLI_ACTOR, username!, false, values.reason as string | undefined))
      out(`${account.username} is enabled again`)
    },
  },
  'pack hide': {
    usage: 'pack hide <namespace:pack_id> [--reason <text>]',
    summary: 'hide a pack from everyone but its owner and staff; the update-check answers 404 for it (reversible)',
    positionals: ['namespace:pack_id'],
    options: { reason: { type: 'string' } },
    async run(db, [fullId], values, out, config, err) {
      const [namespace, packId] = splitPackId(fullId!)
      const pack = await withUpdateCheckCache(config, err, (updateCheckCache) =>
        setPackHidden({ db, updateCheckCache }, CLI_ACTOR, namespace, packId, true, values.reason as string | undefined))
      out(`${pack.namespace}:${pack.packId} is hidden: only its owner and staff see it`)
    },
  },
  'pack unhide': {
    usage: 'pack unhide <namespace:pack_id> [--reason <text>]',
    summary: 'show a hidden pack to everyone again',
    positionals: ['namespace:pack_id'],
    options: { reason: { type: 'string' } },
    async run(db, [fullId], values, out, config, err) {
      const [namespace, packId] = splitPackId(fullId!)
      const pack = await withUpdateCheckCache(config, err, (updateCheckCache) =>
        setPackHidden({ db, updateCheckCache }, CLI_ACTOR, namespace, packId, false, values.reason as string | undefined))
      out(`${pack.namespace}:${pack.packId} is visible again${pack.ownerDisabled ? ' (but its owner\'s account is disabled, so only staff see it)' : ''}`)
    },
  },
  'pack delete': {
    usage: 'pack delete <namespace:pack_id>',
    summary: `delete a pack with its versions, media and files; its id is refused to new packs for ${PACK_ID_HOLD_DAYS} days`,
    positionals: ['namespace:pack_id'],
    options: {},
    async run(db, [fullId], _values, out, config, err) {
      const [namespace, packId] = splitPackId(fullId!)
      const { heldUntil } = await withFileStore(config, (store) => withUpdateCheckCache(config, err, (updateCheckCache) =>
        deletePack({ db, store, updateCheckCache, config }, CLI_ACTOR, namespace, packId)))
      out(`deleted ${namespace.toLowerCase()}:${packId.toLowerCase()}; no new pack may take its id until ${heldUntil}`)
    },
  },
  'archive show': {
    usage: 'archive show <sha256>',
    summary: 'which pack an archive\'s bytes belong to (the pack that first published them; the by-hash lookups name only it)',
    positionals: ['sha256'],
    options: {},
    async run(db, [sha256], _values, out) {
      const claim = await showArchiveClaim(db, sha256!)
      if (!claim) return void out(`no pack has published an archive with SHA-256 ${sha256!.toLowerCase()}`)
      const pack = claim.pack ? `${claim.pack.namespace}:${claim.pack.packId}${claim.pack.listed ? '' : ' (hidden, or its owner is disabled)'}` : 'a deleted pack'
      out(`${claim.sha256} belongs to ${pack}${claim.heldUntil === null ? '' : `, held until ${claim.heldUntil} (the pack no longer offers it)`}`)
    },
  },
  'archive allow': {
    usage: 'archive allow <sha256> <username> [--reason <text>]',
    summary: 'let a user publish an archive although another owner\'s pack claims it (a copy; the by-hash lookups still name the first pack)',
    positionals: ['sha256', 'username'],
    options: { reason: { type: 'string' } },
    async run(db, [sha256, username], values, out) {
      const { claim } = await allowArchiveCopy(db, sha256!, username!, values.reason as string | undefined)
      const owner = claim?.pack ? ` (it belongs to ${claim.pack.namespace}:${claim.pack.packId})` : ''
      out(`${username} may now publish the archive ${sha256!.toLowerCase()}${owner} in their packs; recorded in the audit log`)
    },
  },
  'archive transfer': {
    usage: 'archive transfer <sha256> <namespace:pack_id> [--reason <text>]',
    summary: 'give an archive\'s bytes to another pack: from now on the by-hash lookups name that pack for it',
    positionals: ['sha256', 'namespace:pack_id'],
    options: { reason: { type: 'string' } },
    async run(db, [sha256, fullId], values, out) {
      const [namespace, packId] = splitPackId(fullId!)
      await transferArchiveClaim(db, sha256!, namespace, packId, values.reason as string | undefined)
      out(`the archive ${sha256!.toLowerCase()} now belongs to ${namespace.toLowerCase()}:${packId.toLowerCase()}; recorded in the audit log`)
    },
  },
  'signing-key rotate': {
    usage: 'signing-key rotate [--grace-days <N>]',
    summary: `make a new key to sign update-check answers with, endorsed by the current one, which stays valid for N days `
      + `(default ${DEFAULT_GRACE_DAYS}); running servers switch within ${RELOAD_INTERVAL_MS / 1000} s`,
    positionals: [],
    options: { 'grace-days': { type: 'string' } },
    async run(db, _args, values, out) {
      const days = values['grace-days'] as string | undefined
      if (days !== undefined && (!/^\d{1,3}$/.test(days) || Number(days) > MAX_GRACE_DAYS)) {
        throw new UsageError(`--grace-days must be a whole number of days from 0 to ${MAX_GRACE_DAYS}`)
      }
      const rotation = await rotateSigningKey(db, days === undefined ? DEFAULT_GRACE_DAYS : Number(days))
      out(`the signing key is now ${rotation.current}; the previous key ${rotation.previous} stays valid until ${rotation.previousExpiresAt}`)
    },
  },
  'signing-key show': {
    usage: 'signing-key show',
    summary: 'print the site\'s signing keys (id, status, public key): what updaters pin',
    positionals: [],
    options: {},
    async run(db, _args, _values, out) {
      const signer = await Signer.open(db, Date.now)
      for (const key of signer.publicKeys()) {
        out(`${key.id}  ${key.status.padEnd(8)}  ${key.public_key}${key.expires_at === null ? '' : `  valid until ${key.expires_at}`}`)
      }
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
    async run(db, [dir], _values, out, config, err) {
      const report = await withFileStore(config, (store) => importSite(db, store, dir!), err)
      out(`imported ${report.rows} rows and ${report.files} files (${report.bytes} bytes) from ${dir}; every file's SHA-256 matched`)
    },
  },
  'backup': {
    usage: 'backup <dir>',
    summary: 'back up the running site into a new directory (0700, files 0600): the database with SQLite\'s online backup or '
      + 'pg_dump, then every stored file it names, with SHA-256s; servers keep running',
    positionals: ['dir'],
    options: {},
    async runWithoutDatabase([dir], _values, out, config, err) {
      const report = await withFileStore(config, (store) => backupSite(config.databaseUrl, store, dir!))
      out(`backed up ${formatCounts(report.counts)}: the ${report.engine === 'sqlite' ? 'SQLite database' : 'PostgreSQL dump'} `
        + `(${report.databaseBytes} bytes) and ${report.files} stored files (${report.bytes} bytes) to ${dir}`)
      if (report.problems.length === 0) return
      for (const problem of report.problems) err(`packs: warning: ${problem}`)
      err(`packs: the backup is written, but ${report.problems.length} file${report.problems.length === 1 ? ' was' : 's were'} not as the database says (packs doctor reports the site's side)`)
      return 1
    },
  },
  'restore': {
    usage: 'restore <dir>',
    summary: 'restore a backup into this empty site (stop its servers first), checking the database\'s and every file\'s SHA-256',
    positionals: ['dir'],
    options: {},
    async runWithoutDatabase([dir], _values, out, config, err) {
      const report = await withFileStore(config, (store) => restoreSite(config.databaseUrl, store, dir!))
      out(`restored ${formatCounts(report.counts)}: the ${report.engine === 'sqlite' ? 'SQLite database' : 'PostgreSQL dump'} `
        + `(${report.databaseBytes} bytes) and ${report.files} stored files (${report.bytes} bytes) from ${dir}; every SHA-256 matched`)
      for (const problem of report.problems) err(`packs: warning: when it was backed up, ${problem}`)
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
      }), err)
      out(`packs doctor: ${formatSummary(report, graceMs)}`)
      if (report.remaining === 0) return
      err(`packs: ${report.remaining} problem${report.remaining === 1 ? '' : 's'} remain${report.remaining === 1 ? 's' : ''}${values.repair === true ? ' after repair' : ' (packs doctor --repair fixes what is safe to fix)'}`)
      return 1
    },
  },
}

/** `namespace:pack_id` as the pack page shows it (any case). */
function splitPackId(fullId: string): [string, string] {
  const colon = fullId.indexOf(':')
  if (colon <= 0 || colon === fullId.length - 1) throw new UsageError(`expected <namespace:pack_id>, e.g. alice:my-pack, got "${fullId}"`)
  return [fullId.slice(0, colon), fullId.slice(colon + 1)]
}

/**
 * The update-check cache the running servers use, for a command that changes
 * what they answer (hide, delete, disable). With REDIS_URL it is theirs: the
 * same stamps in Redis (src/shared-state/redis-update-check-cache.ts), so
 * every server answers anew from the moment the command returns; Redis is
 * reached before anything changes. Without it, a running server keeps its
 * answers in its own memory, which no other process can reach: the command
 * says so, and that server keeps serving its cached answer for the pack
 * until it restarts.
 */
async function withUpdateCheckCache<T>(config: Config, err: (line: string) => void, use: (cache: UpdateCheckCache) => Promise<T>): Promise<T> {
  if (!config.redisUrl) {
    const result = await use(new MemoryUpdateCheckCache())
    err('packs: note: without REDIS_URL, a running server keeps the update-check answers it has cached until it restarts; '
      + 'restart it now, or make the change on the site (or its API) instead, for the update-check to follow at once')
    return result
  }
  // Loaded only here, as the server's shared-state plugin does: without REDIS_URL the CLI never loads the Redis client.
  const [{ openRedis }, { RedisUpdateCheckCache }] = await Promise.all([
    import('./shared-state/redis.js'),
    import('./shared-state/redis-update-check-cache.js'),
  ])
  const redis = await openRedis(config.redisUrl)
  let unwritten = false
  try {
    const cache = new RedisUpdateCheckCache(redis.client)
    cache.onWriteFailure = () => { unwritten = true }
    const result = await use(cache)
    if (unwritten) {
      err('packs: warning: the change is made, but Redis could not be told: running servers may answer update-checks for it '
        + 'from their cache until the pack changes again or they restart')
    }
    return result
  } finally {
    await redis.close()
  }
}

/**
 * The configured store, checked as the server checks it at start, closed after `use`. `warn`: where what the
 * store lacks is said, for the commands it matters to (import, doctor: unfinished uploads).
 */
async function withFileStore<T>(config: Config, use: (store: FileStore) => Promise<T>, warn?: (line: string) => void): Promise<T> {
  const store = await openFileStore(config.storageUrl, { groupReadable: config.fileDelivery.accelRedirect !== null })
  try {
    await store.check?.()
    const limitation = store.limitation?.()
    if (limitation && warn) warn(`packs: warning: ${limitation}`)
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
/** The first line of standard input, without its line ending; at most 64 KiB are read (a password, not a file). */
async function firstLineOfStdin(): Promise<string> {
  let text = ''
  // Decoded as a stream, so a character split between two chunks stays whole.
  process.stdin.setEncoding('utf8')
  for await (const chunk of process.stdin) {
    text += chunk as string
    if (text.includes('\n') || text.length > 65_536) break
  }
  process.stdin.destroy()
  return text.split(/\r?\n/, 1)[0] ?? ''
}

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
    const out = (line: string) => output.stdout(`${line}\n`)
    const err = (line: string) => output.stderr(`${line}\n`)
    if ('runWithoutDatabase' in command) return (await command.runWithoutDatabase(parsed.args, parsed.values, out, config, err)) ?? 0
    db = await openDatabase(config.databaseUrl)
    await migrateToLatest(db)
    return (await command.run(db, parsed.args, parsed.values, out, config, err)) ?? 0
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

