// The direction of dependencies, checked in `npm test`: the folders of src/ have one fixed order (ORDER below,
// explained in docs/contributing.md#layout), and every import, `import type` included, points down it: a
// file may import its own folder or a folder earlier in the list, never a later one. So no two folders depend
// on each other and there is no cycle through folders; within a folder, no cycle of runtime imports.
// Imports are read with TypeScript's own parser, so comments and strings never count. Besides the order:
//   api/ imports only typebox and itself (the server, the browser bundle and tests share it);
//   web/client/ (the browser bundle) imports only itself, api/constants.ts and web/dates.ts;
//   pages/ import no *repository* module, not even a type: they call services;
//   packages/packs-sync imports only node: modules and its own files.
import fs from 'node:fs'
import path from 'node:path'
import ts from 'typescript'

/**
 * The folders of src/ (and its files at the top), lowest first. A file may import from its own entry or an
 * earlier one. Grouped as docs/contributing.md#layout explains them.
 */
export const ORDER = [
  // What everything shares and that depends on nothing of ours.
  'api', 'errors.ts', 'minecraft', 'config',
  // Infrastructure: the backends, HTTP plumbing, rendering, who is calling, what is measured.
  'db', 'storage', 'http', 'web', 'auth', 'stats',
  // The resources, each one folder (routes, service, repository, mapper), in the order they build on each other.
  'accounts', 'audit', 'notifications', 'events', 'signing', 'files', 'downloads', 'uploads', 'drafts', 'update-check', 'packs',
  'profiles', 'moderation', 'autocomplete', 'modrinth', 'webhooks', 'feeds', 'sync-client',
  // What puts it together: state shared between instances, maintenance, the pages, the entry points.
  'shared-state', 'maintenance', 'pages', 'app.ts', 'server.ts', 'cli.ts',
]

/** The entry of ORDER a file belongs to: its top folder, or its own name at the top of src/. */
function entryOf(rel) {
  return rel.includes('/') ? rel.slice(0, rel.indexOf('/')) : rel
}

function sourceFiles(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) return sourceFiles(full)
    return entry.name.endsWith('.ts') ? [full] : []
  })
}

/** Imports of one file, run-time ones only unless `includeTypes`: [specifier, resolved path or null for packages]. */
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
    } else if (includeTypes && ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      // `import('../x.js').Thing` in a type position.
      add(node.argument.literal.text)
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}

/**
 * Every breach of the rules above in the source tree at `SRC` (and the packs-sync sources at `SYNC`), one line
 * each naming the files; the number of files read. Exported for test/unit/check-imports.test.ts.
 */
export function checkImports(SRC, SYNC) {
  const problems = []
  const graph = new Map()
  for (const file of sourceFiles(SRC)) {
    const rel = path.relative(SRC, file).split(path.sep).join('/')
    const rank = ORDER.indexOf(entryOf(rel))
    if (rank < 0) problems.push(`src/${rel}: its folder is not in the order (add "${entryOf(rel)}" to ORDER in scripts/check-imports.js)`)
    const edges = []
    // The browser bundle runs what it imports: at run time only itself and two shared files; its types may come
    // from the API's schemas too (they vanish at build time).
    if (rel.startsWith('web/client/')) {
      const runtime = new Set(runtimeImports(file).map(([specifier]) => specifier))
      for (const [specifier, target] of runtimeImports(file, true)) {
        const targetRel = target === null ? null : path.relative(SRC, target).split(path.sep).join('/')
        const allowed = runtime.has(specifier)
          ? targetRel !== null && (targetRel.startsWith('web/client/') || ['api/constants.ts', 'web/dates.ts'].includes(targetRel))
          : targetRel === null ? specifier === 'typebox' : targetRel.startsWith('web/client/') || targetRel.startsWith('api/')
        if (!allowed) problems.push(`src/${rel}: the browser bundle may import only web/client/, api/constants.ts and web/dates.ts (and types of api/), not ${targetRel === null ? specifier : `src/${targetRel}`}`)
      }
      graph.set(rel, [])
      continue
    }
    for (const [specifier, target] of runtimeImports(file, true)) {
      if (target === null) {
        if (rel.startsWith('api/') && specifier !== 'typebox') problems.push(`src/${rel}: api/ may import only typebox, not ${specifier}`)
        if ((rel === 'errors.ts' || rel === 'api/constants.ts')) problems.push(`src/${rel}: must import nothing, imports ${specifier}`)
        continue
      }
      const targetRel = path.relative(SRC, target).split(path.sep).join('/')
      // Pages are routes too: they reach the data through services, never a repository, not even for a type.
      if (rel.startsWith('pages/') && path.basename(targetRel).includes('repository')) {
        problems.push(`src/${rel} imports src/${targetRel}: a page calls a service, never a repository`)
      }
      const targetRank = ORDER.indexOf(entryOf(targetRel))
      if (rank >= 0 && targetRank > rank) {
        problems.push(`src/${rel} imports src/${targetRel}: ${entryOf(rel)} comes before ${entryOf(targetRel)} in the order `
          + '(scripts/check-imports.js, docs/contributing.md#layout), so it may not use it; move the shared piece down, or the caller up')
      }
    }
    // Within a folder, cycles of runtime imports (a type-only import vanishes at run time).
    for (const [, target] of runtimeImports(file)) if (target !== null) edges.push(path.relative(SRC, target).split(path.sep).join('/'))
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
  for (const file of fs.existsSync(SYNC) ? sourceFiles(SYNC) : []) {
    for (const [specifier, resolved] of runtimeImports(file, true)) {
      const ok = resolved === null ? specifier.startsWith('node:') : resolved.startsWith(SYNC + path.sep)
      if (!ok) problems.push(`${path.relative(path.dirname(path.dirname(SYNC)), file)} imports ${specifier}: packs-sync uses only node: modules and its own files`)
    }
  }
  return { problems, files: graph.size }
}

// Run as a script (npm run check): the repository's own tree.
if (process.argv[1] && path.resolve(process.argv[1]) === new URL(import.meta.url).pathname) {
  const { problems, files } = checkImports(path.resolve('src'), path.resolve('packages', 'packs-sync', 'src'))
  if (problems.length > 0) {
    console.error(`check-imports: ${problems.length} problem(s)\n  ${problems.join('\n  ')}`)
    process.exit(1)
  }
  console.log(`check-imports: ${files} files in ${ORDER.length} folders and files of a fixed order; every import, type imports too, points down it; no cycles`)
}
