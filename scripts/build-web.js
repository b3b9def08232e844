// Builds the pages' client bundle with esbuild: one ES module per page under
// src/web/client/pages/, shared code split into chunks, and one stylesheet,
// all content-hashed into dist/web/ with a manifest the server reads at start.
// `npm start` and `npm test` run this first (prestart / the test script).
import { build } from 'esbuild'
import { createHash } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const outdir = path.join(root, 'dist', 'web')
const pagesDir = path.join(root, 'src', 'web', 'client', 'pages')

const entryPoints = [
  ...fs.readdirSync(pagesDir).filter((f) => f.endsWith('.ts')).map((f) => path.join(pagesDir, f)),
  path.join(root, 'src', 'web', 'styles', 'site.css'),
]

fs.rmSync(outdir, { recursive: true, force: true })
const result = await build({
  entryPoints,
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  target: ['es2022'],
  minify: true,
  sourcemap: 'linked',
  entryNames: '[name]-[hash]',
  chunkNames: 'chunk-[hash]',
  metafile: true,
  logLevel: 'warning',
  absWorkingDir: root,
})

// manifest: entry name (create.js, site.css) -> hashed file name.
const manifest = {}
for (const [output, meta] of Object.entries(result.metafile.outputs)) {
  if (!meta.entryPoint) continue
  const ext = path.extname(output)
  const name = path.basename(meta.entryPoint, path.extname(meta.entryPoint)) + ext
  manifest[name] = path.basename(output)
}
// The site's icon: content-hashed like the rest, and also what GET /favicon.ico answers (src/pages/assets.ts).
const favicon = fs.readFileSync(path.join(root, 'src', 'web', 'favicon.svg'))
manifest['favicon.svg'] = `favicon-${createHash('sha256').update(favicon).digest('hex').slice(0, 8).toUpperCase()}.svg`
fs.writeFileSync(path.join(outdir, manifest['favicon.svg']), favicon)
fs.writeFileSync(path.join(outdir, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n')
const bytes = Object.keys(result.metafile.outputs).reduce((sum, f) => sum + fs.statSync(path.join(root, f)).size, 0)
console.log(`web bundle: ${Object.keys(manifest).length} entries, ${(bytes / 1024).toFixed(1)} KiB in dist/web/`)
