#!/usr/bin/env node
// The packs-sync command: runs the bundle built from src/ (`npm run build` at the repository's root).
import fs from 'node:fs'

const bundle = new URL('../dist/packs-sync.js', import.meta.url)
if (!fs.existsSync(bundle)) {
  process.stderr.write('packs-sync: not built yet: run `npm run build` at the repository root first\n')
  process.exit(2)
}
await import(bundle.href)
