// The process scripts/run-tests.js starts for a job: runs the test files given
// on the command line in this one process (node's test runner, on the
// compiled build of test/ in dist/test/ that the runner made with
// scripts/build-server.js), so a batch of small files pays node's start and
// the app's module loading (a second or more of CPU) once instead of once per
// file.
//
//   node scripts/test-batch.js test/http/a.test.ts test/http/b.test.ts
//
// Each file is imported inside a suite named after it (its source path): the
// tests and hooks it declares at its top level become that suite's (node:test
// follows the async context of the import), so its after() hooks run when its
// own tests are done and the suites run one after another, as the files would
// alone. A file that cannot be imported fails its suite and the next file
// still runs.
import { describe } from 'node:test'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')

for (const file of process.argv.slice(2)) {
  describe(file, async () => {
    await import(pathToFileURL(path.join(ROOT, 'dist', file.replace(/\.ts$/, '.js'))).href)
  })
}
