// The direction of dependencies, checked in `npm test`: no import cycles in
// src/, and no module importing one from a higher layer. Imports are read with
// TypeScript's own parser, so comments and strings never count; `import type`
// is left out of both checks because it vanishes at run time (a type may name
// a higher layer's shape without loading it).
//
// Layers, lowest first (a file may import its own layer or lower ones):
//   0  api/ (schemas and constants: only `typebox`), errors.ts (nothing),
//      minecraft/ (pack formats per release, pack.mcmeta's declaration: nothing but its data file)
//      web/client/ (the browser bundle) imports only itself, api/constants.ts and web/dates.ts
//   1  config/
//   2  db/ (connection, migrations), storage/, shared-state/redis.ts (the connection)
//   3  http/ (plumbing), web/ (rendering; web/client/ imports only itself and api/constants.ts)
//   4  the resources: files, uploads, drafts, autocomplete, update-check, stats, packs, accounts,
//      audit, downloads, profiles, signing, modrinth, sync-client
//   5  shared-state/ (memory or Redis for what instances share), maintenance/, pages/
//      (pages/ import no *repository* module, not even a type: they call services)
//   6  app.ts, server.ts, cli.ts
import fs from 'node:fs'
import path from 'node:path'
import ts from 'typescript'

const SRC = path.resolve('src')
const RESOURCES = [
  'files', 'uploads', 'drafts', 'autocomplete', 'update-check', 'stats', 'packs', 'accounts', 'audit', 'downloads', 'profiles',
  'signing', 'modrinth', 'sync-client',
]

function layerOf(rel) {
  if (rel.startsWith('api/') || rel.startsWith('minecraft/') || rel === 'errors.ts') return 0
  if (rel.startsWith('config/')) return 1
  if (rel.startsWith('db/') || rel.startsWith('storage/') || rel === 'shared-state/redis.ts') return 2
  if (rel.startsWith('http/') || rel.startsWith('web/')) return 3
  if (RESOURCES.some((name) => rel.startsWith(`${name}/`))) return 4
  if (rel.startsWith('shared-state/') || rel.startsWith('maintenance/') || rel.startsWith('pages/')) return 5
  if (!rel.includes('/')) return 6
  return undefined
}

function sourceFiles(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) return sourceFiles(full)
    return entry.name.endsWith('.ts') ? [full] : []
  })
}

/** Runtime imports of one file: [specifier, resolved path or null for packages]. */
function runtimeImports(file, includeTypes = false) {
  const source = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, false)
  const found = []
  const add = (specifier) => {
    if (!specifier.startsWith('.')) return found.push([specifier, null])
    const resolved = path.resolve(path.dirname(file), specifier).replace(/\.js$/, '.ts')
    found.push([specifier, resolved])
  }
  const visit = (node) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause
      const typeOnly = clause?.isTypeOnly
        || (clause && !clause.name && clause.namedBindings && ts.isNamedImports(clause.namedBindings)
          && clause.namedBindings.elements.length > 0 && clause.namedBindings.elements.every((e) => e.isTypeOnly))
      if (!typeOnly || includeTypes) add(node.moduleSpecifier.text)
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      if (!node.isTypeOnly || includeTypes) add(node.moduleSpecifier.text)
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword
      && node.arguments[0] && ts.isStringLiteral(node.arguments[0])) {
      add(node.arguments[0].text)
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}

const problems = []
const graph = new Map()
for (const file of sourceFiles(SRC)) {
  const rel = path.relative(SRC, file).split(path.sep).join('/')
  const layer = layerOf(rel)
  if (layer === undefined) problems.push(`${rel}: in no layer (add its folder to scripts/check-imports.js)`)
  const edges = []
  // api/ is the API's own vocabulary: not even a type of it comes from elsewhere.
  if (rel.startsWith('api/')) {
    for (const [specifier, target] of runtimeImports(file, true)) {
      if (target !== null && !path.relative(SRC, target).startsWith('api')) problems.push(`${rel}: api/ imports ${specifier} (even a type import ties the API to the server)`)
    }
  }
  // Pages are routes too: they reach the data through services, never a repository, not even for a type.
  if (rel.startsWith('pages/')) {
    for (const [specifier, target] of runtimeImports(file, true)) {
      if (target !== null && path.basename(target).includes('repository')) problems.push(`${rel}: a page imports ${specifier} (call a service instead)`)
    }
  }
  for (const [specifier, target] of runtimeImports(file)) {
    if (target === null) {
      if (rel.startsWith('api/') && specifier !== 'typebox') problems.push(`${rel}: api/ may import only typebox, not ${specifier}`)
      if ((rel === 'errors.ts' || rel === 'api/constants.ts')) problems.push(`${rel}: must import nothing, imports ${specifier}`)
      if (rel.startsWith('web/client/')) problems.push(`${rel}: the browser bundle imports ${specifier}`)
      continue
    }
    const targetRel = path.relative(SRC, target).split(path.sep).join('/')
    edges.push(targetRel)
    if (rel.startsWith('web/client/')) {
      if (!targetRel.startsWith('web/client/') && !['api/constants.ts', 'web/dates.ts'].includes(targetRel)) {
        problems.push(`${rel}: the browser bundle may import only web/client/ and api/constants.ts, not ${targetRel}`)
      }
      continue
    }
    const targetLayer = layerOf(targetRel)
    if (layer !== undefined && targetLayer !== undefined && targetLayer > layer) {
      problems.push(`${rel} (layer ${layer}) imports ${targetRel} (layer ${targetLayer}): dependencies point down only`)
    }
  }
  graph.set(rel, edges)
}

// Cycles: depth-first search, reporting each cycle once by its path.
const state = new Map()
const stack = []
function visit(node) {
  state.set(node, 'open')
  stack.push(node)
  for (const next of graph.get(node) ?? []) {
    if (state.get(next) === 'open') problems.push(`import cycle: ${[...stack.slice(stack.indexOf(next)), next].join(' -> ')}`)
    else if (!state.has(next)) visit(next)
  }
  stack.pop()
  state.set(node, 'done')
}
for (const node of graph.keys()) if (!state.has(node)) visit(node)

// packages/packs-sync is a client of the site's HTTP API and nothing more: it may import node's own modules
// and its own files, never the server's code or a package (it has no dependencies).
const SYNC = path.resolve('packages', 'packs-sync', 'src')
for (const file of sourceFiles(SYNC)) {
  for (const [specifier, resolved] of runtimeImports(file, true)) {
    const ok = resolved === null ? specifier.startsWith('node:') : resolved.startsWith(SYNC + path.sep)
    if (!ok) problems.push(`${path.relative('.', file)} imports ${specifier}: packs-sync uses only node: modules and its own files`)
  }
}

if (problems.length > 0) {
  console.error(`check-imports: ${problems.length} problem(s)\n  ${problems.join('\n  ')}`)
  process.exit(1)
}
console.log(`check-imports: ${graph.size} files, no cycles, every import points down`)
