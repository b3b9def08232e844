// Bundles packages/packs-sync/src/ into one ES module, packages/packs-sync/dist/packs-sync.js,
// which its bin runs: no TypeScript loader and no dependencies where it is installed.
import { build } from 'esbuild'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const PACKAGE = path.join(ROOT, 'packages', 'packs-sync')

export async function buildSync() {
  await build({
    entryPoints: [path.join(PACKAGE, 'src', 'cli.ts')],
    outfile: path.join(PACKAGE, 'dist', 'packs-sync.js'),
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    sourcemap: true,
    logLevel: 'warning',
  })
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await buildSync()
