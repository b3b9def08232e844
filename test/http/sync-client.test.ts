// The packs-sync client a site serves (src/sync-client/, src/pages/sync-client.ts), through app.inject():
// a site whose bundle was never built still starts and says what makes it; the page's commands carry the
// site's own address (PACKS_BASE_URL, path and all) in a form a shell reads back unchanged; the page is
// linked from every page's footer. test/e2e/packs-sync-download.test.ts fetches and runs it as a player.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import path from 'node:path'
import { Writable } from 'node:stream'
import { expectError, makeSite, type TestSite } from '../helpers/app.js'
import { tempDir } from '../helpers/temp.js'

const ENTITIES: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'" }
function textOf(html: string, id: string): string {
  const match = new RegExp(`<code id="${id}">([^<]*)</code>`).exec(html)
  assert.ok(match, `the page has <code id="${id}">`)
  return match[1]!.replace(/&(?:amp|lt|gt|quot|#39);/g, (entity) => ENTITIES[entity]!)
}

describe('a site started without the bundle (npm run build not run)', () => {
  let site: TestSite
  const logged: { level: number; msg: string }[] = []
  before(async () => {
    const stream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split('\n')) if (line) logged.push(JSON.parse(line) as (typeof logged)[number])
        done()
      },
    })
    site = await makeSite({}, { syncClientBundle: path.join(tempDir('packs-sync-unbuilt-'), 'packs-sync.mjs'), logger: { level: 'info', stream } })
  })
  after(() => site.close())

  test('starts, saying once in its log that players get no packs-sync and what makes it', () => {
    const warnings = logged.filter((line) => line.level === 40 && line.msg.includes('packs-sync'))
    assert.equal(warnings.length, 1, JSON.stringify(logged))
    assert.match(warnings[0]!.msg, /^packs-sync is not served to players: \/\S+\/packs-sync\.mjs is missing; "npm run build" makes it$/)
  })

  test('the download and the API answer 404 saying npm run build makes it', async () => {
    for (const method of ['GET', 'HEAD'] as const) {
      const res = await site.app.inject({ method, url: '/packs-sync/packs-sync.mjs', headers: site.gate })
      assert.equal(res.statusCode, 404, method)
      assert.equal(res.headers.etag, undefined)
      assert.notEqual(res.headers['content-disposition'], 'attachment; filename="packs-sync.mjs"')
    }
    expectError(await site.app.inject({ url: '/packs-sync/packs-sync.mjs', headers: site.gate }), 404, /not built.*"npm run build"/)
    expectError(await site.app.inject({ url: '/api/packs-sync/', headers: site.gate }), 404, /not built.*"npm run build"/)
    // A browser following the link gets the error as a page.
    const browser = await site.app.inject({ url: '/packs-sync/packs-sync.mjs', headers: { ...site.gate, accept: 'text/html' } })
    assert.equal(browser.statusCode, 404)
    assert.match(browser.body, /npm run build/)
  })

  test('the page still explains packs-sync, says it is not available here, and links no download', async () => {
    const res = await site.app.inject({ url: '/packs-sync/', headers: { ...site.gate, accept: 'text/html' } })
    assert.equal(res.statusCode, 200)
    assert.match(res.body, /keeps a folder of packs/)
    assert.match(res.body, /role="alert">Not available here: packs-sync is not built on this server[^<]*npm run build/)
    assert.doesNotMatch(res.body, /href="\/packs-sync\/packs-sync\.mjs"|sync-client-commands/)
  })
})

describe('a site behind PACKS_BASE_URL', () => {
  // A path with characters a shell would act on: a URL path may hold them.
  const BASE = "https://packs.example/it's $HOME;(x)"
  const ORIGIN = new URL(BASE).origin + new URL(BASE).pathname
  let site: TestSite
  let bundle: Buffer
  before(async () => {
    site = await makeSite({ PACKS_BASE_URL: BASE })
    bundle = Buffer.from((await site.app.inject({ url: '/packs-sync/packs-sync.mjs', headers: site.gate })).rawPayload)
  })
  after(() => site.close())

  test('the API and the page name the bundle by the public address, its size and SHA-256', async () => {
    const api = await site.app.inject({ url: '/api/packs-sync/', headers: site.gate })
    assert.equal(api.statusCode, 200)
    const sha256 = createHash('sha256').update(bundle).digest('hex')
    assert.deepEqual(api.json(), { filename: 'packs-sync.mjs', size: bundle.length, sha256, url: `${ORIGIN}/packs-sync/packs-sync.mjs` })
    const page = await site.app.inject({ url: '/packs-sync/', headers: { ...site.gate, accept: 'text/html' } })
    assert.equal(page.statusCode, 200)
    assert.equal(textOf(page.body, 'sync-client-sha256'), sha256)
    assert.match(page.body, /<a href="\/packs-sync\/packs-sync\.mjs" download="packs-sync\.mjs">/)
  })

  test('the commands carry the address so a POSIX shell reads it back unchanged, whatever it holds', async () => {
    const page = await site.app.inject({ url: '/packs-sync/', headers: { ...site.gate, accept: 'text/html' } })
    const commands = textOf(page.body, 'sync-client-commands').split('\n')
    assert.equal(commands.length, 3)
    // The password goes to curl on its standard input, never among its arguments.
    const fetchUrl = /^printf 'X-Master-Password: %s\\n' "\$PACKS_MASTER_PASSWORD" \| curl -fsS -H @- -o packs-sync\.mjs (.+) &&$/.exec(commands[0]!)?.[1]
    const site_ = /--site (.+) --game-version \S+$/.exec(commands[2]!)?.[1]
    assert.ok(fetchUrl && site_, commands.join('\n'))
    const echoed = spawnSync('sh', ['-c', `printf '%s\\n' ${fetchUrl} ${site_}`], { encoding: 'utf8', env: { PATH: process.env.PATH, HOME: '/nonexistent' } })
    assert.equal(echoed.status, 0, echoed.stderr)
    assert.equal(echoed.stdout, `${ORIGIN}/packs-sync/packs-sync.mjs\n${ORIGIN}\n`)
  })

  test('every page links it from the footer', async () => {
    for (const url of ['/', '/packs-sync/', '/login/']) {
      const res = await site.app.inject({ url, headers: { ...site.gate, accept: 'text/html' } })
      assert.equal(res.statusCode, 200, url)
      assert.match(res.body, /<footer class="site-footer">.*<a href="\/packs-sync\/">packs-sync<\/a>/, url)
    }
  })
})
