// A node:test reporter for scripts/run-tests.js: one JSON line per test file
// that a job's process ran (scripts/test-batch.js wraps each file in a suite
// named after it), with its counts as node's own summary counts them (suites
// apart; a test skipped or cancelled because its suite's hook failed counts
// once), its skipped tests and the names of its failed ones. The readable
// output is the spec reporter's, which runs beside this one.

function emptyCounts(file) {
  return { file, tests: 0, pass: 0, fail: 0, cancelled: 0, skipped: 0, todo: 0, skips: [], failures: [], seconds: 0 }
}

export default async function* reporter(source) {
  const files = new Map()
  const names = []
  for await (const event of source) {
    const data = event.data
    if (event.type === 'test:start') {
      names[data.nesting] = data.name
      continue
    }
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue
    const file = data.nesting === 0 ? data.name : names[0]
    if (!files.has(file)) files.set(file, emptyCounts(file))
    const counts = files.get(file)
    const error = data.details?.error
    const label = [...names.slice(1, data.nesting), data.name].join(' › ')
    if (data.nesting === 0) {
      // The file's own suite: its tests are counted; what fails at this level is the file itself
      // (it could not be imported, or a top-level hook failed).
      counts.seconds = (data.details?.duration_ms ?? 0) / 1000
      if (event.type === 'test:fail' && error?.failureType !== 'subtestsFailed') {
        counts.fail++
        counts.failures.push(error?.failureType === 'hookFailed' ? 'a top-level hook' : 'loading the file')
      }
      yield `${JSON.stringify(counts)}\n`
      continue
    }
    if (data.details?.type === 'suite') {
      // A suite's hook failure shows as its tests' cancellation; named here so the summary says where.
      if (event.type === 'test:fail' && error?.failureType === 'hookFailed') counts.failures.push(`${label} (hook)`)
      continue
    }
    counts.tests++
    if (data.skip !== undefined && data.skip !== false) {
      counts.skipped++
      counts.skips.push(`${label}${typeof data.skip === 'string' ? ` (${data.skip})` : ''}`)
    } else if (data.todo !== undefined && data.todo !== false) {
      counts.todo++
    } else if (event.type === 'test:pass') {
      counts.pass++
    } else if (error?.failureType === 'cancelledByParent') {
      counts.cancelled++
      counts.failures.push(`${label} (cancelled)`)
    } else {
      counts.fail++
      counts.failures.push(label)
    }
  }
}
