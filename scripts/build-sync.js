// Bundles packages/packs-sync/src/ into one ES module, written under packages/packs-sync/dist/ as:
//   packs-sync.mjs       what every Packs site serves its players (GET /packs-sync/packs-sync.mjs, src/sync-client/),
//                        who run it with `node packs-sync.mjs`: one self-contained file, with no sourceMappingURL
//                        comment naming a map the player never downloaded;
//   packs-sync.js (+ .js.map)  what the checkout's bin runs (packages/packs-sync/bin/packs-sync.js): the same code,
//                        with a linked source map for whoever debugs it here.
// The code is the same bytes for the same sources wherever it is built (file paths in the bundle's comments are
// relative to the repository root, whatever the working directory), so two sites built from one commit serve one
// SHA-256, and a player can compare the hash a site shows with another site's or a fresh build's.
// Each file is written beside its final name and renamed over it: a server starting while a build runs reads the
// old bundle or the new one, never half of one.
import { build } from 'esbuild'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const PACKAGE = path.join(ROOT, 'packages', 'packs-sync')
const DIST = path.join(PACKAGE, 'dist')

/** The bundle players download, the one a site serves. */
export const SERVED_BUNDLE = path.join(DIST, 'packs-sync.mjs')

function writeAtomically(file, contents) {
  const temporary = `${file}.${process.pid}.tmp`
  fs.writeFileSync(temporary, contents)
  fs.renameSync(temporary, file)
}

export async function buildSync() {
  const result = await build({
    entryPoints: [path.join(PACKAGE, 'src', 'cli.ts')],
    outfile: path.join(DIST, 'packs-sync.js'),
    absWorkingDir: ROOT,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    // 'external' writes the map without the comment that links it; the checkout's copy gets the comment below.
    sourcemap: 'external',
    write: false,
    logLevel: 'warning',
  })
  const code = result.outputFiles.find((file) => file.path.endsWith('.js'))
  const map = result.outputFiles.find((file) => file.path.endsWith('.js.map'))
  if (!code || !map) throw new Error(`build-sync: esbuild wrote ${result.outputFiles.map((file) => file.path).join(', ')}, not the bundle and its map`)
  fs.mkdirSync(DIST, { recursive: true })
  writeAtomically(SERVED_BUNDLE, code.contents)
  writeAtomically(map.path, map.contents)
  writeAtomically(code.path, Buffer.concat([code.contents, Buffer.from(`//# sourceMappingURL=${path.basename(map.path)}\n`)]))
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await buildSync()
