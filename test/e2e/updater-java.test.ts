// The Java example for updater authors is run, not just shown: the ```java
// block of docs/updaters.md ("Check what you got", where the README's "for
// updater authors" link leads) is written to a file as it stands and run with the JDK's source launcher
// (`java VerifyPacks.java …`, as the page says) against a listening server; the other runs use the same
// file compiled once with javac (the source launcher compiles it again at every start, 2 s of CPU each).
// It must accept the
// site's signed answer with the right pinned key, and refuse it with a wrong
// key, when a proxy changed one byte of the body, when the answer expired
// (an old answer replayed), and when a proxy asked the site another question.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import { createHash, generateKeyPairSync } from 'node:crypto'
import fs from 'node:fs'
import http from 'node:http'
import path from 'node:path'
import { ROOT } from '../helpers/server.js'
import { MASTER_PASSWORD, siteWith, type TestSite } from '../helpers/app.js'
import { zip } from '../helpers/fixtures.js'
import { publishPack } from '../helpers/packs.js'
import { tempDir } from '../helpers/temp.js'

const javaMissing = spawnSync('java', ['-version'], { stdio: 'ignore' }).error !== undefined
// In CI a missing JDK fails the test instead (the machine has one: /work/.library/env).
const skip = javaMissing && !process.env.CI ? 'java is not installed (apt-get install default-jdk-headless); skipped outside CI' : false

let site: TestSite
let origin: string
let dir: string
let key: { id: string; public_key: string }
let tamperer: http.Server
let tampererUrl: string
let asker: http.Server
let askerUrl: string
/** The site's clock: a test moves it back to make the site sign an answer that has long expired. */
let now = Date.now()

/** A proxy that passes everything through, changing each request's body with `change` (and its Content-Digest to match). */
async function proxy(change: (body: string) => string): Promise<{ server: http.Server; url: string }> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const body = Buffer.from(change(Buffer.concat(chunks).toString('utf8')))
      const headers: http.OutgoingHttpHeaders = { ...req.headers, 'content-length': String(body.length) }
      if (headers['content-digest'] !== undefined) headers['content-digest'] = `sha-256=:${createHash('sha256').update(body).digest('base64')}:`
      const upstream = http.request(`${origin}${req.url}`, { method: req.method, headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(res)
      })
      upstream.end(body)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { server, url: `http://127.0.0.1:${(server.address() as { port: number }).port}` }
}

/** The Java block of docs/updaters.md, exactly as the page has it. */
function readmeJava(): string {
  const page = fs.readFileSync(path.join(ROOT, 'docs', 'updaters.md'), 'utf8')
  const section = page.slice(page.indexOf('## Check what you got'))
  const block = /```java\n([\s\S]*?)```/.exec(section)
  assert.ok(block, 'docs/updaters.md\'s "Check what you got" section has a ```java block')
  return block[1]!
}

function runJava(site: string, pinnedId: string, pinnedKey: string, options: { sourceLauncher?: boolean } = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const program = options.sourceLauncher ? ['VerifyPacks.java'] : ['-cp', '.', 'VerifyPacks']
  return new Promise((resolve, reject) => {
    const child = spawn('java', [...program, site, 'alice:lamps', pinnedId, pinnedKey], {
      cwd: dir,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, PACKS_PASSWORD: MASTER_PASSWORD },
    })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => { stdout += chunk })
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk })
    child.once('error', reject)
    child.once('close', (code) => resolve({ code, stdout, stderr }))
  })
}

before(async () => {
  if (skip) return
  const made = await siteWith({ users: ['alice'], clock: () => now })
  site = made.site
  const alice = made.alice
  const archive = await zip({ 'pack.mcmeta': JSON.stringify({ pack: { pack_format: 46, description: 'lamps' } }), 'assets/x/a.txt': 'a' })
  await publishPack(site, alice, { title: 'Lamps', version_name: '1.0' }, { archive })
  await site.app.listen({ port: 0, host: '127.0.0.1' })
  const address = site.app.server.address()
  assert.ok(address && typeof address === 'object')
  origin = `http://127.0.0.1:${address.port}`
  const keys = (await site.app.inject({ url: '/api/update-check/keys/', headers: site.gate })).json() as { keys: Array<{ id: string; public_key: string; status: string }> }
  key = keys.keys.find((k) => k.status === 'current')!
  dir = tempDir('packs-java-')
  fs.writeFileSync(path.join(dir, 'VerifyPacks.java'), readmeJava())
  const compiled = await new Promise<{ code: number | null; output: string }>((resolve, reject) => {
    const javac = spawn('javac', ['-d', '.', 'VerifyPacks.java'], { cwd: dir })
    let output = ''
    javac.stdout.setEncoding('utf8').on('data', (chunk: string) => { output += chunk })
    javac.stderr.setEncoding('utf8').on('data', (chunk: string) => { output += chunk })
    javac.once('error', reject)
    javac.once('close', (code) => resolve({ code, output }))
  })
  assert.equal(compiled.code, 0, `javac VerifyPacks.java: ${compiled.output}`)
  // Passes everything through, but changes one byte of the update-check's answer ("Lamps" -> "Lampz").
  tamperer = http.createServer((req, res) => {
    const upstream = http.request(`${origin}${req.url}`, { method: req.method, headers: req.headers }, (answer) => {
      const chunks: Buffer[] = []
      answer.on('data', (chunk: Buffer) => chunks.push(chunk))
      answer.on('end', () => {
        const body = Buffer.from(Buffer.concat(chunks).toString('utf8').replace('"Lamps"', '"Lampz"'))
        res.writeHead(answer.statusCode ?? 502, { ...answer.headers, 'content-length': String(body.length) })
        res.end(body)
      })
    })
    req.pipe(upstream)
  })
  await new Promise<void>((resolve) => tamperer.listen(0, '127.0.0.1', resolve))
  tampererUrl = `http://127.0.0.1:${(tamperer.address() as { port: number }).port}`
  // Asks the site another question than the mod did (another release), with a digest that matches it.
  ;({ server: asker, url: askerUrl } = await proxy((body) => body.replace('"1.21.4"', '"1.20.1"')))
})

after(async () => {
  if (skip) return
  await new Promise((resolve) => tamperer.close(resolve))
  await new Promise((resolve) => asker.close(resolve))
  await site.close()
  fs.rmSync(dir, { recursive: true, force: true })
})

test('the updater authors\' Java verifies the site\'s signed batch answer with the pinned key', { skip }, async () => {
  const run = await runJava(origin, key.id, key.public_key, { sourceLauncher: true })
  assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`)
  assert.match(run.stdout, /^verified: \{"packs":\{"alice:lamps":\{"namespace":"alice","pack_id":"lamps","name":"Lamps"/)
})

test('it refuses the same answer under a key it did not pin, and a body changed on the way', { skip }, async () => {
  const other = Buffer.from(generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' }).x!, 'base64url').toString('base64')
  const wrongKey = await runJava(origin, key.id, other)
  assert.equal(wrongKey.code, 1, wrongKey.stderr)
  assert.match(wrongKey.stdout, /^refused/)
  const wrongId = await runJava(origin, '0123456789abcdef', key.public_key)
  assert.equal(wrongId.code, 1, wrongId.stderr)
  const changed = await runJava(tampererUrl, key.id, key.public_key)
  assert.equal(changed.code, 1, changed.stderr)
  assert.match(changed.stdout, /^refused/)
})

test('it refuses an answer that expired (signed two hours ago) and an answer to another question', { skip }, async () => {
  now = Date.now() - 2 * 3_600_000
  try {
    const replayed = await runJava(origin, key.id, key.public_key)
    assert.equal(replayed.code, 1, replayed.stderr)
    assert.match(replayed.stdout, /^refused/)
  } finally {
    now = Date.now()
  }
  const otherQuestion = await runJava(askerUrl, key.id, key.public_key)
  assert.equal(otherQuestion.code, 1, otherQuestion.stderr)
  assert.match(otherQuestion.stdout, /^refused/)
  // The same proxy passing the question unchanged is accepted: it is the question that makes the difference.
  const same = await proxy((body) => body)
  try {
    const passed = await runJava(same.url, key.id, key.public_key)
    assert.equal(passed.code, 0, `${passed.stdout}\n${passed.stderr}`)
  } finally {
    await new Promise((resolve) => same.server.close(resolve))
  }
})
