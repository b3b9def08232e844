// backends: sqlite — the OpenAPI document is made from the route schemas alone; the database, storage and Redis never enter it
// The committed API reference (docs/openapi.json, docs/api.md) is what the
// code generates now, and the repository stands alone: no file refers to the
// specification documents that lived beside it outside the repository.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { API_MD_FILE, generateApiDocs, OPENAPI_FILE } from '../helpers/api-docs.js'
import { ROOT } from '../helpers/server.js'

/** The first line where two texts part, to show in the failure beside the instruction. */
function firstDifference(committed: string, generated: string): string {
  const a = committed.split('\n')
  const b = generated.split('\n')
  for (let index = 0; index < Math.max(a.length, b.length); index++) {
    if (a[index] !== b[index]) return `line ${index + 1}:\n  committed: ${a[index] ?? '(end of file)'}\n  generated: ${b[index] ?? '(end of file)'}`
  }
  return 'no line differs'
}

test('docs/openapi.json and docs/api.md are what the route schemas generate now', async () => {
  const generated = await generateApiDocs()
  // The document is served as generated; the committed copy is the same JSON, pretty-printed.
  assert.equal(generated.openapi, `${JSON.stringify(JSON.parse(generated.openapi), null, 2)}\n`)
  for (const [file, contents] of [[OPENAPI_FILE, generated.openapi], [API_MD_FILE, generated.markdown]] as const) {
    const rel = path.relative(ROOT, file)
    assert.ok(fs.existsSync(file), `${rel} is missing: run npm run docs`)
    const committed = fs.readFileSync(file, 'utf8')
    if (committed !== contents) assert.fail(`${rel} is stale: run npm run docs (${firstDifference(committed, contents)})`)
  }
  // A second generation is byte for byte the same: nothing in the files depends on the run.
  const again = await generateApiDocs()
  assert.equal(again.openapi, generated.openapi, 'docs/openapi.json is the same on every run')
  assert.equal(again.markdown, generated.markdown, 'docs/api.md is the same on every run')
})

test('the readable page covers every operation of the document, and every link in it has its heading', async () => {
  const generated = await generateApiDocs()
  const document = JSON.parse(generated.openapi) as { paths: Record<string, Record<string, unknown>> }
  const headings = new Set(generated.markdown.split('\n').filter((line) => line.startsWith('### ')).map((line) => line.slice(4)))
  const operations = Object.entries(document.paths).flatMap(([route, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${route}`))
  assert.ok(operations.length > 30, `the document has the API's operations (${operations.length})`)
  for (const operation of operations) assert.ok(headings.has(operation), `docs/api.md has a section for ${operation}`)

  const anchors = headingAnchors(generated.markdown)
  const links = [...generated.markdown.matchAll(/\]\(#([^)]+)\)/g)].map((match) => match[1]!)
  assert.ok(links.length > operations.length, 'the contents link every operation')
  for (const link of links) assert.ok(anchors.has(link), `#${link} names a heading of docs/api.md`)
  // Text like `Bearer <username> <token>` outside code would be taken for HTML and vanish on GitHub.
  const outsideCode = generated.markdown.replace(/`[^`\n]*`/g, '').replace(/^<!--.*-->$/gm, '')
  assert.doesNotMatch(outsideCode, /<[a-z]/i, 'no raw < outside code spans in docs/api.md')
})

/** GitHub's heading anchors of a Markdown text: lower case, punctuation but - and _ dropped, spaces to -, repeats numbered -1, -2... */
function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>()
  const seen = new Map<string, number>()
  let fenced = false
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced
    const heading = fenced ? null : /^#{1,6} (.*)$/.exec(line)
    if (!heading?.[1]) continue
    const base = heading[1].toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-')
    const count = seen.get(base) ?? 0
    seen.set(base, count + 1)
    anchors.add(count === 0 ? base : `${base}-${count}`)
  }
  return anchors
}

/** The repository's files: tracked ones and new ones not ignored (the tree itself where there is no git). */
function repositoryFiles(): string[] {
  if (fs.existsSync(path.join(ROOT, '.git'))) {
    const listed = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })
    return listed.split('\0').filter((file) => file !== '' && fs.existsSync(path.join(ROOT, file)))
  }
  const skip = new Set(['node_modules', 'dist', 'data', '.tmp', '.git'])
  const walk = (dir: string): string[] => fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const rel = dir ? `${dir}/${entry.name}` : entry.name
    if (entry.isDirectory()) return skip.has(entry.name) ? [] : walk(rel)
    return entry.isFile() ? [rel] : []
  })
  return walk('')
}

test('no file refers to the specification documents outside the repository, by path or by name', () => {
  // Spelt in pieces so that this file does not match itself.
  const outside = new RegExp(['\\.\\./', 'shared/', '|\\bSPEC\\.md\\b', '|\\bCONTRACT\\.md\\b', '|\\bCONTRACT\\s*§', '|\\bSPEC\\b', '|\\bCONTRACT\\b'].join(''))
  const found: string[] = []
  const files = repositoryFiles()
  assert.ok(files.includes('README.md') && files.includes('src/app.ts'), `the file list is the repository's (${files.length} files)`)
  for (const file of files) {
    const bytes = fs.readFileSync(path.join(ROOT, file))
    if (bytes.includes(0)) continue // binary: images and the like
    bytes.toString('utf8').split('\n').forEach((line, index) => {
      if (outside.test(line)) found.push(`${file}:${index + 1}: ${line.trim().slice(0, 160)}`)
    })
  }
  assert.deepEqual(found, [], `these lines refer to documents outside the repository; point to docs/decisions.md or say the reason instead:\n${found.join('\n')}`)
})

test('every pointer into docs/decisions.md names one of its headings', () => {
  const decisions = fs.readFileSync(path.join(ROOT, 'docs', 'decisions.md'), 'utf8')
  const anchors = headingAnchors(decisions)
  const broken: string[] = []
  let pointers = 0
  // Comments say `docs/decisions.md#the-gate, #authentication`; Markdown links `decisions.md#usernames`; the page itself `(#errors)`.
  const check = (where: string, anchor: string) => {
    pointers++
    if (!anchors.has(anchor)) broken.push(`${where}: #${anchor}`)
  }
  for (const file of repositoryFiles()) {
    if (!/\.(ts|js|md)$/.test(file)) continue
    const text = fs.readFileSync(path.join(ROOT, file), 'utf8')
    for (const match of text.matchAll(/decisions\.md((?:#[A-Za-z0-9_-]+)(?:,\s*#[A-Za-z0-9_-]+)*)/g)) {
      for (const anchor of match[1]!.split(/,\s*/)) check(file, anchor.slice(1))
    }
  }
  for (const match of decisions.matchAll(/\]\(#([^)]+)\)/g)) check('docs/decisions.md', match[1]!)
  assert.ok(pointers > 20, `the pointers were found (${pointers})`)
  assert.deepEqual(broken, [], `these point to no heading of docs/decisions.md:\n${broken.join('\n')}`)
})
