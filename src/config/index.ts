// Environment -> typed configuration, parsed once at start-up.
// Every variable is optional (docs/decisions.md#running-it); a value that is
// present but wrong stops start-up with a ConfigError whose message is one
// line naming it.
import { isIP } from 'node:net'
import path from 'node:path'
import { DEFAULT_UPLOAD_LIMITS } from '../api/constants.js'
import type { UploadKind } from '../api/constants.js'

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
  /** What one user may hold at a time; see userQuotasFrom. */
  userQuotas: UserQuotas
  draftBodyLimit: number
  pendingUploadTtlMs: number
  draftTtlMs: number
  sweepIntervalMs: number
  /**
   * Stored bytes without a row, and unfinished writes, younger than this are
   * left alone by the consistency check: they may be an upload in progress.
   * Default: the upload timeout plus 10 minutes, at least an hour.
   */
  orphanGraceMs: number
  statsCacheMs: number
  /**
   * How long a signed update-check answer may be trusted (its RFC 9421 `expires` minus `created`;
   * docs/update-protocol.md): a recorded answer can be replayed at most this long.
   */
  signatureTtlMs: number
  sessionTtlMs: number
  /** Failed gate or login attempts allowed per client address and window. */
  authFailureLimit: number
  authFailureWindowMs: number
  /** scrypt's N for new password hashes (PACKS_PASSWORD_HASH_COST); stored hashes keep their own. */
  passwordHashCost: number
  /** Fastify's trustProxy: false, or the reverse proxies whose X-Forwarded-For is believed (addresses, CIDRs, proxy-addr's range names). */
  trustProxy: false | string[]
  logLevel: string
  /** One line per request at level info (src/http/access-log.ts); PACKS_ACCESS_LOG=off turns it off. */
  accessLog: boolean
  /** Worker processes serving the port (WEB_CONCURRENCY); 1 runs the server in this process. */
  webConcurrency: number
  /** How long a client may take over each part of a request; see timeoutsFrom. */
  timeouts: Timeouts
  /** Where webhooks may send; see webhookPolicyFrom. */
  webhooks: WebhookSettings
  /** Who sends a download's bytes once Packs has decided the answer; see fileDeliveryFrom. */
  fileDelivery: FileDelivery
  /**
   * PACKS_METRICS_TOKEN: the bearer token a Prometheus scraper sends to GET /metrics; null (unset) turns
   * /metrics off. Never logged.
   */
  metricsToken: string | null
}

export interface WebhookSettings {
  /** PACKS_WEBHOOK_ALLOW_HTTP: http: addresses besides https: (off: a webhook's events would cross the network in the clear). */
  allowHttp: boolean
  /**
   * PACKS_WEBHOOK_ALLOW_HOSTS: host names (or addresses) that may be internal: a webhook to one of them skips the check
   * that its address is a public one. Lower case.
   */
  allowHosts: ReadonlySet<string>
}

/**
 * A download's bytes can leave through the engine made for them instead of this process (src/files/offload.ts).
 * At most one of the two is set, and only for the store it suits.
 */
export interface FileDelivery {
  /**
   * PACKS_ACCEL_REDIRECT: the URI prefix of nginx's internal location over the store's directory
   * (`/_packs_files/`); a download then answers `X-Accel-Redirect: <prefix><fan-out>/<key>` and nginx sends
   * the file. Local disk only. Null: off.
   */
  accelRedirect: string | null
  /** PACKS_S3_REDIRECT=on: downloads redirect to a presigned link of the object store, valid this many seconds (PACKS_S3_REDIRECT_TTL). Null: off. */
  s3RedirectSeconds: number | null
}

export interface UserQuotas {
  /** Bytes of pending uploads (not yet in a published pack) per user. */
  pendingUploadBytes: number
  /** Pending uploads per user, whatever their size (tiny files would otherwise make rows without bound). */
  pendingUploads: number
  /** Drafts per user. */
  drafts: number
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
  throw new ConfigError(`STORAGE_URL: "${redactUrl(raw)}" must be file:<dir> or s3://<bucket>?endpoint=...&region=...`)
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

/** proxy-addr's names for address ranges, which Fastify's trustProxy understands. */
const PROXY_RANGE_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal'])

/**
 * PACKS_TRUST_PROXY: a comma-separated list of the reverse proxies in front
 * (IP addresses, CIDR ranges, or loopback / linklocal / uniquelocal). `true`,
 * and a /0 range, which mean the same, are refused: whoever can reach the
 * port could then pick the address it is counted under.
 */
function parseTrustProxy(raw: string): false | string[] {
  if (raw.toLowerCase() === 'false') return false
  if (raw.toLowerCase() === 'true') {
    throw new ConfigError('PACKS_TRUST_PROXY: "true" would let any client choose its address with X-Forwarded-For (escaping the failed-attempt limit, or locking out someone else\'s address); list the proxy addresses instead, e.g. PACKS_TRUST_PROXY=127.0.0.1,10.0.0.0/8')
  }
  const entries = raw.split(',').map((entry) => entry.trim())
  for (const entry of entries) {
    if (PROXY_RANGE_NAMES.has(entry)) continue
    const [address = '', bits, ...rest] = entry.split('/')
    const family = isIP(address)
    const maxBits = family === 6 ? 128 : 32
    const validBits = bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= maxBits)
    if (family === 0 || !validBits || rest.length > 0) {
      throw new ConfigError(`PACKS_TRUST_PROXY: "${entry}" is not an IP address, a CIDR range (10.0.0.0/8) or one of loopback, linklocal, uniquelocal`)
    }
    if (bits !== undefined && Number(bits) === 0) {
      throw new ConfigError(`PACKS_TRUST_PROXY: "${entry}" trusts every address, which lets any client choose its address; list the proxy addresses instead`)
    }
  }
  return entries
}

/** Query parameters that carry a secret in a connection URL (libpq and pg accept `?password=`). */
const SECRET_PARAM_NAMES = 'password|pass|passwd|pwd|secret|token'
const SECRET_PARAM = new RegExp(`^(${SECRET_PARAM_NAMES})$`, 'i')
const SECRET_PARAM_IN_TEXT = new RegExp(`([?&;](?:${SECRET_PARAM_NAMES})=)[^&#]*`, 'gi')

/**
 * Hides the secrets of a connection URL so it can appear in an error line:
 * the password of the userinfo, whatever its shape (`user:pw@`, `:pw@`, an
 * encoded or even a raw `@` or `:` inside it), and password query parameters.
 * WHATWG's parser finds the userinfo as a client would. When it cannot parse
 * the URL, or leaves an `@` outside the userinfo (a raw `/`, `?` or `#` inside
 * a password moves the end of the authority), everything between `//` and the
 * last `@` is hidden: too much hidden in an error line costs nothing, one
 * character too few leaks.
 */
export function redactUrl(raw: string): string {
  let url: URL | null = null
  try {
    url = new URL(raw)
  } catch {
    // Not a URL: the fallback below.
  }
  const strayAt = url !== null && (url.username === '' && url.password === '' ? raw.includes('@') : `${url.pathname}${url.search}${url.hash}`.includes('@'))
  if (url === null || strayAt) return hideUserinfo(raw).replace(SECRET_PARAM_IN_TEXT, '$1***')
  if (url.password !== '') url.password = '***'
  for (const name of new Set(url.searchParams.keys())) {
    if (SECRET_PARAM.test(name)) url.searchParams.set(name, '***')
  }
  return url.href
}

/** Everything between the `//` (else the scheme's colon) and the last `@` becomes `***`. */
function hideUserinfo(raw: string): string {
  const at = raw.lastIndexOf('@')
  if (at < 0) return raw
  const slashes = raw.indexOf('//')
  const scheme = /^[a-z][a-z0-9+.-]*:/i.exec(raw)
  const start = slashes >= 0 && slashes < at ? slashes + 2 : scheme ? scheme[0].length : 0
  return `${raw.slice(0, start)}***${raw.slice(at)}`
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

  const uploadLimits = {
    thumbnail: withDefault('PACKS_MAX_THUMBNAIL_SIZE', (r) => parseSize('PACKS_MAX_THUMBNAIL_SIZE', r), DEFAULT_UPLOAD_LIMITS.thumbnail),
    media: withDefault('PACKS_MAX_MEDIA_SIZE', (r) => parseSize('PACKS_MAX_MEDIA_SIZE', r), DEFAULT_UPLOAD_LIMITS.media),
    version: withDefault('PACKS_MAX_VERSION_SIZE', (r) => parseSize('PACKS_MAX_VERSION_SIZE', r), DEFAULT_UPLOAD_LIMITS.version),
  }
  const userQuotas: UserQuotas = {
    pendingUploadBytes: withDefault('PACKS_PENDING_UPLOAD_QUOTA', (r) => parseSize('PACKS_PENDING_UPLOAD_QUOTA', r), 2 * 1024 ** 3),
    pendingUploads: withDefault('PACKS_MAX_PENDING_UPLOADS', (r) => parsePositiveInt('PACKS_MAX_PENDING_UPLOADS', r), 500),
    drafts: withDefault('PACKS_MAX_DRAFTS', (r) => parsePositiveInt('PACKS_MAX_DRAFTS', r), 100),
  }
  const largestUpload = Math.max(...Object.values(uploadLimits))
  if (userQuotas.pendingUploadBytes < largestUpload) {
    // Then a file within its kind's limit could never be uploaded: surely a mistake.
    throw new ConfigError(`PACKS_PENDING_UPLOAD_QUOTA: ${userQuotas.pendingUploadBytes} bytes is less than the largest upload limit (${largestUpload} bytes)`)
  }

  const timeouts = timeoutsFrom(get)
  const storageUrl = withDefault('STORAGE_URL', parseStorageUrl, `file:${path.join(dataDir, 'files')}`)
  return {
    host: get('HOST') ?? '127.0.0.1',
    port: withDefault('PORT', parsePort, 8000),
    dataDir,
    masterPassword: env.PACKS_MASTER_PASSWORD ? env.PACKS_MASTER_PASSWORD : null,
    databaseUrl: withDefault('DATABASE_URL', parseDatabaseUrl, `sqlite:${path.join(dataDir, 'packs.db')}`),
    storageUrl,
    redisUrl: get('REDIS_URL') ?? null,
    baseUrl: withDefault('PACKS_BASE_URL', parseBaseUrl, null),
    uploadLimits,
    userQuotas,
    draftBodyLimit: 256 * 1024,
    pendingUploadTtlMs: withDefault('PACKS_UPLOAD_TTL', (r) => parseDuration('PACKS_UPLOAD_TTL', r), 24 * 3_600_000),
    draftTtlMs: withDefault('PACKS_DRAFT_TTL', (r) => parseDuration('PACKS_DRAFT_TTL', r), 30 * 86_400_000),
    sweepIntervalMs: withDefault('PACKS_SWEEP_INTERVAL', (r) => parseDuration('PACKS_SWEEP_INTERVAL', r), 10 * 60_000),
    // S3 dates an unfinished or just-finished upload from its start: the grace must outlast the longest upload.
    orphanGraceMs: withDefault('PACKS_ORPHAN_GRACE', (r) => parseDuration('PACKS_ORPHAN_GRACE', r), Math.max(3_600_000, timeouts.uploadMs + 600_000)),
    statsCacheMs: withDefault('PACKS_STATS_CACHE', (r) => parseDuration('PACKS_STATS_CACHE', r), 20_000),
    signatureTtlMs: withDefault('PACKS_SIGNATURE_TTL', parseSignatureTtl, 3_600_000),
    sessionTtlMs: withDefault('PACKS_SESSION_TTL', (r) => parseDuration('PACKS_SESSION_TTL', r), 14 * 86_400_000),
    authFailureLimit: withDefault('PACKS_AUTH_FAILURE_LIMIT', (r) => parsePositiveInt('PACKS_AUTH_FAILURE_LIMIT', r), 10),
    authFailureWindowMs: withDefault('PACKS_AUTH_FAILURE_WINDOW', (r) => parseDuration('PACKS_AUTH_FAILURE_WINDOW', r), 15 * 60_000),
    passwordHashCost: withDefault('PACKS_PASSWORD_HASH_COST', parseHashCost, DEFAULT_PASSWORD_HASH_COST),
    trustProxy: withDefault('PACKS_TRUST_PROXY', parseTrustProxy, false),
    logLevel: get('LOG_LEVEL') ?? 'info',
    accessLog: withDefault('PACKS_ACCESS_LOG', parseOnOff('PACKS_ACCESS_LOG'), true),
    webConcurrency: withDefault('WEB_CONCURRENCY', (r) => parseWorkers(r), 1),
    timeouts,
    webhooks: {
      allowHttp: withDefault('PACKS_WEBHOOK_ALLOW_HTTP', parseOnOff('PACKS_WEBHOOK_ALLOW_HTTP'), false),
      allowHosts: withDefault('PACKS_WEBHOOK_ALLOW_HOSTS', parseHostList, new Set<string>()),
    },
    fileDelivery: fileDeliveryFrom(get, storageUrl),
    metricsToken: withDefault('PACKS_METRICS_TOKEN', parseMetricsToken, null),
  }
}

/** The shortest scrape token accepted: 32 random characters are beyond guessing, so wrong ones need no counting. */
export const MIN_METRICS_TOKEN_LENGTH = 32

/**
 * PACKS_METRICS_TOKEN: printable ASCII without spaces (it travels as `Authorization: Bearer <token>`), at least
 * MIN_METRICS_TOKEN_LENGTH characters. The error line never repeats the value: it is a secret.
 */
function parseMetricsToken(raw: string): string {
  if (!/^[\x21-\x7e]+$/.test(raw)) {
    throw new ConfigError('PACKS_METRICS_TOKEN: must be printable ASCII without spaces (it is sent as "Authorization: Bearer <token>"); make one with: openssl rand -hex 32')
  }
  if (raw.length < MIN_METRICS_TOKEN_LENGTH) {
    throw new ConfigError(`PACKS_METRICS_TOKEN: ${raw.length} characters is shorter than ${MIN_METRICS_TOKEN_LENGTH}; make one with: openssl rand -hex 32`)
  }
  return raw
}

/** nginx's X-Accel-Redirect prefix: a path of plain segments between slashes, as an nginx `location` names it. */
const ACCEL_PREFIX = /^\/(?:[A-Za-z0-9_~-][A-Za-z0-9._~-]*\/)+$/

/** The longest a presigned link may live: SigV4's limit (X-Amz-Expires at most 604800 s). */
const MAX_S3_REDIRECT_SECONDS = 7 * 86_400

/**
 * PACKS_ACCEL_REDIRECT, PACKS_S3_REDIRECT and PACKS_S3_REDIRECT_TTL. Each applies to one kind of store, and
 * a setting the store cannot use is refused rather than ignored: left unnoticed, it would have the site
 * stream every download itself while the operator believes nginx or the store does.
 */
function fileDeliveryFrom(get: (name: string) => string | undefined, storageUrl: string): FileDelivery {
  const onDisk = storageUrl.startsWith('file:')
  const accel = get('PACKS_ACCEL_REDIRECT')
  if (accel !== undefined && !ACCEL_PREFIX.test(accel)) {
    throw new ConfigError(`PACKS_ACCEL_REDIRECT: "${accel.slice(0, 80)}" is not a path prefix such as /_packs_files/ (segments of letters, digits, . _ ~ -, starting and ending with /)`)
  }
  if (accel !== undefined && !onDisk) {
    throw new ConfigError('PACKS_ACCEL_REDIRECT: nginx can send only files on this machine\'s disk (STORAGE_URL=file:...); with an s3:// store, PACKS_S3_REDIRECT=on lets the store send them')
  }
  const redirect = get('PACKS_S3_REDIRECT')
  const s3Redirect = redirect === undefined ? false : parseOnOff('PACKS_S3_REDIRECT')(redirect)
  if (s3Redirect && onDisk) {
    throw new ConfigError('PACKS_S3_REDIRECT: the files are on this machine\'s disk (STORAGE_URL=file:...), not in an object store; behind nginx, PACKS_ACCEL_REDIRECT lets nginx send them')
  }
  const ttl = get('PACKS_S3_REDIRECT_TTL')
  if (ttl !== undefined && !s3Redirect) throw new ConfigError('PACKS_S3_REDIRECT_TTL: set, but PACKS_S3_REDIRECT is not on')
  let seconds = 300
  if (ttl !== undefined) {
    const ms = parseDuration('PACKS_S3_REDIRECT_TTL', ttl)
    if (ms % 1000 !== 0 || ms > MAX_S3_REDIRECT_SECONDS * 1000) throw new ConfigError(`PACKS_S3_REDIRECT_TTL: "${ttl}" must be whole seconds, from 1s to 7d`)
    seconds = ms / 1000
  }
  return { accelRedirect: accel ?? null, s3RedirectSeconds: s3Redirect ? seconds : null }
}

/** A comma-separated list of host names or IP addresses (a name may not carry a port, a path or a wildcard). */
function parseHostList(raw: string): ReadonlySet<string> {
  const hosts = raw.split(',').map((h) => h.trim().toLowerCase()).filter((h) => h !== '')
  for (const host of hosts) {
    const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host
    if (isIP(bare) === 0 && !/^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/.test(bare)) {
      throw new ConfigError(`PACKS_WEBHOOK_ALLOW_HOSTS: "${host.slice(0, 80)}" is not a host name or an IP address`)
    }
  }
  return new Set(hosts.map((h) => (h.startsWith('[') && h.endsWith(']') ? h.slice(1, -1) : h)))
}

/** on/off (also true/false, 1/0, yes/no). */
function parseOnOff(name: string): (raw: string) => boolean {
  return (raw) => {
    const value = raw.trim().toLowerCase()
    if (['on', 'true', '1', 'yes'].includes(value)) return true
    if (['off', 'false', '0', 'no'].includes(value)) return false
    throw new ConfigError(`${name}: "${raw.slice(0, 40)}" is not on or off`)
  }
}

/**
 * scrypt's N: 2^15 (32 MiB and ~0.1 s a hash with r=8) unless set. Below 2^10
 * a hash is no protection; above 2^20 (1 GiB a hash) a few sign-ins would
 * exhaust the memory. Tests lower it to 2^10.
 */
export const DEFAULT_PASSWORD_HASH_COST = 2 ** 15
const MIN_PASSWORD_HASH_COST = 2 ** 10
const MAX_PASSWORD_HASH_COST = 2 ** 20

function parseHashCost(raw: string): number {
  const cost = /^\d{1,8}$/.test(raw) ? Number(raw) : 0
  // A power of two has a single bit set.
  if (cost < MIN_PASSWORD_HASH_COST || cost > MAX_PASSWORD_HASH_COST || (cost & (cost - 1)) !== 0) {
    throw new ConfigError(`PACKS_PASSWORD_HASH_COST: "${raw}" is not a power of two from 1024 (2^10) to 1048576 (2^20); the default is 32768 (2^15)`)
  }
  return cost
}

/** WEB_CONCURRENCY: how many worker processes share the port; at most 64 (beyond the cores it only adds memory). */
function parseWorkers(raw: string): number {
  const workers = parsePositiveInt('WEB_CONCURRENCY', raw)
  if (workers > 64) throw new ConfigError(`WEB_CONCURRENCY: ${workers} workers is more than 64`)
  return workers
}

export interface Timeouts {
  /** Request line and headers (Node's headersTimeout). */
  headersMs: number
  /** The whole body of any request but an upload (JSON, forms). */
  bodyMs: number
  /** The whole of an upload, headers included (Node's requestTimeout): the longest any request may take to arrive. */
  uploadMs: number
  /** No byte either way on a connection with a request open (Node's socket timeout): a stalled upload ends here. */
  idleMs: number
  /** An idle keep-alive connection between requests; above a reverse proxy's own (nginx: 60 s), or it may reuse one being closed. */
  keepAliveMs: number
}

/** A signed answer's lifetime: at least a minute (clients allow a minute of clock skew), at most a week. */
function parseSignatureTtl(raw: string): number {
  const ms = parseDuration('PACKS_SIGNATURE_TTL', raw)
  if (ms < 60_000 || ms > 7 * 86_400_000) throw new ConfigError(`PACKS_SIGNATURE_TTL: "${raw}" must be from 1m to 7d`)
  return ms
}

/** Node's timers take at most 2^31 - 1 ms (about 24.8 days); a longer one would fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1

/** Deadlines for slow clients (src/http/timeouts.ts applies them). */
function timeoutsFrom(get: (name: string) => string | undefined): Timeouts {
  const duration = (name: string, fallback: number): number => {
    const raw = get(name)
    const ms = raw === undefined ? fallback : parseDuration(name, raw)
    if (ms > MAX_TIMER_MS) throw new ConfigError(`${name}: "${raw}" is longer than 24 days`)
    return ms
  }
  const timeouts: Timeouts = {
    headersMs: duration('PACKS_HEADERS_TIMEOUT', 15_000),
    bodyMs: duration('PACKS_BODY_TIMEOUT', 30_000),
    uploadMs: duration('PACKS_UPLOAD_TIMEOUT', 3_600_000),
    idleMs: duration('PACKS_IDLE_TIMEOUT', 60_000),
    keepAliveMs: duration('PACKS_KEEPALIVE_TIMEOUT', 65_000),
  }
  // The upload deadline bounds every request (headers included), so the others must fit inside it.
  if (timeouts.headersMs > timeouts.uploadMs) throw new ConfigError('PACKS_HEADERS_TIMEOUT: longer than PACKS_UPLOAD_TIMEOUT, which bounds every request')
  if (timeouts.bodyMs > timeouts.uploadMs) throw new ConfigError('PACKS_BODY_TIMEOUT: longer than PACKS_UPLOAD_TIMEOUT, which bounds every request')
  return timeouts
}
