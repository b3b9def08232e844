// Temporary directories for tests, removed when the test process exits (whatever the test's own cleanup
// did or did not get to: a failed assertion skips it). The test runner also gives each job a TMPDIR of its
// own and fails the job when something is left there (scripts/run-tests.js), so `npm test` leaves nothing
// in the machine's temp directory.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'

const made = new Set<string>()
process.once('exit', () => {
  for (const dir of made) fs.rmSync(dir, { recursive: true, force: true })
})

/** A new empty directory under the temp directory, named `<prefix>XXXXXX`; gone when this process exits. */
export function tempDir(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix))
  made.add(dir)
  return dir
}
