// The folder order of src/ (scripts/check-imports.js, docs/contributing.md#layout) holds for the real tree, and a
// change that breaks it is caught with a message naming both files: an import up the order, a type import up
// the order (types count too), a folder outside the order, a repository imported by a page.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { PROJECT_ROOT } from '../../src/config/paths.js'

interface CheckImports {
  ORDER: string[]
  checkImports(src: string, sync: string): { problems: string[]; files: number }
}

const { ORDER, checkImports } = await import(pathToFileURL(path.join(PROJECT_ROOT, 'scripts', 'check-imports.js')).href) as CheckImports

/** A src/ tree of the given files (path → text) in a fresh temp folder, removed after `use`. */
function withTree(files: Record<string, string>, use: (src: string) => void): void {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'check-imports-'))
  try {
    for (const [name, text] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(dir, 'src', name)), { recursive: true })
      fs.writeFileSync(path.join(dir, 'src', name), text)
    }
    use(path.join(dir, 'src'))
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

test('the repository\'s own src/ follows the order', () => {
  const { problems, files } = checkImports(path.join(PROJECT_ROOT, 'src'), path.join(PROJECT_ROOT, 'packages', 'packs-sync', 'src'))
  assert.deepEqual(problems, [])
  assert.ok(files > 100, `read ${files} files`)
})

test('every folder of src/ is in the order, once', () => {
  const entries = fs.readdirSync(path.join(PROJECT_ROOT, 'src'), { withFileTypes: true })
    .filter((e) => e.isDirectory() || e.name.endsWith('.ts')).map((e) => e.name)
  for (const entry of entries) assert.ok(ORDER.includes(entry), `${entry} is in ORDER`)
  assert.equal(new Set(ORDER).size, ORDER.length)
})

test('an import up the order is refused, naming both files; down the order is fine', () => {
  assert.ok(ORDER.indexOf('http') < ORDER.indexOf('packs'))
  withTree({
    'packs/service.ts': "import { urls } from '../http/urls.js'\nexport const a = urls\n",
    'http/urls.ts': "export const urls = 1\n",
  }, (src) => assert.deepEqual(checkImports(src, path.join(src, 'none')).problems, []))
  withTree({
    'http/urls.ts': "import { a } from '../packs/service.js'\nexport const urls = a\n",
    'packs/service.ts': 'export const a = 1\n',
  }, (src) => {
    const { problems } = checkImports(src, path.join(src, 'none'))
    assert.equal(problems.length, 1)
    assert.match(problems[0]!, /^src\/http\/urls\.ts imports src\/packs\/service\.ts: http comes before packs/)
  })
})

test('type imports count: `import type` and `import("…")` in a type position', () => {
  withTree({
    'http/types.ts': "import type { User } from '../accounts/users.js'\nexport type U = User\n",
    'http/more.ts': "export type V = import('../accounts/users.js').User\n",
    'accounts/users.ts': 'export interface User { id: string }\n',
  }, (src) => {
    const { problems } = checkImports(src, path.join(src, 'none'))
    assert.equal(problems.length, 2, problems.join('\n'))
    assert.ok(problems.some((p) => p.startsWith('src/http/types.ts imports src/accounts/users.ts')))
    assert.ok(problems.some((p) => p.startsWith('src/http/more.ts imports src/accounts/users.ts')))
  })
})

test('a folder outside the order, a page importing a repository and a runtime cycle in a folder are refused', () => {
  withTree({
    'gadgets/thing.ts': 'export const t = 1\n',
    'pages/pack.ts': "import { find } from '../packs/repository.js'\nexport const p = find\n",
    'packs/repository.ts': 'export const find = 1\n',
    'packs/a.ts': "import { b } from './b.js'\nexport const a = b\n",
    'packs/b.ts': "import { a } from './a.js'\nexport const b = a\n",
  }, (src) => {
    const { problems } = checkImports(src, path.join(src, 'none'))
    assert.ok(problems.some((p) => p.includes('src/gadgets/thing.ts: its folder is not in the order')), problems.join('\n'))
    assert.ok(problems.some((p) => p.startsWith('src/pages/pack.ts imports src/packs/repository.ts: a page calls a service')), problems.join('\n'))
    assert.ok(problems.some((p) => p.startsWith('import cycle: packs/a.ts -> packs/b.ts -> packs/a.ts')), problems.join('\n'))
  })
})
