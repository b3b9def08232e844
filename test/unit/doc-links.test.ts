// Every relative link in the project's documentation leads somewhere: README.md, docs/**/*.md and
// packages/packs-sync/README.md are read, each link and image is resolved against the linking file's folder,
// the target must exist in the checkout, and a `#fragment` into a Markdown file must name a heading there
// (by GitHub's slug rules) or an explicit id. Documents move between files; a link left pointing at the old
// place is caught here instead of by a reader who gets a 404 or lands at the top of the wrong page.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import MarkdownIt, { type Token } from 'markdown-it'

/** The checkout's root: the nearest folder above this file with package.json (the tests run from dist/, which has none). */
function findRoot(): string {
  const here = path.dirname(fileURLToPath(import.meta.url))
  for (let dir = here; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json')) && fs.existsSync(path.join(dir, 'README.md'))) return dir
    if (path.dirname(dir) === dir) throw new Error(`no package.json above ${here}`)
  }
}

const ROOT = findRoot()

/**
 * GitHub's heading anchors (github-slugger): lower case, every character that is not a letter, a mark, a
 * digit, a connector such as `_`, a hyphen or a space removed, then each space a hyphen. A heading's text is
 * what it renders to: `code` keeps its content, emphasis and link markup go.
 */
export function githubSlug(text: string): string {
  return text.toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-')
}

interface Link { href: string; line: number }
interface Parsed { links: Link[]; anchors: Set<string> }

const markdown = new MarkdownIt({ html: true })

/** The rendered text of an inline token (a heading's), without markup. */
function plainText(token: Token): string {
  return (token.children ?? []).map((child) => (child.type === 'text' || child.type === 'code_inline' ? child.content : '')).join('')
}

/** href/src and id/name attributes written as raw HTML (`<a id="…">`, `<img src="…">`). */
function fromHtml(html: string, line: number, links: Link[], anchors: Set<string>): void {
  for (const match of html.matchAll(/\b(href|src|id|name)\s*=\s*"([^"]*)"/gi)) {
    const attribute = match[1] ?? ''
    const value = match[2] ?? ''
    if (/^(href|src)$/i.test(attribute)) links.push({ href: value, line })
    else if (!/^(meta|input)/i.test(html.trim().slice(1))) anchors.add(value)
  }
}

/** The links and images of a Markdown text, with their lines, and the anchors its headings and ids make. */
export function parseMarkdown(text: string): Parsed {
  const links: Link[] = []
  const anchors = new Set<string>()
  const seen = new Map<string, number>()
  const tokens = markdown.parse(text, {})
  // Inline tokens in a table cell carry no line of their own: the row's is the nearest.
  let line = 1
  tokens.forEach((token, index) => {
    if (token.map) line = token.map[0] + 1
    if (token.type === 'heading_open') {
      const base = githubSlug(plainText(tokens[index + 1]!))
      // A second heading with the same slug gets -1, a third -2, as on GitHub.
      const count = seen.get(base) ?? 0
      seen.set(base, count + 1)
      anchors.add(count === 0 ? base : `${base}-${count}`)
    }
    if (token.type === 'html_block') fromHtml(token.content, line, links, anchors)
    for (const child of token.children ?? []) {
      if (child.type === 'link_open') links.push({ href: String(child.attrGet('href') ?? ''), line })
      else if (child.type === 'image') links.push({ href: String(child.attrGet('src') ?? ''), line })
      else if (child.type === 'html_inline') fromHtml(child.content, line, links, anchors)
    }
  })
  return { links, anchors }
}

/** A link that leaves the checkout: a scheme (https:, mailto:) or a protocol-relative `//host`. */
function isExternal(href: string): boolean {
  return /^[a-z][a-z0-9+.-]*:/i.test(href) || href.startsWith('//')
}

/**
 * What is wrong with the relative links of `file` (a path under `root`), one line each, given how to read a
 * Markdown file's text. A link is resolved as GitHub resolves it in a rendered file: against the file's
 * folder, or against the repository's root when it starts with `/`.
 */
export function linkProblems(root: string, file: string, read: (file: string) => string): string[] {
  const problems: string[] = []
  const parsedCache = new Map<string, Parsed>()
  const parse = (target: string): Parsed => {
    let parsed = parsedCache.get(target)
    if (!parsed) parsedCache.set(target, parsed = parseMarkdown(read(target)))
    return parsed
  }
  const rel = path.relative(root, file)
  for (const { href, line } of parse(file).links) {
    const where = `${rel}:${line}: (${href})`
    if (href === '') {
      problems.push(`${where} an empty link`)
      continue
    }
    if (isExternal(href)) continue
    const hash = href.indexOf('#')
    const pathPart = (hash < 0 ? href : href.slice(0, hash)).replace(/\?.*$/, '')
    const fragment = hash < 0 ? '' : href.slice(hash + 1)
    let decoded: string
    try {
      decoded = decodeURIComponent(pathPart)
    } catch {
      problems.push(`${where} is not a valid URL path`)
      continue
    }
    const target = decoded === '' ? file : path.resolve(decoded.startsWith('/') ? root : path.dirname(file), decoded.replace(/^\/+/, ''))
    if (target !== root && !target.startsWith(root + path.sep)) {
      problems.push(`${where} points outside the repository`)
      continue
    }
    if (target !== file && !fs.existsSync(target)) {
      problems.push(`${where} ${path.relative(root, target)} does not exist`)
      continue
    }
    if (fragment === '') continue
    // A folder renders its README.md; anchors into other kinds of files (#L10 of a source file) are GitHub's.
    const markdownTarget = target !== file && fs.statSync(target).isDirectory() ? path.join(target, 'README.md') : target
    if (!markdownTarget.endsWith('.md') || (markdownTarget !== file && !fs.existsSync(markdownTarget))) continue
    let anchor: string
    try {
      anchor = decodeURIComponent(fragment)
    } catch {
      problems.push(`${where} has an invalid #fragment`)
      continue
    }
    if (!parse(markdownTarget).anchors.has(anchor)) {
      problems.push(`${where} ${path.relative(root, markdownTarget)} has no heading "#${anchor}"`)
    }
  }
  return problems
}

/** README.md, every Markdown file under docs/, and packs-sync's README. */
function documentationFiles(): string[] {
  const files = [path.join(ROOT, 'README.md'), path.join(ROOT, 'packages', 'packs-sync', 'README.md')]
  const walk = (dir: string): void => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name)
      if (entry.isDirectory()) walk(full)
      else if (entry.name.endsWith('.md')) files.push(full)
    }
  }
  walk(path.join(ROOT, 'docs'))
  return files
}

const readFile = (file: string): string => fs.readFileSync(file, 'utf8')

test("GitHub's heading slugs", () => {
  assert.equal(githubSlug('Backups and restore'), 'backups-and-restore')
  assert.equal(githubSlug('Several workers (WEB_CONCURRENCY=N)'), 'several-workers-web_concurrencyn')
  assert.equal(githubSlug('1. PostgreSQL: a role and a database'), '1-postgresql-a-role-and-a-database')
  assert.equal(githubSlug('The lock: <folder>/.packs-sync.json'), 'the-lock-folderpacks-syncjson')
  assert.equal(githubSlug('Node.js versions'), 'nodejs-versions')
  assert.equal(githubSlug('6. Threat model: what a signature promises, and what it does not'),
    '6-threat-model-what-a-signature-promises-and-what-it-does-not')
})

test('the checker finds a missing file, a missing heading and a link out of the repository, and accepts good links', () => {
  const texts = new Map<string, string>([
    [path.join(ROOT, 'virtual.md'), [
      '# Top',
      '## Same',
      '## Same',
      '## Set `PORT` (and `HOST`)',
      '[ok, same file](#top) [second of two](#same-1) [code in a heading](#set-port-and-host)',
      '[ok, the README](README.md#packs) [ok, a folder](docs/) [ok, outside](https://example.org/x#y)',
      '[no such file](docs/no-such-page.md) [no such heading](README.md#no-such-heading)',
      '[out](../../etc/passwd) ![no picture](docs/no-such.png) [bad anchor here](#nowhere)',
      '`[in code](nowhere.md)`',
      '```',
      '[in a fence](nowhere.md)',
      '```',
    ].join('\n')],
  ])
  const problems = linkProblems(ROOT, path.join(ROOT, 'virtual.md'), (file) => texts.get(file) ?? readFile(file))
  assert.deepEqual(problems.map((problem) => problem.replace(/^virtual\.md:\d+: /, '')), [
    '(docs/no-such-page.md) docs/no-such-page.md does not exist',
    '(README.md#no-such-heading) README.md has no heading "#no-such-heading"',
    '(../../etc/passwd) points outside the repository',
    '(docs/no-such.png) docs/no-such.png does not exist',
    '(#nowhere) virtual.md has no heading "#nowhere"',
  ])
})

test('every relative link in README.md, docs/ and packs-sync\'s README leads to a file and heading that exist', () => {
  const files = documentationFiles()
  assert.ok(files.some((file) => file.endsWith(path.join('docs', 'deploy.md'))), 'docs/ is read')
  const problems = files.flatMap((file) => linkProblems(ROOT, file, readFile))
  assert.deepEqual(problems, [], `broken links:\n${problems.join('\n')}`)
})
