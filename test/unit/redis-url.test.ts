// REDIS_URL is checked before any connection is tried. The Redis adapters
// themselves are test/backends/redis.test.ts.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ConfigError } from '../../src/config/index.js'
import { openRedis } from '../../src/shared-state/redis.js'

test('a URL that is not redis:// is a ConfigError that hides the password', async () => {
  await assert.rejects(openRedis('http://user:secret@host'), (error: Error) => {
    assert.ok(error instanceof ConfigError)
    assert.equal(error.message, 'REDIS_URL: "http://user:***@host/" must be redis://[user:password@]host[:port][/db] or rediss://...')
    return true
  })
})
