// Environment -> typed configuration, parsed once at start-up.
// Every variable is optional (CONTRACT §1); a value that is present but wrong
// stops start-up with a ConfigError whose message is one line naming it.
import path from 'node:path'

export type UploadKind = 'thumbnail' | 'version' | 'media'

export interface Config {
  host: string
  port: number
  dataDir: string
  /** From PACKS_MASTER_PASSWORD; when absent the gate password lives (hashed) in the database. */
  masterPassword: string | null
  databaseUrl: string
  storageUrl: string
  redisUrl: string | null
  /** Public origin without a trailing slash, e.g. https://packs.example.org */
  baseUrl: string | null
  uploadLimits: Record<UploadKind, number>
  draftBodyLimit: number
  pendingUploadTtlMs: number
  draftTtlMs: number
  sweepIntervalMs: number
  statsCacheMs: number
  sessionTtlMs: number
  /** Failed gate or login attempts allowed per client address and window. */
  authFailureLimit: number
  authFailureWindowMs: number
  /** Fastify's trustProxy: false, true, or a comma-separated list of proxy addresses/CIDRs. */
  trustProxy: boolean | string
  logLevel: string
  /** Worker processes serving the port (WEB_CONCURRENCY); 1 runs the server in this process. */
  webConcurrency: number
}

export class ConfigError extends Error {
  override name = 'ConfigError'
}

type Env = Record<string, string | undefined>

const SIZE_UNITS: Record<string, number> = {
  '': 1, b: 1, k: 1024, kb: 1024, kib: 1024, m: 1024 ** 2, mb: 1024 ** 2, mib: 1024 ** 2,
  g: 1024 ** 3, gb: 1024 ** 3, gib: 1024 ** 3,
}

/** "5MiB", "100 MB", "1048576" -> bytes (binary units: these are upload limits, not disk marketing). */
export function parseSize(name: string, raw: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(raw)
  const unit = match ? SIZE_UNITS[match[2]!.toLowerCase()] : undefined
  if (!match || unit === undefined) {
    throw new ConfigError(`${name}: "${raw}" is not a size (examples: 5MiB, 500MiB, 1048576)`)
  }
  const bytes = Math.floor(Number(match[1]) * unit)
  if (bytes <= 0) throw new ConfigError(`${name}: must be greater than zero`)
  return bytes
}

const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }

/** "24h", "30d", "90s", "500ms" -> milliseconds. */
export function parseDuration(name: string, raw: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)\s*$/i.exec(raw)
  if (!match) throw new ConfigError(`${name}: "${raw}" is not a duration (examples: 90s, 10m, 24h, 30d)`)
  const ms = Math.round(Number(match[1]) * DURATION_UNITS[match[2]!.toLowerCase()]!)
  if (ms <= 0) throw new ConfigError(`${name}: must be greater than zero`)
  return ms
}

function parsePort(raw: string): number {
  if (!/^\d+$/.test(raw) || Number(raw) > 65535) {
    throw new ConfigError(`PORT: "${raw}" is not a port number (0-65535)`)
  }
  return Number(raw)
}

function parsePositiveInt(name: string, raw: string): number {
  if (!/^\d+$/.test(raw) || Number(raw) < 1) throw new ConfigError(`${name}: "${raw}" is not a positive integer`)
  return Number(raw)
}

function parseDatabaseUrl(raw: string): string {
  if (raw.startsWith('sqlite:') && raw.length > 'sqlite:'.length) return raw
  if (/^postgres(ql)?:\/\/./.test(raw)) return raw
  throw new ConfigError(`DATABASE_URL: "${redactUrl(raw)}" must be sqlite:<path> or postgres://...`)
}

function parseStorageUrl(raw: string): string {
  if (raw.startsWith('file:') && raw.length > 'file:'.length) return raw
  if (/^s3:\/\/[^/?]+/.test(raw)) return raw
  throw new ConfigError(`STORAGE_URL: "${raw}" must be file:<dir> or s3://<bucket>?endpoint=...&region=...`)
}

function parseBaseUrl(raw: string): string {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new ConfigError(`PACKS_BASE_URL: "${raw}" is not an absolute URL`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(`PACKS_BASE_URL: "${raw}" must be an http or https URL`)
  }
  return url.origin + url.pathname.replace(/\/+$/, '')
}

function parseTrustProxy(raw: string): boolean | string {
  if (raw === 'true') return true
  if (raw === 'false') return false
  return raw
}

/** Hides a password in a connection URL so it can appear in an error line. */
export function redactUrl(raw: string): string {
  return raw.replace(/\/\/([^:/@]+):[^@]*@/, '//$1:***@')
}

export function loadConfig(env: Env = process.env): Config {
  const get = (name: string): string | undefined => {
    const value = env[name]
    return value === undefined || value.trim() === '' ? undefined : value.trim()
  }
  const dataDir = path.resolve(get('PACKS_DATA_DIR') ?? './data')
  const withDefault = <T>(name: string, parse: (raw: string) => T, fallback: T): T => {
    const raw = get(name)
    return raw === undefined ? fallback : parse(raw)
  }

  return {
    host: get('HOST') ?? '127.0.0.1',
    port: withDefault('PORT', parsePort, 8000),
    dataDir,
    masterPassword: env.PACKS_MASTER_PASSWORD ? env.PACKS_MASTER_PASSWORD : null,
    databaseUrl: withDefault('DATABASE_URL', parseDatabaseUrl, `sqlite:${path.join(dataDir, 'packs.db')}`),
    storageUrl: withDefault('STORAGE_URL', parseStorageUrl, `file:${path.join(dataDir, 'files')}`),
    redisUrl: get('REDIS_URL') ?? null,
    baseUrl: withDefault('PACKS_BASE_URL', parseBaseUrl, null),
    uploadLimits: {
      thumbnail: withDefault('PACKS_MAX_THUMBNAIL_SIZE', (r) => parseSize('PACKS_MAX_THUMBNAIL_SIZE', r), 5 * 1024 ** 2),
      media: withDefault('PACKS_MAX_MEDIA_SIZE', (r) => parseSize('PACKS_MAX_MEDIA_SIZE', r), 100 * 1024 ** 2),
      version: withDefault('PACKS_MAX_VERSION_SIZE', (r) => parseSize('PACKS_MAX_VERSION_SIZE', r), 500 * 1024 ** 2),
    },
    draftBodyLimit: 256 * 1024,
    pendingUploadTtlMs: withDefault('PACKS_UPLOAD_TTL', (r) => parseDuration('PACKS_UPLOAD_TTL', r), 24 * 3_600_000),
    draftTtlMs: withDefault('PACKS_DRAFT_TTL', (r) => parseDuration('PACKS_DRAFT_TTL', r), 30 * 86_400_000),
    sweepIntervalMs: withDefault('PACKS_SWEEP_INTERVAL', (r) => parseDuration('PACKS_SWEEP_INTERVAL', r), 10 * 60_000),
    statsCacheMs: withDefault('PACKS_STATS_CACHE', (r) => parseDuration('PACKS_STATS_CACHE', r), 20_000),
    sessionTtlMs: withDefault('PACKS_SESSION_TTL', (r) => parseDuration('PACKS_SESSION_TTL', r), 14 * 86_400_000),
    authFailureLimit: withDefault('PACKS_AUTH_FAILURE_LIMIT', (r) => parsePositiveInt('PACKS_AUTH_FAILURE_LIMIT', r), 10),
    authFailureWindowMs: withDefault('PACKS_AUTH_FAILURE_WINDOW', (r) => parseDuration('PACKS_AUTH_FAILURE_WINDOW', r), 15 * 60_000),
    trustProxy: withDefault('PACKS_TRUST_PROXY', parseTrustProxy, false),
    logLevel: get('LOG_LEVEL') ?? 'info',
    webConcurrency: withDefault('WEB_CONCURRENCY', (r) => parseWorkers(r), 1),
  }
}

/** WEB_CONCURRENCY: how many worker processes share the port; at most 64 (beyond the cores it only adds memory). */
function parseWorkers(raw: string): number {
  const workers = parsePositiveInt('WEB_CONCURRENCY', raw)
  if (workers > 64) throw new ConfigError(`WEB_CONCURRENCY: ${workers} workers is more than 64`)
  return workers
}
