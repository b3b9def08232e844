// A player gets packs-sync from the site it talks to, not from a package
// name: the real server started as `npm start` does, seeded with a pack of two
// versions (test/helpers/demo.ts), serves the bundle it was built with at
// /packs-sync/packs-sync.mjs. The player's way is run as the /packs-sync/
// page prints it: curl through the gate into a folder outside the checkout,
// sha256sum against the hash the page shows, then Node alone, on a folder
// holding the pack's older archive. Behind the gate like everything else, and
// a copy a client keeps is revalidated with its ETag. Runs on both
// combinations: the bundle is the same, the server it comes from is not.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { seedDemoSite } from '../helpers/demo.js'
import { ROOT, startServer, suiteBackends, type RunningServer, type SuiteBackends } from '../helpers/server.js'
import { tempDir } from '../helpers/temp.js'

const PASSWORD = 'sync-download-password'
const GATE = { 'x-master-password': PASSWORD }
/**
 * The player's game, for which the pack's 1.1.0 (format 57) replaces its 1.0.0 (format 48). Given as a pack format:
 * the demo's archives name no kind, and a bare format 57 is a release only as a data pack, so no release name matches.
 */
const GAME = '--pack-format 57'

let backends: SuiteBackends
let server: RunningServer
let bundleUrl: string
let oldArchive: Buffer
let newArchive: Buffer

interface Run { code: number | null; stdout: string; stderr: string }

function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): Promise<Run> {
  // Only what a player's shell would have: this checkout's directories and settings stay out of it.
  const child = spawn(command, args, {
    cwd,
    env: { PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}`, HOME: cwd, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk: Buffer) => { stdout += chunk })
  child.stderr.on('data', (chunk: Buffer) => { stderr += chunk })
  return new Promise((resolve, reject) => {
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
  })
}

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex')

const ENTITIES: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'" }
/** The text of an element of the page, as a browser shows it (and a copy button copies it). */
function textOf(html: string, id: string): string {
  const match = new RegExp(`<code id="${id}">([^<]*)</code>`).exec(html)
  assert.ok(match, `the page has <code id="${id}">`)
  return match[1]!.replace(/&(?:amp|lt|gt|quot|#39);/g, (entity) => ENTITIES[entity]!)
}

async function syncPage(headers: Record<string, string> = GATE): Promise<string> {
  const res = await fetch(`${server.url}/packs-sync/`, { headers: { ...headers, accept: 'text/html' } })
  assert.equal(res.status, 200)
  return res.text()
}

before(async () => {
  backends = await suiteBackends()
  server = await startServer({ env: { ...backends.env, PACKS_MASTER_PASSWORD: PASSWORD } })
  await seedDemoSite(server)
  const pack = (await (await fetch(`${server.url}/api/packs/steve/mossy-dungeons/`, { headers: GATE })).json()) as { versions: { name: string; download_url: string }[] }
  const file = async (name: string) => Buffer.from(await (await fetch(pack.versions.find((v) => v.name === name)!.download_url, { headers: GATE })).arrayBuffer())
  oldArchive = await file('1.0.0')
  newArchive = await file('1.1.0')
  bundleUrl = `${server.url}/packs-sync/packs-sync.mjs`
})
after(async () => {
  await server?.stop()
  await backends?.release()
})

describe('packs-sync from the site that serves it', { timeout: 120_000 }, () => {
  test('the page\'s commands fetch it with curl through the gate, check it with sha256sum and run it with Node alone, outside the checkout', async () => {
    const page = await syncPage()
    const shown = textOf(page, 'sync-client-sha256')
    const commands = textOf(page, 'sync-client-commands')
    const api = (await (await fetch(`${server.url}/api/packs-sync/`, { headers: GATE })).json()) as { filename: string; size: number; sha256: string; url: string }
    assert.deepEqual(api, { filename: 'packs-sync.mjs', size: api.size, sha256: shown, url: bundleUrl })
    assert.ok(page.includes(`(${api.size.toLocaleString('en-US')} bytes)`), 'the page shows its size')
    // This site's own address, where a player needs it: what curl fetches and what packs-sync talks to.
    assert.ok(commands.includes(` ${bundleUrl} &&`), commands)
    assert.ok(commands.includes(`--site ${server.url} `), commands)

    const dir = tempDir('packs-sync-player-')
    assert.ok(path.relative(ROOT, dir).startsWith('..'), `${dir} is outside the checkout`)
    const folder = path.join(dir, 'resourcepacks')
    fs.mkdirSync(folder)
    fs.writeFileSync(path.join(folder, 'mossy.zip'), oldArchive)
    // What a player changes: their own folder and game.
    const script = commands.replace('~/.minecraft/resourcepacks', folder).replace(/--game-version \S+$/, GAME)
    assert.ok(script.includes(folder) && script.endsWith(GAME), script)

    const player = await run('sh', ['-c', script], dir, { PACKS_MASTER_PASSWORD: PASSWORD })
    assert.equal(player.code, 0, `${player.stdout}\n${player.stderr}`)
    assert.match(player.stdout, /^packs-sync\.mjs: OK$/m)
    assert.match(player.stdout, /mossy\.zip: steve:mossy-dungeons 1\.0\.0 -> 1\.1\.0, updated/)
    assert.deepEqual(fs.readFileSync(path.join(folder, 'mossy.zip')), newArchive)

    // The file curl saved is what the page and the API describe, and stands alone: no map or module beside it.
    const downloaded = fs.readFileSync(path.join(dir, 'packs-sync.mjs'))
    assert.equal(sha256(downloaded), shown)
    assert.equal(downloaded.length, api.size)
    assert.doesNotMatch(downloaded.toString('utf8'), /sourceMappingURL|from ["']\.\.?\//)
    const help = await run(process.execPath, ['packs-sync.mjs', '--help'], dir)
    assert.equal(help.code, 0, help.stderr)
    assert.match(help.stdout, /usage: packs-sync <folder> --site/)
  })

  test('a file that is not the one the page names is not run: sha256sum -c fails and stops the commands', async () => {
    const commands = textOf(await syncPage(), 'sync-client-commands')
    const dir = tempDir('packs-sync-player-')
    // A download that went wrong, as a proxy or a wrong address would leave it: the commands, with curl's -o
    // pointing elsewhere so that packs-sync.mjs stays what was there before.
    fs.writeFileSync(path.join(dir, 'packs-sync.mjs'), 'process.stdout.write("ran the wrong file\\n")\n')
    const script = commands.replace('-o packs-sync.mjs', '-o fetched.mjs').replace('~/.minecraft/resourcepacks', dir)
    const player = await run('sh', ['-c', script], dir, { PACKS_MASTER_PASSWORD: PASSWORD })
    assert.notEqual(player.code, 0)
    assert.match(player.stdout, /packs-sync\.mjs: FAILED/)
    assert.doesNotMatch(player.stdout, /ran the wrong file/)
  })

  test('behind the gate: without it a redirect to the gate page and the API\'s 401; a wrong password 401; the gate cookie works like the header', async () => {
    for (const method of ['GET', 'HEAD']) {
      const res = await fetch(bundleUrl, { method, redirect: 'manual' })
      assert.equal(res.status, 303, method)
      assert.equal(res.headers.get('location'), '/gate/?next=%2Fpacks-sync%2Fpacks-sync.mjs')
      assert.equal(res.headers.get('etag'), null)
      assert.doesNotMatch(await res.text(), /packs-sync/)
    }
    assert.equal((await fetch(`${server.url}/packs-sync/`, { redirect: 'manual' })).status, 303)
    const api = await fetch(`${server.url}/api/packs-sync/`)
    assert.equal(api.status, 401)
    assert.match(((await api.json()) as { detail: string }).detail, /master password/)
    const curl = await run('curl', ['-sS', '-o', '/dev/null', '-w', '%{http_code}', '-H', 'X-Master-Password: not-the-password', bundleUrl], server.dataDir)
    assert.equal(curl.stdout, '401', curl.stderr)

    const gate = await fetch(`${server.url}/gate/`, { method: 'POST', body: new URLSearchParams({ password: PASSWORD, next: '/packs-sync/' }), redirect: 'manual' })
    assert.equal(gate.status, 303)
    const cookie = gate.headers.getSetCookie().map((line) => line.split(';')[0]).join('; ')
    const withCookie = await fetch(bundleUrl, { headers: { cookie } })
    assert.equal(withCookie.status, 200)
    assert.equal(sha256(Buffer.from(await withCookie.arrayBuffer())), textOf(await syncPage({ cookie }), 'sync-client-sha256'))
  })

  test('a download: its type, attachment, nosniff and its SHA-256 as a strong ETag; If-None-Match gives 304, HEAD the headers alone', async () => {
    const res = await fetch(bundleUrl, { headers: GATE })
    const body = Buffer.from(await res.arrayBuffer())
    const etag = `"${sha256(body)}"`
    assert.equal(res.status, 200)
    assert.equal(res.headers.get('content-type'), 'text/javascript; charset=utf-8')
    assert.equal(res.headers.get('content-disposition'), 'attachment; filename="packs-sync.mjs"')
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff')
    assert.equal(res.headers.get('etag'), etag)
    assert.equal(res.headers.get('cache-control'), 'private, no-cache')
    assert.equal(res.headers.get('content-length'), String(body.length))

    for (const tag of [etag, `W/${etag}`, `"elsewhere", ${etag}`, '*']) {
      const again = await fetch(bundleUrl, { headers: { ...GATE, 'if-none-match': tag } })
      assert.equal(again.status, 304, tag)
      assert.equal(again.headers.get('etag'), etag)
      assert.equal((await again.arrayBuffer()).byteLength, 0)
    }
    const changed = await fetch(bundleUrl, { headers: { ...GATE, 'if-none-match': '"an-older-build"' } })
    assert.equal(changed.status, 200)
    assert.deepEqual(Buffer.from(await changed.arrayBuffer()), body)

    const head = await fetch(bundleUrl, { method: 'HEAD', headers: GATE })
    assert.equal(head.status, 200)
    assert.equal(head.headers.get('etag'), etag)
    assert.equal(head.headers.get('content-length'), String(body.length))
    assert.equal(head.headers.get('content-disposition'), 'attachment; filename="packs-sync.mjs"')
    assert.equal((await head.arrayBuffer()).byteLength, 0)
    assert.equal((await fetch(bundleUrl, { method: 'HEAD', headers: { ...GATE, 'if-none-match': etag } })).status, 304)
  })
})
