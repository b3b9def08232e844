#!/usr/bin/env node
// `npx packs …`: the admin CLI. Runs the compiled build in dist/src/ (made by
// `npm run build`, which `npm start` and `npm test` run first), the same code
// a server started by `npm start` runs. When there is no build yet (right
// after `npm ci`) or a source file changed since it was made, it runs the
// TypeScript source through tsx instead, so the CLI never runs stale code.
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')

function buildIsCurrent() {
  let built
  try {
    built = fs.statSync(path.join(root, 'dist', 'src', '.built')).mtimeMs
  } catch {
    return false
  }
  const src = path.join(root, 'src')
  return fs.readdirSync(src, { recursive: true }).every((file) => !file.endsWith('.ts') || fs.statSync(path.join(src, file)).mtimeMs <= built)
}

let main
if (buildIsCurrent()) {
  ;({ main } = await import('../dist/src/cli.js'))
} else {
  const { register } = await import('tsx/esm/api')
  register()
  ;({ main } = await import('../src/cli.ts'))
}
process.exitCode = await main(process.argv.slice(2))
