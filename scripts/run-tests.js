// Runs every test file under test/ with Node's test runner (tsx for TypeScript).
// Node 20's runner does not expand globs itself, so the files are listed here.
import { spawnSync } from 'node:child_process'
import { readdirSync } from 'node:fs'
import path from 'node:path'

const only = process.argv.slice(2)
const files = readdirSync('test', { recursive: true })
  .filter((file) => file.endsWith('.test.ts'))
  .map((file) => path.join('test', file))
  .filter((file) => only.length === 0 || only.some((part) => file.includes(part)))
  .sort()

if (files.length === 0) {
  console.error('no test files matched')
  process.exit(1)
}

const args = ['--import', 'tsx', '--test', '--test-reporter=spec', '--test-reporter-destination=stdout']
const result = spawnSync(process.execPath, [...args, ...files], { stdio: 'inherit' })
process.exit(result.status ?? 1)
