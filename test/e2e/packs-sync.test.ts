// packs-sync, the reference update client, end to end: the real server
// started as `npm start` does, seeded with packs of several versions, and the
// client run as a process (`node packages/packs-sync/bin/packs-sync.js`, the
// bundle a site serves at /packs-sync/packs-sync.mjs) on a folder holding an
// old archive. Between them, a small proxy in this process can change the
// signed answer, change the download, hang up halfway through it, or record
// a signed answer and replay it later. Runs on both combinations: the client
// is the same, the server it talks to is not. (The client against a site that
// bends the protocol in every other way: packs-sync-guards.test.ts.)
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import fs from 'node:fs'
import http from 'node:http'
import path from 'node:path'
import { seedDemoSite } from '../helpers/demo.js'
import { ROOT, cliOk, freePort, startServer, suiteBackends, type RunningServer, type SuiteBackends } from '../helpers/server.js'
import { tempDir } from '../helpers/temp.js'

const PASSWORD = 'sync-site-password'
const BIN = path.join(ROOT, 'packages', 'packs-sync', 'bin', 'packs-sync.js')

type Mode = 'pass' | 'tamper-answer' | 'tamper-download' | 'hang-up' | 'record' | 'replay'
let mode: Mode = 'pass'
let backends: SuiteBackends
let server: RunningServer
let proxy: http.Server
let proxyUrl: string
let oldArchive: Buffer
let newArchive: Buffer
/** The last batch answer seen in 'record' mode, served instead of the site's in 'replay' mode. */
let recorded: { status: number; headers: http.IncomingHttpHeaders; body: Buffer } | undefined

/** Forwards to the server as is (the Host too, so download URLs point back here), or spoils what `mode` says. */
function startProxy(target: URL): Promise<http.Server> {
  const proxy = http.createServer((req, res) => {
    const isAnswer = req.url?.startsWith('/api/update-check/by-hash/') === true
    if (mode === 'replay' && isAnswer && recorded) {
      const { status, headers, body } = recorded
      req.resume()
      req.on('end', () => res.writeHead(status, headers).end(body))
      return
    }
    const upstream = http.request({ host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers }, (answer) => {
      const chunks: Buffer[] = []
      answer.on('data', (chunk: Buffer) => chunks.push(chunk))
      answer.on('end', () => {
        let body = Buffer.concat(chunks)
        if (mode === 'record' && isAnswer) recorded = { status: answer.statusCode!, headers: answer.headers, body }
        const isDownload = req.url?.startsWith('/api/files/') === true
        if (mode === 'tamper-answer' && isAnswer) body = Buffer.from(body.toString('utf8').replace('"1.1.0"', '"1.1.1"'))
        if (mode === 'tamper-download' && isDownload) {
          body = Buffer.from(body)
          body[body.length - 30] = body[body.length - 30]! ^ 0xff
        }
        const headers = { ...answer.headers, 'content-length': String(body.length) }
        if (mode === 'hang-up' && isDownload) {
          res.writeHead(answer.statusCode ?? 502, headers)
          res.write(body.subarray(0, Math.floor(body.length / 2)), () => res.destroy())
          return
        }
        res.writeHead(answer.statusCode ?? 502, headers)
        res.end(body)
      })
    })
    upstream.on('error', () => res.destroy())
    req.pipe(upstream)
  })
  return new Promise((resolve) => proxy.listen(0, '127.0.0.1', () => resolve(proxy)))
}

interface Run { code: number | null; stdout: string; stderr: string }

function sync(folder: string, args: string[], site = proxyUrl): Promise<Run> {
  const child = spawn(process.execPath, [BIN, folder, '--site', site, ...args], { env: { ...process.env, PACKS_MASTER_PASSWORD: PASSWORD }, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk: Buffer) => { stdout += chunk })
  child.stderr.on('data', (chunk: Buffer) => { stderr += chunk })
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })))
}

/** Exit 1 and one line on stderr about it: what a player sees. */
function failed(run: Run, pattern: RegExp): void {
  assert.equal(run.code, 1, `exit 1 expected: ${run.stdout} ${run.stderr}`)
  const lines = run.stderr.split('\n').filter((line) => line !== '' && !line.startsWith('downloading '))
  assert.equal(lines.length, 1, `one line: ${run.stderr}`)
  assert.match(lines[0]!, pattern)
  assert.doesNotMatch(run.stderr, /^\s+at /m)
}

/** A folder with the old archive under the name a world would know it by, and a zip of somebody else's. */
function folderWithOldArchive(): string {
  const folder = tempDir('packs-sync-')
  fs.writeFileSync(path.join(folder, 'mossy.zip'), oldArchive)
  fs.writeFileSync(path.join(folder, 'not-ours.zip'), Buffer.from('PK\u0005\u0006'.padEnd(22, '\u0000')))
  return folder
}

const readLock = (folder: string) => JSON.parse(fs.readFileSync(path.join(folder, '.packs-sync.json'), 'utf8')) as { site: string; key: { id: string }; retired_keys?: Record<string, string>; packs: Record<string, { namespace: string; pack_id: string }> }
/** What 'record' mode kept (a function, so the compiler does not take it for the undefined set before the run). */
const recordedAnswer = () => recorded
const leftovers = (folder: string) => fs.readdirSync(folder).filter((name) => name.endsWith('.tmp') || name === '.packs-sync.lock')
const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex')

before(async () => {
  backends = await suiteBackends()
  server = await startServer({ env: { ...backends.env, PACKS_MASTER_PASSWORD: PASSWORD } })
  await seedDemoSite(server)
  const gate = { 'x-master-password': PASSWORD }
  const pack = (await (await fetch(`${server.url}/api/packs/steve/mossy-dungeons/`, { headers: gate })).json()) as { versions: { name: string; download_url: string }[] }
  const file = async (name: string) => Buffer.from(await (await fetch(pack.versions.find((v) => v.name === name)!.download_url, { headers: gate })).arrayBuffer())
  oldArchive = await file('1.0.0')
  newArchive = await file('1.1.0')
  proxy = await startProxy(new URL(server.url))
  proxyUrl = `http://127.0.0.1:${(proxy.address() as { port: number }).port}`
})
after(async () => {
  proxy?.close()
  await server?.stop()
  await backends?.release()
})

describe('packs-sync against the real server', { timeout: 120_000 }, () => {
  test('first run: pins the key, replaces the old archive under its own name, leaves others alone; the second changes nothing', async () => {
    mode = 'pass'
    const folder = folderWithOldArchive()
    const first = await sync(folder, ['--pack-format', '57'])
    assert.equal(first.code, 0, first.stderr)
    assert.match(first.stdout, /pinned the site's signing key [0-9a-f]{16}/)
    assert.match(first.stdout, /mossy\.zip: steve:mossy-dungeons 1\.0\.0 -> 1\.1\.0, updated/)
    assert.match(first.stdout, /not-ours\.zip: not from this site, left alone/)
    assert.deepEqual(fs.readFileSync(path.join(folder, 'mossy.zip')), newArchive)
    assert.deepEqual(leftovers(folder), [])
    const lock = JSON.parse(fs.readFileSync(path.join(folder, '.packs-sync.json'), 'utf8')) as { key: { id: string }; packs: Record<string, { version: string; sha256: string }> }
    assert.equal(lock.packs['mossy.zip']?.version, '1.1.0')
    assert.equal(lock.packs['mossy.zip']?.sha256, sha256(newArchive))

    const second = await sync(folder, ['--pack-format', '57'])
    assert.equal(second.code, 0, second.stderr)
    assert.match(second.stdout, /mossy\.zip: steve:mossy-dungeons 1\.1\.0, up to date/)
    assert.doesNotMatch(second.stdout, /pinned/)
  })

  test('the player\'s Minecraft version decides: 1.21 keeps 1.0.0, which is the newest for it', async () => {
    const folder = folderWithOldArchive()
    const run = await sync(folder, ['--pack-format', '48'])
    assert.equal(run.code, 0, run.stderr)
    assert.match(run.stdout, /mossy\.zip: steve:mossy-dungeons 1\.0\.0, up to date/)
    assert.deepEqual(fs.readFileSync(path.join(folder, 'mossy.zip')), oldArchive)
  })

  test('a changed answer does not verify: exit 1, one line, nothing replaced', async () => {
    const folder = folderWithOldArchive()
    mode = 'tamper-answer'
    try {
      failed(await sync(folder, ['--pack-format', '57']), /does not match its Content-Digest/)
    } finally {
      mode = 'pass'
    }
    assert.deepEqual(fs.readFileSync(path.join(folder, 'mossy.zip')), oldArchive)
    assert.deepEqual(leftovers(folder), [])
  })

  test('a changed download does not match the signed SHA-256: the old archive stays, no temporary file', async () => {
    const folder = folderWithOldArchive()
    mode = 'tamper-download'
    try {
      failed(await sync(folder, ['--pack-format', '57']), /does not match the signed SHA-256/)
    } finally {
      mode = 'pass'
    }
    assert.deepEqual(fs.readFileSync(path.join(folder, 'mossy.zip')), oldArchive)
    assert.deepEqual(leftovers(folder), [])
  })

  test('the site going away mid-download: one line, the old archive stays, no temporary file', async () => {
    const folder = folderWithOldArchive()
    mode = 'hang-up'
    try {
      failed(await sync(folder, ['--pack-format', '57']), /went away while downloading steve:mossy-dungeons 1\.1\.0|has \d+ bytes, not the signed/)
    } finally {
      mode = 'pass'
    }
    assert.deepEqual(fs.readFileSync(path.join(folder, 'mossy.zip')), oldArchive)
    assert.deepEqual(leftovers(folder), [])
  })

  test('a key the pinned one never endorsed is refused, unless told; a rotation is followed without being told', async () => {
    const folder = folderWithOldArchive()
    // Pinned from "another site": a key this site never had.
    const { generateKeyPairSync } = await import('node:crypto')
    const raw = Buffer.from(generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' }).x!, 'base64url')
    const stranger = { id: sha256(raw).slice(0, 16), public_key: raw.toString('base64') }
    fs.writeFileSync(path.join(folder, '.packs-sync.json'), JSON.stringify({ site: proxyUrl, key: stranger, packs: {} }))
    failed(await sync(folder, ['--pack-format', '57']), /signing key changed from [0-9a-f]{16} to [0-9a-f]{16} without the old key vouching for it.*--trust-new-key/)
    assert.deepEqual(fs.readFileSync(path.join(folder, 'mossy.zip')), oldArchive)
    const told = await sync(folder, ['--pack-format', '57', '--trust-new-key'])
    assert.equal(told.code, 0, told.stderr)
    assert.match(told.stdout, /now trusting the site's signing key/)
    const pinned = (JSON.parse(fs.readFileSync(path.join(folder, '.packs-sync.json'), 'utf8')) as { key: { id: string } }).key.id

    // The site rotates its key; the running server signs with the new one within 5 s.
    await cliOk(['signing-key', 'rotate'], server.env)
    let run: Run | undefined
    for (let i = 0; i < 40; i++) {
      run = await sync(folder, ['--pack-format', '57'])
      if (/now trusting/.test(run.stdout)) break
      await new Promise((resolve) => setTimeout(resolve, 250))
    }
    assert.equal(run!.code, 0, run!.stderr)
    assert.match(run!.stdout, /now trusting the site's signing key/, 'followed the endorsement from the pinned key')
    assert.notEqual((JSON.parse(fs.readFileSync(path.join(folder, '.packs-sync.json'), 'utf8')) as { key: { id: string } }).key.id, pinned)
  })

  test('an unreachable site, a wrong gate password, a bad command line', async () => {
    const folder = folderWithOldArchive()
    failed(await sync(folder, ['--pack-format', '57'], `http://127.0.0.1:${await freePort()}`), /cannot reach http:\/\/127\.0\.0\.1:\d+/)
    const wrong = spawn(process.execPath, [BIN, folder, '--site', proxyUrl, '--pack-format', '57'], { env: { ...process.env, PACKS_MASTER_PASSWORD: 'wrong' } })
    let stderr = ''
    wrong.stderr.on('data', (chunk: Buffer) => { stderr += chunk })
    const code = await new Promise((resolve) => wrong.on('close', resolve))
    assert.equal(code, 1)
    assert.match(stderr, /^packs-sync: the site refused GET \/api\/update-check\/keys\/: 401 /)
    const usage = await sync(folder, [])
    assert.equal(usage.code, 2)
    assert.match(usage.stderr, /--game-version or --pack-format/)
    assert.deepEqual(fs.readFileSync(path.join(folder, 'mossy.zip')), oldArchive)
  })

  test('the bundle runs with Node alone, copied anywhere as one file (how a site serves it)', async () => {
    const dir = tempDir('packs-sync-alone-')
    const alone = path.join(dir, 'packs-sync.mjs')
    fs.copyFileSync(path.join(ROOT, 'packages', 'packs-sync', 'dist', 'packs-sync.mjs'), alone)
    const folder = folderWithOldArchive()
    const child = spawn(process.execPath, [alone, folder, '--site', proxyUrl, '--pack-format', '57', '--dry-run'], { cwd: dir, env: { ...process.env, PACKS_MASTER_PASSWORD: PASSWORD } })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => { stdout += chunk })
    child.stderr.on('data', (chunk: Buffer) => { stderr += chunk })
    const code = await new Promise((resolve) => child.on('close', resolve))
    assert.equal(code, 0, stderr)
    assert.match(stdout, /mossy\.zip: steve:mossy-dungeons 1\.0\.0 -> 1\.1\.0 \(dry run: not downloaded\)/)
  })

  test('a folder follows its site: another URL is refused until --rebind, which keeps the pinned key', async () => {
    const folder = folderWithOldArchive()
    assert.equal((await sync(folder, ['--pack-format', '57', '--dry-run'])).code, 0)
    const pinned = readLock(folder).key.id
    failed(await sync(folder, ['--pack-format', '57'], server.url), /is kept in step with http:\/\/127\.0\.0\.1:\d+, not http:\/\/127\.0\.0\.1:\d+; if the site moved there, run again with --rebind/)
    const moved = await sync(folder, ['--pack-format', '57', '--rebind', '--dry-run'], server.url)
    assert.equal(moved.code, 0, moved.stderr)
    assert.equal(readLock(folder).site, server.url)
    assert.equal(readLock(folder).key.id, pinned)
  })

  test('a file the lock knows as one pack is never moved to another the site now names, unless --allow-pack-change', async () => {
    const folder = folderWithOldArchive()
    assert.equal((await sync(folder, ['--pack-format', '48'])).code, 0)
    // As if the archive had been installed as another pack's (which the site now says it is not).
    const lock = readLock(folder)
    lock.packs['mossy.zip'] = { ...lock.packs['mossy.zip']!, namespace: 'alice', pack_id: 'glowing-ores' }
    fs.writeFileSync(path.join(folder, '.packs-sync.json'), JSON.stringify(lock))
    const refused = await sync(folder, ['--pack-format', '57'])
    assert.equal(refused.code, 1, refused.stdout)
    assert.match(refused.stderr, /^mossy\.zip: packs-sync knows it as alice:glowing-ores, but the site now names steve:mossy-dungeons; left alone \(--allow-pack-change accepts it\)\n$/)
    assert.deepEqual(fs.readFileSync(path.join(folder, 'mossy.zip')), oldArchive)
    const allowed = await sync(folder, ['--pack-format', '57', '--allow-pack-change'])
    assert.equal(allowed.code, 0, allowed.stderr)
    assert.deepEqual(fs.readFileSync(path.join(folder, 'mossy.zip')), newArchive)
  })

  // Last: it retires the site's key at once.
  test('a recorded answer replayed: refused when it answers another question, and once its key is retired (npx packs signing-key rotate --grace-days 0)', async () => {
    const folder = folderWithOldArchive()
    recorded = undefined
    mode = 'record'
    let pinned: string
    try {
      const first = await sync(folder, ['--pack-format', '57', '--dry-run'])
      assert.equal(first.code, 0, first.stderr)
      pinned = readLock(folder).key.id
    } finally {
      mode = 'pass'
    }
    const answer = recordedAnswer()
    assert.ok(answer, 'an answer was recorded')
    assert.match(String(answer.headers['signature-input']), new RegExp(`^packs=\\(.*\\);created=\\d+;expires=\\d+;keyid="${pinned}";alg="ed25519";tag="packs-update"$`))

    mode = 'replay'
    try {
      // The same archives asked about for another game: the answer for pack format 57 does not answer it.
      failed(await sync(folderWithOldArchive(), ['--pack-format', '48']), /answer does not match its signature .*another question/)
      // The very question it answers is accepted while its key is good.
      const again = await sync(folder, ['--pack-format', '57', '--dry-run'])
      assert.equal(again.code, 0, again.stderr)

      await cliOk(['signing-key', 'rotate', '--grace-days', '0'], server.env)
      const retired = new RegExp(`answer is signed by key ${pinned}, which was retired at `)
      failed(await sync(folder, ['--pack-format', '57', '--dry-run']), retired)
      assert.ok(readLock(folder).retired_keys?.[pinned], 'the lock remembers the retirement')
      assert.notEqual(readLock(folder).key.id, pinned, 'the pin followed the endorsement to the new key')
      // A client that never saw the old key is not fooled either.
      failed(await sync(folderWithOldArchive(), ['--pack-format', '57', '--dry-run']), retired)
    } finally {
      mode = 'pass'
    }
  })
})
