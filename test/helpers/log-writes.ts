// The log sink's writes, watched (test/unit/log-sink.test.ts, test/e2e/access-log.test.ts).
import assert from 'node:assert/strict'
import fs from 'node:fs'
import { mock } from 'node:test'

/** Records the length of every fs.write from now on, checking that each ends with a whole line. Undone by mock.restoreAll(). */
export function recordWrites(): number[] {
  const writes: number[] = []
  const original = fs.write
  mock.method(fs, 'write', (...args: unknown[]) => {
    const [, buffer, offset, length] = args as [number, Buffer, number, number]
    writes.push(length)
    assert.equal(buffer.subarray(offset, offset + length).at(-1), 0x0a, 'a write ends with a whole line')
    return (original as (...a: unknown[]) => void)(...args)
  })
  return writes
}
