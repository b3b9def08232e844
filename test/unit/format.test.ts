// How byte counts are written (web/format.ts); ingesting an upload into a store is test/backends/ingest.test.ts.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { formatBytes } from '../../src/web/format.js'

test('limits are written exactly: whole binary units only', () => {
  assert.equal(formatBytes(5 * 1024 ** 2, 'exact'), '5 MiB')
  assert.equal(formatBytes(1024, 'exact'), '1 KiB')
  assert.equal(formatBytes(1536, 'exact'), '1536 bytes')
  assert.equal(formatBytes(500 * 1024 ** 2, 'exact'), '500 MiB')
  assert.equal(formatBytes(3 * 1024 ** 3, 'exact'), '3 GiB')
  assert.equal(formatBytes(2 * 1024 ** 4, 'exact'), '2 TiB')
  assert.equal(formatBytes((2 * 1024 ** 2 + 1) * 1024, 'exact'), '2097153 KiB')
})

test('amounts beside a limit are written to a tenth', () => {
  assert.equal(formatBytes(100 * 1024, 'tenths'), '100.0 KiB')
  assert.equal(formatBytes(1.25 * 1024 ** 3, 'tenths'), '1.3 GiB')
  assert.equal(formatBytes(1023, 'tenths'), '1023 bytes')
})
