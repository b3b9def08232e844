// docs/update-protocol.md's worked verification example is run, not just
// shown: its two ```js blocks are written to files as they stand (the
// verifier as verify-packs.mjs, the example beside it) and run with node; the
// example must print its created and expires, and fail once one byte of the
// body, the query or the time changes. The verifier is then used on a live
// site's signed answers (the single check with a query, a batch with its
// Content-Digest), and must refuse each of them as the answer to another
// question.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { ROOT } from '../helpers/server.js'
import { siteWith, type TestSite, type TestUser } from '../helpers/app.js'
import { datapack } from '../helpers/fixtures.js'
import { publishPack } from '../helpers/packs.js'
import { tempDir } from '../helpers/temp.js'

type Verify = (
  request: { method: string; url: string; contentDigest?: string },
  response: { status: number; headers: Record<string, string>; body: Buffer },
  key: { id: string; public_key: string },
  newest?: number,
  now?: number,
) => { created: number; expires: number }

let dir: string
let site: TestSite
let alice: TestUser
let verifyPacksAnswer: Verify

/** The doc's ```js blocks, in order, exactly as it has them. */
function docBlocks(): string[] {
  const doc = fs.readFileSync(path.join(ROOT, 'docs', 'update-protocol.md'), 'utf8')
  return [...doc.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]!)
}

function runExample(source: string): { code: number | null; stdout: string; stderr: string } {
  fs.writeFileSync(path.join(dir, 'example.mjs'), source)
  const run = spawnSync(process.execPath, ['example.mjs'], { cwd: dir, encoding: 'utf8' })
  return { code: run.status, stdout: run.stdout, stderr: run.stderr }
}

before(async () => {
  dir = tempDir('packs-protocol-doc-')
  const [verifier] = docBlocks()
  assert.ok(verifier, 'the doc has the verifier block')
  fs.writeFileSync(path.join(dir, 'verify-packs.mjs'), verifier)
  ;({ verifyPacksAnswer } = (await import(pathToFileURL(path.join(dir, 'verify-packs.mjs')).href)) as { verifyPacksAnswer: Verify })
  ;({ site, alice } = await siteWith({ users: ['alice'] }))
  await publishPack(site, alice, { title: 'Lamps', version_name: '1.0' }, { archive: await datapack(48) })
})
after(async () => {
  await site?.close()
  fs.rmSync(dir, { recursive: true, force: true })
})

describe('the worked example of docs/update-protocol.md', () => {
  test('runs as written and prints its times; a changed body, query or time throws', () => {
    const blocks = docBlocks()
    assert.equal(blocks.length, 2, 'a verifier and an example')
    const example = blocks[1]!
    const run = runExample(example)
    assert.equal(run.code, 0, run.stderr)
    assert.equal(run.stdout.trim(), '{ created: 1795852800, expires: 1795856400 }')
    for (const [what, changed] of [
      ['the body', example.replace('"version":"1.2"', '"version":"1.3"')],
      ['the query', example.replace('?game_version=1.21.4', '?game_version=1.20.1')],
      ['the time (past expires)', example.replace('1795852800 + 60', '1795856400 + 1')],
    ] as const) {
      assert.notEqual(changed, example, `${what} is in the example`)
      const refused = runExample(changed)
      assert.notEqual(refused.code, 0, `${what} changed: refused`)
      assert.match(refused.stderr, /Error: /)
    }
  })

  test('verifies a live site\'s answers, and refuses them as answers to other questions', async () => {
    const keys = (await site.app.inject({ url: '/api/update-check/keys/', headers: site.gate })).json() as { keys: Array<{ id: string; public_key: string }> }
    const key = keys.keys[0]!
    const url = '/api/packs/alice/lamps/latest?game_version=1.21.1'
    const single = await site.app.inject({ url, headers: site.gate })
    assert.equal(single.statusCode, 200, single.body)
    const response = (res: typeof single) => ({ status: res.statusCode, headers: res.headers as Record<string, string>, body: res.rawPayload })
    const times = verifyPacksAnswer({ method: 'GET', url }, response(single), key)
    assert.ok(times.expires > times.created)
    assert.throws(() => verifyPacksAnswer({ method: 'GET', url: '/api/packs/alice/lamps/latest' }, response(single), key), /question|verify/)
    assert.throws(() => verifyPacksAnswer({ method: 'GET', url }, response(single), key, times.created + 1), /older than an answer already accepted/)

    const body = JSON.stringify({ packs: ['alice:lamps'], game_version: '1.21.1' })
    const contentDigest = `sha-256=:${createHash('sha256').update(body).digest('base64')}:`
    const batch = await site.app.inject({
      method: 'POST', url: '/api/update-check/', payload: body,
      headers: { ...site.gate, 'content-type': 'application/json', 'content-digest': contentDigest },
    })
    assert.equal(batch.statusCode, 200, batch.body)
    verifyPacksAnswer({ method: 'POST', url: '/api/update-check/', contentDigest }, response(batch), key)
    const other = `sha-256=:${createHash('sha256').update(body.replace('1.21.1', '1.20.1')).digest('base64')}:`
    assert.throws(() => verifyPacksAnswer({ method: 'POST', url: '/api/update-check/', contentDigest: other }, response(batch), key), /does not verify/)
  })
})
