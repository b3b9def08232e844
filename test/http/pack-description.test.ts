// A pack's description on its page: rendered once per
// change, not on every view, and hostile Markdown published through the
// normal flow renders in bounded time, never a 500. Runs on SQLite + disk and
// on PostgreSQL + S3.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { descriptionCache } from '../../src/web/markdown.js'
import { siteWith, type TestSite, type TestUser } from '../helpers/app.js'
import { publishPack, type PackJson } from '../helpers/packs.js'

/** The largest realistic description whose draft still fits the 256 KiB autosave limit. */
function largeDescription(): string {
  const para = '## Features\n\nThis **pack** adds _many_ things: [a link](https://example.org), `code`, and a list:\n\n'
    + '- one item with **bold** text\n- two https://example.com/auto\n- three ![image](/x.png)\n\n'
    + '| block | light |\n|---|---|\n| stone | 0 |\n\n> a quote with *emphasis*\n\n'
  let text = ''
  while (JSON.stringify({ draft: '00000000-0000-0000-0000-000000000000', data: { title: 'Large description', version_name: '1.0.0', description: text + para } }).length < 255 * 1024) text += para
  return text
}

describe('pack descriptions on the pack page', () => {
  let site: TestSite
  let alice: TestUser
  before(async () => ({ site, alice } = await siteWith({ users: ['alice'] })))
  after(() => site.close())

  const view = (pack: PackJson) => site.app.inject({ url: `/packs/${pack.namespace}/${pack.pack_id}/`, headers: site.gate })

  test('a large description is rendered on the first view only; later views reuse it', async (t) => {
    const description = largeDescription()
    const pack = await publishPack(site, alice, { title: 'Large description', description })
    const timed = async () => {
      const started = performance.now()
      const res = await view(pack)
      assert.equal(res.statusCode, 200)
      assert.match(res.body, /<div class="markdown"><h4>Features<\/h4>/)
      return { ms: performance.now() - started, body: res.body }
    }
    const misses = descriptionCache.misses
    const first = await timed()
    assert.equal(descriptionCache.misses, misses + 1, 'rendered on the first view')
    const hits = descriptionCache.hits
    const next = [await timed(), await timed(), await timed()]
    assert.equal(descriptionCache.misses, misses + 1, 'not rendered again')
    assert.equal(descriptionCache.hits, hits + 3)
    for (const again of next) assert.equal(again.body, first.body)
    t.diagnostic(`${description.length} characters of Markdown: first view ${first.ms.toFixed(0)} ms, `
      + `next views ${next.map((n) => n.ms.toFixed(0)).join(', ')} ms`)
  })

  test('hostile descriptions publish and render (bounded time, never a 500)', async () => {
    const hostile: Record<string, string> = {
      quotes: '>'.repeat(10_000) + ' deep',
      brackets: '['.repeat(120_000),
      images: '!['.repeat(60_000),
      emphasis: '*_'.repeat(60_000),
      lists: Array.from({ length: 300 }, (_, i) => `${' '.repeat(i * 2)}- item`).join('\n'),
      links: '[x]('.repeat(30_000),
      separators: 'a\u2028b **c** \uFEFF \u00a0*d*',
    }
    for (const [name, description] of Object.entries(hostile)) {
      const pack = await publishPack(site, alice, { title: `Hostile ${name}`, description })
      const started = performance.now()
      const res = await view(pack)
      assert.equal(res.statusCode, 200, `${name}: ${res.statusCode}`)
      assert.match(res.body, /<div class="markdown">/)
      // Generous for a shared test machine; a quadratic rule would take far longer at this size.
      assert.ok(performance.now() - started < 10_000, `${name}: ${(performance.now() - started).toFixed(0)} ms`)
    }
  })
})
