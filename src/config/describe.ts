// What a started server runs on, in words an operator can check at a glance:
// the one start-up line and the warnings about shapes that lose data or
// answer inconsistently. A setting that a shell dropped (an unquoted `&` in an
// env file cuts STORAGE_URL short, or loses it) shows here as the default it
// fell back to, instead of staying invisible.
import path from 'node:path'
import { redactUrl, type Config } from './index.js'

export interface RuntimeDescription {
  /** The start-up line's text. */
  message: string
  /** The same, as fields of the log line (secrets hidden). */
  fields: { database: string; storage: string; sharedState: string; workers: number }
  /** One line each, logged at warn. */
  warnings: string[]
}

export function describeRuntime(config: Config): RuntimeDescription {
  const sharedDatabase = !config.databaseUrl.startsWith('sqlite:')
  const sharedStorage = config.storageUrl.startsWith('s3:')
  const database = sharedDatabase
    ? `PostgreSQL ${redactUrl(config.databaseUrl)}`
    : `SQLite ${path.resolve(config.databaseUrl.slice('sqlite:'.length))}`
  const storage = sharedStorage
    ? `S3 ${redactUrl(config.storageUrl)}`
    : `local disk ${path.resolve(config.storageUrl.slice('file:'.length))}`
  const sharedState = config.redisUrl ? `Redis ${redactUrl(config.redisUrl)}` : 'this process (no REDIS_URL)'
  const workers = config.webConcurrency

  const warnings: string[] = []
  // PostgreSQL is what several instances share; the other two must be shared as well, or each instance
  // sees its own files and its own caches. Nothing stops one instance on PostgreSQL with local files (a
  // valid shape), so these are warnings, not errors.
  if (sharedDatabase && !sharedStorage) {
    warnings.push(
      `packs: the database is shared (PostgreSQL) but files are on this machine's disk (${storage.slice('local disk '.length)}): ` +
        'another instance on the same database will not find them. Set STORAGE_URL=s3://... for more than one instance ' +
        '(check that an env file quotes it: it contains "&").',
    )
  }
  if (sharedDatabase && !config.redisUrl) {
    warnings.push(
      'packs: the database is shared (PostgreSQL) but REDIS_URL is unset: each instance keeps its own update-check answers ' +
        'and failed-attempt counts, so another instance may answer an old version and the failure limit is per instance. ' +
        'Set REDIS_URL for more than one instance.',
    )
  }

  const message =
    `packs: running on database ${database}, storage ${storage}, shared state ${sharedState}, ` +
    `${workers} ${workers === 1 ? 'worker' : 'workers'}`
  return { message, fields: { database, storage, sharedState, workers }, warnings }
}
