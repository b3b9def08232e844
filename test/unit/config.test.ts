import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import path from 'node:path'
import { ConfigError, loadConfig, parseDuration, parseSize, redactUrl } from '../../src/config/index.js'

/** Asserts that loading `env` fails with one ConfigError line naming `variable`. */
function rejects(env: Record<string, string>, variable: string): void {
  assert.throws(() => loadConfig(env), (error: unknown) => {
    assert.ok(error instanceof ConfigError, `ConfigError expected, got ${String(error)}`)
    assert.ok(error.message.startsWith(`${variable}:`), `message names ${variable}: ${error.message}`)
    assert.ok(!error.message.includes('\n'), 'one line')
    return true
  })
}

describe('loadConfig', () => {
  test('defaults: works with an empty environment', () => {
    const config = loadConfig({})
    const dataDir = path.resolve('./data')
    assert.equal(config.host, '127.0.0.1')
    assert.equal(config.port, 8000)
    assert.equal(config.dataDir, dataDir)
    assert.equal(config.masterPassword, null)
    assert.equal(config.databaseUrl, `sqlite:${path.join(dataDir, 'packs.db')}`)
    assert.equal(config.storageUrl, `file:${path.join(dataDir, 'files')}`)
    assert.equal(config.redisUrl, null)
    assert.equal(config.baseUrl, null)
    assert.deepEqual(config.uploadLimits, { thumbnail: 5 * 1024 ** 2, media: 100 * 1024 ** 2, version: 500 * 1024 ** 2 })
    assert.equal(config.draftBodyLimit, 256 * 1024)
    assert.equal(config.pendingUploadTtlMs, 24 * 3_600_000)
    assert.equal(config.statsCacheMs, 20_000)
    assert.equal(config.trustProxy, false)
  })

  test('the data directory places the database and the files', () => {
    const config = loadConfig({ PACKS_DATA_DIR: '/srv/packs' })
    assert.equal(config.databaseUrl, 'sqlite:/srv/packs/packs.db')
    assert.equal(config.storageUrl, 'file:/srv/packs/files')
  })

  test('blank values count as unset', () => {
    const config = loadConfig({ PORT: '  ', PACKS_BASE_URL: '', PACKS_MASTER_PASSWORD: '' })
    assert.equal(config.port, 8000)
    assert.equal(config.baseUrl, null)
    assert.equal(config.masterPassword, null)
  })

  test('PORT must be a port number', () => {
    assert.equal(loadConfig({ PORT: '9090' }).port, 9090)
    assert.equal(loadConfig({ PORT: '0' }).port, 0)
    for (const bad of ['abc', '80a', '-1', '65536', '8000.5']) rejects({ PORT: bad }, 'PORT')
  })

  test('DATABASE_URL must be sqlite:<path> or postgres://', () => {
    assert.equal(loadConfig({ DATABASE_URL: 'sqlite:/tmp/x.db' }).databaseUrl, 'sqlite:/tmp/x.db')
    assert.equal(loadConfig({ DATABASE_URL: 'postgres://u:p@db/packs' }).databaseUrl, 'postgres://u:p@db/packs')
    for (const bad of ['mysql://db/packs', 'sqlite:', 'packs.db']) rejects({ DATABASE_URL: bad }, 'DATABASE_URL')
  })

  test('a rejected DATABASE_URL does not echo its password', () => {
    assert.throws(() => loadConfig({ DATABASE_URL: 'mysql://admin:hunter2@db/packs' }), (error: Error) => {
      assert.ok(!error.message.includes('hunter2'), error.message)
      return true
    })
    assert.equal(redactUrl('postgres://admin:hunter2@db:5432/packs'), 'postgres://admin:***@db:5432/packs')
  })

  test('redactUrl hides the password in every shape of connection URL', () => {
    const cases: Array<[url: string, expected: string, secret: string]> = [
      ['redis://:hunter2@cache:6379/0', 'redis://:***@cache:6379/0', 'hunter2'],
      ['rediss://default:hunter2@cache', 'rediss://default:***@cache', 'hunter2'],
      ['postgres://admin:hun%40ter%3A2@db/packs', 'postgres://admin:***@db/packs', 'hun%40ter%3A2'],
      // Raw @ and : inside the password: the parser takes the last @ as the end of the userinfo, as clients do.
      ['postgresql://admin:hun@ter:2@db:5432/packs', 'postgresql://admin:***@db:5432/packs', 'ter:2'],
      ['postgres://db/packs?sslmode=require&password=hunter2', 'postgres://db/packs?sslmode=require&password=***', 'hunter2'],
      // A raw / in the password: not parseable, or parsed with the @ left in the path; all before the last @ goes.
      ['postgres://admin:hun/ter2@db:5432/packs', 'postgres://***@db:5432/packs', 'ter2'],
      ['redis://admin:123/hunter2@cache', 'redis://***@cache', 'hunter2'],
      ['postgres://admin:p@x/hunter2@db/packs', 'postgres://***@db/packs', 'hunter2'],
      ['redis:hunter2@cache', 'redis:***@cache', 'hunter2'],
    ]
    for (const [url, expected, secret] of cases) {
      const redacted = redactUrl(url)
      assert.equal(redacted, expected, url)
      assert.ok(!redacted.includes(secret), `${url} -> ${redacted}`)
    }
    // Nothing secret: unchanged.
    for (const url of ['redis://cache:6379', 'postgres://admin@db/packs', 'sqlite:/var/lib/packs.db']) assert.equal(redactUrl(url), url)
  })

  test('a rejected STORAGE_URL does not echo its password', () => {
    assert.throws(() => loadConfig({ STORAGE_URL: 'ftp://admin:hunter2@files' }), (error: Error) => {
      assert.ok(error.message.startsWith('STORAGE_URL:') && !error.message.includes('hunter2'), error.message)
      return true
    })
  })

  test('STORAGE_URL must be file:<dir> or s3://<bucket>', () => {
    assert.equal(loadConfig({ STORAGE_URL: 's3://bucket?region=eu' }).storageUrl, 's3://bucket?region=eu')
    for (const bad of ['file:', 'ftp://x', 's3://']) rejects({ STORAGE_URL: bad }, 'STORAGE_URL')
  })

  test('sizes take binary units', () => {
    const config = loadConfig({ PACKS_MAX_THUMBNAIL_SIZE: '5MiB', PACKS_MAX_MEDIA_SIZE: '1 GB', PACKS_MAX_VERSION_SIZE: '1048576' })
    assert.deepEqual(config.uploadLimits, { thumbnail: 5 * 1024 ** 2, media: 1024 ** 3, version: 1024 ** 2 })
    assert.equal(parseSize('X', '1.5k'), 1536)
    assert.equal(parseSize('X', '10kib'), 10240)
    for (const bad of ['five', '5 PB', '0', '-5MiB', '']) rejects({ PACKS_MAX_MEDIA_SIZE: bad || 'x' }, 'PACKS_MAX_MEDIA_SIZE')
  })

  test('durations take ms, s, m, h, d', () => {
    assert.equal(parseDuration('X', '500ms'), 500)
    assert.equal(parseDuration('X', '90s'), 90_000)
    assert.equal(parseDuration('X', '10m'), 600_000)
    assert.equal(parseDuration('X', '1.5h'), 5_400_000)
    assert.equal(parseDuration('X', '30d'), 30 * 86_400_000)
    const config = loadConfig({ PACKS_STATS_CACHE: '50ms', PACKS_UPLOAD_TTL: '2h', PACKS_DRAFT_TTL: '7d' })
    assert.equal(config.statsCacheMs, 50)
    assert.equal(config.pendingUploadTtlMs, 7_200_000)
    assert.equal(config.draftTtlMs, 7 * 86_400_000)
    for (const bad of ['20', '20 sec', '0s', 'soon']) rejects({ PACKS_STATS_CACHE: bad }, 'PACKS_STATS_CACHE')
  })

  test('PACKS_SIGNATURE_TTL: how long a signed answer may be trusted, an hour by default, from a minute to a week', () => {
    assert.equal(loadConfig({}).signatureTtlMs, 3_600_000)
    assert.equal(loadConfig({ PACKS_SIGNATURE_TTL: '10m' }).signatureTtlMs, 600_000)
    assert.equal(loadConfig({ PACKS_SIGNATURE_TTL: '7d' }).signatureTtlMs, 7 * 86_400_000)
    for (const bad of ['59s', '8d', 'soon']) rejects({ PACKS_SIGNATURE_TTL: bad }, 'PACKS_SIGNATURE_TTL')
  })

  test('PACKS_BASE_URL: an http(s) origin, trailing slash stripped', () => {
    assert.equal(loadConfig({ PACKS_BASE_URL: 'https://packs.example.org/' }).baseUrl, 'https://packs.example.org')
    assert.equal(loadConfig({ PACKS_BASE_URL: 'https://packs.example.org' }).baseUrl, 'https://packs.example.org')
    assert.equal(loadConfig({ PACKS_BASE_URL: 'http://example.org/packs//' }).baseUrl, 'http://example.org/packs')
    for (const bad of ['packs.example.org', 'ftp://example.org', 'not a url']) rejects({ PACKS_BASE_URL: bad }, 'PACKS_BASE_URL')
  })

  test('PACKS_TRUST_PROXY: a list of proxy addresses, CIDR ranges and range names', () => {
    assert.equal(loadConfig({}).trustProxy, false)
    assert.equal(loadConfig({ PACKS_TRUST_PROXY: 'false' }).trustProxy, false)
    assert.deepEqual(loadConfig({ PACKS_TRUST_PROXY: '10.0.0.0/8' }).trustProxy, ['10.0.0.0/8'])
    assert.deepEqual(loadConfig({ PACKS_TRUST_PROXY: '127.0.0.1, 10.0.0.0/8,::1,fd00::/8,loopback' }).trustProxy,
      ['127.0.0.1', '10.0.0.0/8', '::1', 'fd00::/8', 'loopback'])
    for (const bad of ['yes', '1', '10.0.0.0/33', '::/129', '10.0.0.0/8/8', '10.0.0.256', '127.0.0.1,,10.0.0.1', 'localhost', '10.0.0.0/x']) {
      rejects({ PACKS_TRUST_PROXY: bad }, 'PACKS_TRUST_PROXY')
    }
  })

  test('PACKS_TRUST_PROXY=true (or a /0 range) is refused with one line that says what to set instead', () => {
    for (const anyone of ['true', 'TRUE', '0.0.0.0/0', '::/0', '127.0.0.1,0.0.0.0/0']) {
      rejects({ PACKS_TRUST_PROXY: anyone }, 'PACKS_TRUST_PROXY')
      assert.throws(() => loadConfig({ PACKS_TRUST_PROXY: anyone }), /any client choose its address.*list the proxy addresses instead/)
    }
    assert.throws(() => loadConfig({ PACKS_TRUST_PROXY: 'true' }), /e\.g\. PACKS_TRUST_PROXY=127\.0\.0\.1,10\.0\.0\.0\/8$/)
  })

  test('PACKS_AUTH_FAILURE_LIMIT', () => {
    assert.equal(loadConfig({ PACKS_AUTH_FAILURE_LIMIT: '3' }).authFailureLimit, 3)
    rejects({ PACKS_AUTH_FAILURE_LIMIT: '0' }, 'PACKS_AUTH_FAILURE_LIMIT')
  })

  test('PACKS_PASSWORD_HASH_COST: scrypt\'s N, a power of two from 2^10 to 2^20, 2^15 by default', () => {
    assert.equal(loadConfig({}).passwordHashCost, 32768)
    assert.equal(loadConfig({ PACKS_PASSWORD_HASH_COST: '1024' }).passwordHashCost, 1024)
    assert.equal(loadConfig({ PACKS_PASSWORD_HASH_COST: '1048576' }).passwordHashCost, 2 ** 20)
    for (const bad of ['512', '1000', '2097152', '0', '-1024', '1e4', 'high', '99999999999999999999']) {
      rejects({ PACKS_PASSWORD_HASH_COST: bad }, 'PACKS_PASSWORD_HASH_COST')
    }
    assert.throws(() => loadConfig({ PACKS_PASSWORD_HASH_COST: '1000' }), /"1000" is not a power of two from 1024 \(2\^10\) to 1048576 \(2\^20\)/)
  })
})

describe('WEB_CONCURRENCY', () => {
  test('one process by default; a positive count of workers, at most 64', () => {
    assert.equal(loadConfig({}).webConcurrency, 1)
    assert.equal(loadConfig({ WEB_CONCURRENCY: '4' }).webConcurrency, 4)
    rejects({ WEB_CONCURRENCY: '0' }, 'WEB_CONCURRENCY')
    rejects({ WEB_CONCURRENCY: 'two' }, 'WEB_CONCURRENCY')
    rejects({ WEB_CONCURRENCY: '65' }, 'WEB_CONCURRENCY')
  })
})

describe('PACKS_ACCEL_REDIRECT, PACKS_S3_REDIRECT, PACKS_S3_REDIRECT_TTL', () => {
  const s3 = 's3://packs-files?endpoint=http://127.0.0.1:9000&region=us-east-1'

  test('off by default: this process sends every download', () => {
    assert.deepEqual(loadConfig({}).fileDelivery, { accelRedirect: null, s3RedirectSeconds: null })
    assert.deepEqual(loadConfig({ STORAGE_URL: s3 }).fileDelivery, { accelRedirect: null, s3RedirectSeconds: null })
    assert.deepEqual(loadConfig({ PACKS_S3_REDIRECT: 'off' }).fileDelivery, { accelRedirect: null, s3RedirectSeconds: null })
  })

  test('PACKS_ACCEL_REDIRECT: the prefix of an nginx location, for files on this machine\'s disk only', () => {
    assert.equal(loadConfig({ PACKS_ACCEL_REDIRECT: '/_packs_files/' }).fileDelivery.accelRedirect, '/_packs_files/')
    assert.equal(loadConfig({ PACKS_ACCEL_REDIRECT: '/internal/files.v2/' }).fileDelivery.accelRedirect, '/internal/files.v2/')
    for (const bad of ['_packs_files/', '/_packs_files', '/', '//x/', '/a/../b/', '/./', '/files?x/', '/a b/', 'http://x/']) {
      rejects({ PACKS_ACCEL_REDIRECT: bad }, 'PACKS_ACCEL_REDIRECT')
    }
    rejects({ PACKS_ACCEL_REDIRECT: '/_packs_files/', STORAGE_URL: s3 }, 'PACKS_ACCEL_REDIRECT')
  })

  test('PACKS_S3_REDIRECT: on for an object store only; its links live 5 minutes, or PACKS_S3_REDIRECT_TTL (whole seconds, 1s to 7d)', () => {
    assert.equal(loadConfig({ STORAGE_URL: s3, PACKS_S3_REDIRECT: 'on' }).fileDelivery.s3RedirectSeconds, 300)
    assert.equal(loadConfig({ STORAGE_URL: s3, PACKS_S3_REDIRECT: 'on', PACKS_S3_REDIRECT_TTL: '1s' }).fileDelivery.s3RedirectSeconds, 1)
    assert.equal(loadConfig({ STORAGE_URL: s3, PACKS_S3_REDIRECT: 'on', PACKS_S3_REDIRECT_TTL: '7d' }).fileDelivery.s3RedirectSeconds, 7 * 86_400)
    rejects({ PACKS_S3_REDIRECT: 'on' }, 'PACKS_S3_REDIRECT')
    rejects({ STORAGE_URL: s3, PACKS_S3_REDIRECT: 'maybe' }, 'PACKS_S3_REDIRECT')
    for (const bad of ['0s', '1500ms', '8d', 'soon']) rejects({ STORAGE_URL: s3, PACKS_S3_REDIRECT: 'on', PACKS_S3_REDIRECT_TTL: bad }, 'PACKS_S3_REDIRECT_TTL')
    // A lifetime without the redirect is a setting that would do nothing: a typo of the other name, surely.
    rejects({ STORAGE_URL: s3, PACKS_S3_REDIRECT_TTL: '5m' }, 'PACKS_S3_REDIRECT_TTL')
  })
})

describe('PACKS_METRICS_TOKEN', () => {
  test('unset: /metrics is off; else the token, 32 printable characters at least, never repeated in an error', () => {
    assert.equal(loadConfig({}).metricsToken, null)
    const token = 'a'.repeat(32)
    assert.equal(loadConfig({ PACKS_METRICS_TOKEN: token }).metricsToken, token)
    for (const bad of ['a'.repeat(31), `${'a'.repeat(16)} ${'a'.repeat(16)}`, `${'é'.repeat(32)}`]) {
      rejects({ PACKS_METRICS_TOKEN: bad }, 'PACKS_METRICS_TOKEN')
      assert.throws(() => loadConfig({ PACKS_METRICS_TOKEN: bad }), (error: Error) => !error.message.includes(bad) && /openssl rand -hex 32/.test(error.message))
    }
  })
})
