// The process scripts/run-tests.js starts for a job: runs the test files given
// on the command line in this one process (node's test runner, tsx for
// TypeScript), so a batch of small files pays node's and tsx's start and the
// app's module loading (seconds of CPU) once instead of once per file.
//
//   node --import tsx scripts/test-batch.js test/http/a.test.ts test/http/b.test.ts
//
// Each file is imported inside a suite named after it: the tests and hooks it
// declares at its top level become that suite's (node:test follows the async
// context of the import), so its after() hooks run when its own tests are done
// and the suites run one after another, as the files would alone. A file that
// cannot be imported fails its suite and the next file still runs.
import { describe } from 'node:test'
import path from 'node:path'
import { pathToFileURL } from 'node:url'

for (const file of process.argv.slice(2)) {
  describe(file, async () => {
    await import(pathToFileURL(path.resolve(file)).href)
  })
}
