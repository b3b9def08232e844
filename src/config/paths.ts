// Where the project's own files are. The server runs from its TypeScript
// source (tsx: src/config/paths.ts) or from the compiled build
// (dist/src/config/paths.js, scripts/build-server.js), which sit at different
// depths, so the root is found, not counted: the nearest folder above this
// module that holds package.json (dist/ holds none).
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

function findProjectRoot(): string {
  const here = path.dirname(fileURLToPath(import.meta.url))
  for (let dir = here; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return dir
    if (path.dirname(dir) === dir) throw new Error(`no package.json above ${here}`)
  }
}

/** The folder holding package.json, src/ and dist/. */
export const PROJECT_ROOT = findProjectRoot()
