// Compiles the server's TypeScript (src/, without the browser bundle's
// src/web/client/) to plain ES modules under dist/src/, one .js per .ts
// beside its source map, so `npm start` and `npx packs` run node on
// JavaScript: no TypeScript loader in the process, which costs seconds of CPU
// at every start (tsx's module hooks run on a second thread in Node 20). With
// --tests it compiles test/ to dist/test/ too (scripts/run-tests.js does).
// esbuild strips the types file by file, exactly as tsx would; `npm run
// typecheck` is what checks them.
//
//   node scripts/build-server.js [--tests]
//
// A file is replaced only when its output changed, by an atomic rename, and
// outputs whose source is gone are removed: a server or a test run that is
// loading modules from dist/ while another build runs reads either the old or
// the new version of each file, never half of one.
import { build } from 'esbuild'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const OUT = path.join(ROOT, 'dist')

/** What is compiled: the folder, and the folders under it that are not (the browser bundle has its own build). */
const TREES = {
  src: { skip: [path.join('src', 'web', 'client')] },
  test: { skip: [] },
}

function sources(tree) {
  const { skip } = TREES[tree]
  return fs.readdirSync(path.join(ROOT, tree), { recursive: true })
    .map((file) => path.join(tree, file))
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts') && !skip.some((dir) => file.startsWith(dir + path.sep)))
    .sort()
}

function writeIfChanged(file, contents) {
  try {
    if (Buffer.compare(fs.readFileSync(file), contents) === 0) return false
  } catch {
    // Not there yet.
  }
  fs.mkdirSync(path.dirname(file), { recursive: true })
  const temporary = `${file}.${process.pid}.tmp`
  fs.writeFileSync(temporary, contents)
  fs.renameSync(temporary, file)
  return true
}

/** Compiles the given trees ('src', 'test'); returns how many files were compiled and how many changed. */
export async function buildServer(trees = ['src']) {
  const entryPoints = trees.flatMap(sources)
  const result = await build({
    entryPoints: entryPoints.map((file) => path.join(ROOT, file)),
    outdir: OUT,
    outbase: ROOT,
    bundle: false,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    sourcemap: 'linked',
    write: false,
    logLevel: 'warning',
    absWorkingDir: ROOT,
  })
  const written = new Set()
  let changed = 0
  for (const output of result.outputFiles) {
    written.add(output.path)
    if (writeIfChanged(output.path, output.contents)) changed++
  }
  // Outputs of deleted sources would still be importable: remove them.
  for (const tree of trees) {
    const dir = path.join(OUT, tree)
    if (!fs.existsSync(dir)) continue
    for (const file of fs.readdirSync(dir, { recursive: true })) {
      const full = path.join(dir, file)
      if (!written.has(full) && fs.statSync(full).isFile() && /\.js(\.map)?$/.test(full)) fs.rmSync(full, { force: true })
    }
  }
  // When this build was made: bin/packs.js runs dist/src/ only if no source is newer.
  if (trees.includes('src')) {
    fs.mkdirSync(path.join(OUT, 'src'), { recursive: true })
    fs.writeFileSync(path.join(OUT, 'src', '.built'), `${new Date().toISOString()}\n`)
  }
  return { files: entryPoints.length, changed }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const trees = process.argv.includes('--tests') ? ['src', 'test'] : ['src']
  const { files, changed } = await buildServer(trees)
  console.log(`server build: ${files} files compiled (${changed} changed) into dist/${trees.length > 1 ? '{src,test}' : 'src'}/`)
}
