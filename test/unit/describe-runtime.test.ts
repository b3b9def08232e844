// The start-up line's words and warnings, for each shape the configuration can take (the processes that
// print them are in test/e2e/production-start.test.ts).
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { loadConfig } from '../../src/config/index.js'
import { describeRuntime } from '../../src/config/describe.js'

describe('describeRuntime', () => {
  test('one machine: SQLite, local disk, this process, one worker; no warning', () => {
    const runtime = describeRuntime(loadConfig({ PACKS_DATA_DIR: '/srv/packs' }))
    assert.deepEqual(runtime.fields, {
      database: 'SQLite /srv/packs/packs.db',
      storage: 'local disk /srv/packs/files',
      sharedState: 'this process (no REDIS_URL)',
      workers: 1,
    })
    assert.equal(runtime.message, 'packs: running on database SQLite /srv/packs/packs.db, storage local disk /srv/packs/files, shared state this process (no REDIS_URL), 1 worker')
    assert.deepEqual(runtime.warnings, [])
  })

  test('scaled out: every secret in the three URLs is hidden, and the shapes match', () => {
    const runtime = describeRuntime(loadConfig({
      DATABASE_URL: 'postgres://packs:db-secret@db.internal:5432/packs',
      STORAGE_URL: 's3://packs-files?endpoint=https://s3.example.org&region=eu-1',
      REDIS_URL: 'redis://:redis-secret@cache.internal:6379/2',
      WEB_CONCURRENCY: '3',
    }))
    const text = JSON.stringify(runtime)
    // S3 credentials come from AWS_* variables only (an unknown STORAGE_URL parameter stops start-up).
    for (const secret of ['db-secret', 'redis-secret']) assert.ok(!text.includes(secret), `${secret} hidden`)
    assert.equal(runtime.fields.database, 'PostgreSQL postgres://packs:***@db.internal:5432/packs')
    assert.match(runtime.fields.storage, /^S3 s3:\/\/packs-files\?endpoint=https(:|%3A)/)
    assert.equal(runtime.fields.sharedState, 'Redis redis://:***@cache.internal:6379/2')
    assert.match(runtime.message, /, 3 workers$/)
    assert.deepEqual(runtime.warnings, [])
  })

  test('PostgreSQL with local files (an env file lost STORAGE_URL) and without Redis: two warnings', () => {
    const runtime = describeRuntime(loadConfig({ DATABASE_URL: 'postgres://packs@db/packs', PACKS_DATA_DIR: '/srv/packs' }))
    assert.equal(runtime.warnings.length, 2)
    assert.match(runtime.warnings[0] ?? '', /shared \(PostgreSQL\) but files are on this machine's disk \(\/srv\/packs\/files\).*STORAGE_URL=s3/)
    assert.match(runtime.warnings[1] ?? '', /shared \(PostgreSQL\) but REDIS_URL is unset/)
    for (const warning of runtime.warnings) assert.ok(!warning.includes('\n'), 'one line')
  })

  test('SQLite with an object store is one machine offloading its bytes: no warning', () => {
    const runtime = describeRuntime(loadConfig({ STORAGE_URL: 's3://b?endpoint=http://127.0.0.1:9000&region=x' }))
    assert.deepEqual(runtime.warnings, [])
  })
})
