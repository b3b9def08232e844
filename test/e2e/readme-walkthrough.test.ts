// backends: sqlite — the walk-through runs beside `npm start` with no settings: SQLite and files in the data directory
// The curl walk-through, exactly as it stands in docs/using-the-api.md (the README points there): this file
// reads the block out of that page and runs it with bash beside a server started as `npm start` starts it
// (first start, generated site password), the way a reader pastes it: twice into one interactive shell, as a
// reader who pastes it again would. The block creates what it uses (user, token, category, tag, the pack's
// files), takes the ids it needs from the answers and ends with a byte compare of the download, so a step
// that stops working fails here instead of in a stranger's terminal; and a failing step ends the block, not
// the reader's shell.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { ROOT, startServer, type RunningServer } from '../helpers/server.js'
import { tempDir } from '../helpers/temp.js'

const DOC = path.join('docs', 'using-the-api.md')
const SECTION = '## A walk through the API with curl'
const SITE_PASSWORD_LINE = /^ {2}Site password: (\S+)$/m

/** The section's shell blocks: the first sets the password, the second is the walk-through. */
function readmeBlocks(): string[] {
  const doc = fs.readFileSync(path.join(ROOT, DOC), 'utf8')
  const start = doc.indexOf(SECTION)
  assert.ok(start >= 0, `${DOC} has a "${SECTION}" section`)
  const next = doc.indexOf('\n## ', start + SECTION.length)
  const section = doc.slice(start, next < 0 ? undefined : next)
  return [...section.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((match) => match[1]!)
}

interface Run { code: number | null; stdout: string; stderr: string }

function bash(script: string, env: NodeJS.ProcessEnv): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', script], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString() })
    child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
    child.once('error', reject)
    child.once('close', (code) => resolve({ code, stdout, stderr }))
  })
}

/**
 * An interactive bash (`-i`, no rc files) fed on its standard input as a terminal is by a paste: each paste
 * is sent once the output shows the one before it finished. In a session of its own (no controlling
 * terminal to take over), with no history file written.
 */
function interactiveBash(env: NodeJS.ProcessEnv) {
  const child = spawn('bash', ['--norc', '--noprofile', '-i'], {
    cwd: ROOT, env: { ...env, HISTFILE: '', PS1: '$ ' }, stdio: ['pipe', 'pipe', 'pipe'], detached: true,
  })
  let stdout = ''
  let stderr = ''
  let changed = (): void => undefined
  child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString(); changed() })
  child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString(); changed() })
  const closed = new Promise<Run>((resolve, reject) => {
    child.once('error', reject)
    child.once('close', (code) => { changed(); resolve({ code, stdout, stderr }) })
  })
  return {
    paste(text: string): void { child.stdin.write(text.endsWith('\n') ? text : `${text}\n`) },
    /** Until stdout and stderr together match `done` (or the shell is gone). */
    until(done: (stdout: string, stderr: string) => boolean): Promise<void> {
      return new Promise((resolve) => {
        changed = () => { if (done(stdout, stderr) || child.exitCode !== null || child.signalCode !== null) resolve() }
        changed()
      })
    },
    /** Ends the input, as closing the terminal would, and waits for the shell to exit. */
    end(): Promise<Run> {
      child.stdin.end()
      return closed
    },
  }
}

const count = (text: string, pattern: RegExp): number => text.match(new RegExp(pattern.source, `${pattern.flags.replace('g', '')}g`))?.length ?? 0

describe('the curl walk-through of docs/using-the-api.md, as pasted', { timeout: 180_000 }, () => {
  let server: RunningServer
  let sitePassword = ''
  /** The block's `mktemp -d` lands here, so whatever it leaves is found (and removed). */
  let tmp = ''
  let env: NodeJS.ProcessEnv = {}

  before(async () => {
    // No PACKS_MASTER_PASSWORD: the first start generates one and prints it, as for a new reader.
    server = await startServer({ env: { PACKS_MASTER_PASSWORD: undefined } })
    sitePassword = SITE_PASSWORD_LINE.exec(server.stdout())?.[1] ?? ''
    assert.ok(sitePassword, 'the first start printed a site password')
    tmp = tempDir('packs-readme-')
    // The shell of a reader in the project folder: the server's own variables (data dir, port, the test
    // hash cost), nothing of the test runner's backends.
    env = { ...server.env, TMPDIR: tmp }
    delete env.PACKS_MASTER_PASSWORD
  })

  after(async () => {
    await server?.stop().catch(() => undefined)
    fs.rmSync(server?.dataDir ?? '', { recursive: true, force: true })
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true })
  })

  test('the section has the password line and one walk-through block that stops at the first failure, in a subshell', () => {
    const blocks = readmeBlocks()
    assert.equal(blocks.length, 2, 'two shell blocks: the export and the walk-through')
    assert.match(blocks[0]!, /^export PACKS_MASTER_PASSWORD=/m)
    const walk = blocks[1]!
    assert.match(walk, /^set -euo pipefail$/m)
    // The options are set inside `( … )`, so they end with it and never stay on in the reader's shell.
    const lines = walk.trimEnd().split('\n')
    assert.match(lines[0]!, /^\( /, 'the block opens a subshell on its first line')
    assert.equal(lines.at(-1), ')', 'the block closes the subshell on its last line')
    // Every curl goes through the one command that fails loudly (no bare `curl -sf` that hides the detail).
    assert.match(walk, /^CURL=\(curl [^)]*--fail-with-body/m)
    const bareCurls = walk.split('\n').filter((line) => /(^|[\s(])curl\s/.test(line) && !line.startsWith('CURL=(') && !line.startsWith('#'))
    assert.deepEqual(bareCurls, [])
  })

  test('without the site password it stops at once with a line saying what to set', async () => {
    const run = await bash(readmeBlocks()[1]!, env)
    assert.notEqual(run.code, 0)
    assert.match(run.stderr, /PACKS_MASTER_PASSWORD: export PACKS_MASTER_PASSWORD=<the site password npm start printed>/)
    assert.doesNotMatch(run.stdout, /created user/, 'nothing ran before the check')
  })

  test('pasted with the printed password every step succeeds; pasted again it stops with a clear line and the shell lives on', async () => {
    const walk = readmeBlocks()[1]!
    const shell = interactiveBash({ ...env, PACKS_MASTER_PASSWORD: sitePassword })
    const finished = (stdout: string, stderr: string): number =>
      count(stdout, /^walk-through: every step succeeded$/m) + count(stderr, /^walk-through stopped: /m)
    shell.paste(walk)
    await shell.until((stdout, stderr) => finished(stdout, stderr) >= 1)
    shell.paste(walk)
    await shell.until((stdout, stderr) => finished(stdout, stderr) >= 2)
    shell.paste('echo "alive after two pastes"')
    const run = await shell.end()
    const output = `stdout:\n${run.stdout}\nstderr:\n${run.stderr}`
    // The first paste went through to the end, on a fresh site.
    assert.equal(count(run.stdout, /^downloaded: the same bytes$/m), 1, output)
    assert.equal(count(run.stdout, /^walk-through: every step succeeded$/m), 1, output)
    // The second stopped at its first step (alice exists), saying so, and ran nothing after it.
    assert.match(run.stderr, /packs: username "alice" is taken/, output)
    assert.equal(count(run.stderr, /^walk-through stopped: ".*npx packs user create alice --password-stdin" failed \(exit 1\)/m), 1, output)
    // And the shell it was pasted into is still there: it runs the next line, and exits when its input ends.
    assert.match(run.stdout, /^alive after two pastes$/m, output)
    assert.equal(run.code, 0, output)

    // What it made is what a reader would find on the site.
    const headers = { 'x-master-password': sitePassword }
    const pack = await (await fetch(`${server.url}/api/packs/alice/cave-lights/`, { headers })).json() as {
      title: string; category: { key: string } | null; tags: { name: string }[]; versions?: { version_name?: string; name?: string }[]
    }
    assert.equal(pack.title, 'Cave Lights')
    assert.equal(pack.category?.key, 'worldgen')
    assert.deepEqual(pack.tags.map((tag) => tag.name), ['caves'])
    const latest = await (await fetch(`${server.url}/api/packs/alice/cave-lights/latest`, { headers })).json() as { version: string }
    assert.equal(latest.version, '1.1.0')
    // The block cleans up after itself. Two caches of the tools it runs are not its leftovers: Node's module
    // compile cache (Node 22 and later), and tsx's (`tsx-<uid>`), which `npx packs` uses when a source file is
    // newer than the build (bin/packs.js), as it is while someone edits src/.
    assert.deepEqual(fs.readdirSync(tmp).filter((name) => name !== 'node-compile-cache' && !/^tsx-\d+$/.test(name)), [])
  })
})
