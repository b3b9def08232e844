// The README's Java example for updater authors (issue 11, item 8) is run, not
// just shown: the ```java block of the README's "For updater authors" section
// is written to a file as it stands and run with the JDK's source launcher
// (`java VerifyPacks.java …`) against a listening server. It must accept the
// site's signed answer with the right pinned key, and refuse it with a wrong
// key or when a proxy changed one byte of the body.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import { generateKeyPairSync } from 'node:crypto'
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

/** The README's Java block, exactly as the README has it. */
function readmeJava(): string {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8')
  const section = readme.slice(readme.indexOf('## For updater authors'))
  const block = /```java\n([\s\S]*?)```/.exec(section)
  assert.ok(block, 'the README\'s "For updater authors" section has a ```java block')
  return block[1]!
}

function runJava(site: string, pinnedId: string, pinnedKey: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('java', ['VerifyPacks.java', site, 'alice:lamps', pinnedId, pinnedKey], {
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
  const made = await siteWith({ users: ['alice'] })
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
})

after(async () => {
  if (skip) return
  await new Promise((resolve) => tamperer.close(resolve))
  await site.close()
  fs.rmSync(dir, { recursive: true, force: true })
})

test('the README\'s Java verifies the site\'s signed batch answer with the pinned key', { skip }, async () => {
  const run = await runJava(origin, key.id, key.public_key)
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
