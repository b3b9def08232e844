// backends: sqlite — pages are backend-independent; test/http/pages-*.test.ts cover them on every backend
// Stored XSS in a real browser: a pack whose every text field carries script
// payloads is shown on the browse page and its own page as plain text; no
// payload runs (window.__xss stays unset, no dialog opens), no <script> or
// event-handler attribute reaches the DOM, and the javascript: link is no link.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { Page } from 'playwright-core'
import { assertNoProblems, startBrowserSite, type BrowserSite } from '../helpers/browser.js'
import { datapack } from '../helpers/fixtures.js'
import { createPackAs } from './packs-api.js'

const SCRIPT = '<script>window.__xss=1</script>'
const IMG = '<img src=x onerror="window.__xss=1">'
const LINK = '[click](javascript:window.__xss=1)'

const TITLE = `XSS ${SCRIPT} ${IMG}`
const SUMMARY = `Summary ${IMG} ${SCRIPT}`
const DESCRIPTION = `Description ${SCRIPT}\n\n${IMG}\n\n${LINK}\n\n<a href="javascript:window.__xss=1">raw link</a> <svg onload="window.__xss=1"></svg>`
const VERSION = `v1 ${SCRIPT}`
const CHANGELOG = `Changelog ${IMG}\n${SCRIPT}`

interface DomReport {
  xss: unknown
  scripts: number
  inlineScripts: number
  handlers: string[]
  javascriptLinks: number
}

/** What would show that markup got through: the flag, script elements, on* attributes, javascript: links. */
function inspect(page: Page): Promise<DomReport> {
  return page.evaluate(() => {
    const handlers: string[] = []
    for (const el of document.querySelectorAll('*')) {
      for (const attr of el.getAttributeNames()) if (attr.toLowerCase().startsWith('on')) handlers.push(`${el.tagName}[${attr}]`)
    }
    return {
      xss: (window as unknown as { __xss?: unknown }).__xss,
      scripts: document.querySelectorAll('main script').length,
      inlineScripts: document.querySelectorAll('script:not([src])').length,
      handlers,
      javascriptLinks: [...document.querySelectorAll('a')].filter((a) => /^\s*(javascript|data|vbscript):/i.test(a.getAttribute('href') ?? '')).length,
    }
  })
}

function assertClean(report: DomReport, where: string): void {
  assert.equal(report.xss, undefined, `${where}: window.__xss stays undefined`)
  assert.equal(report.scripts, 0, `${where}: no <script> inside main`)
  assert.equal(report.inlineScripts, 0, `${where}: no inline <script> at all`)
  assert.deepEqual(report.handlers, [], `${where}: no event-handler attributes`)
  assert.equal(report.javascriptLinks, 0, `${where}: no javascript:/data: links`)
}

describe('stored XSS in a browser', { timeout: 120_000 }, () => {
  let site: BrowserSite
  before(async () => { site = await startBrowserSite() })
  after(() => site?.close())

  test('payloads in title, summary, description, version name and changelog render as text and never run', async () => {
    const page = await site.newPage()
    const dialogs: string[] = []
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message())
      void dialog.dismiss()
    })
    await site.signUpDirectly(page, 'Mallory')
    const pack = await createPackAs(page, {
      title: TITLE, summary: SUMMARY, description: DESCRIPTION, version_name: VERSION, changelog: CHANGELOG,
    }, await datapack(48))

    // Browse page: the card shows the title and summary as the text they are.
    await page.goto('/')
    const card = page.locator('.pack-card')
    assert.equal(await card.count(), 1)
    assert.equal(await card.locator('.pack-title').innerText(), TITLE)
    assert.equal(await card.locator('.summary').innerText(), SUMMARY)
    assert.equal(await card.locator('.version-name').innerText(), VERSION)
    assertClean(await inspect(page), 'browse page')

    // The search box echoes a payload as its value, not as markup.
    await page.goto(`/?q=${encodeURIComponent(SCRIPT)}`)
    assert.equal(await page.getByLabel('Search packs').inputValue(), SCRIPT)
    assert.match(await page.locator('.result-count').innerText(), /window\.__xss=1/)
    assertClean(await inspect(page), 'search results')

    // The pack page, reached from the search result.
    await page.locator('.pack-title a').click()
    await page.waitForURL(`**/packs/${pack.namespace}/${pack.pack_id}/`)
    assert.equal(await page.locator('h1').innerText(), TITLE)
    assert.equal(await page.title(), `${TITLE} · Packs`)
    assert.equal(await page.locator('.pack-heading .summary').innerText(), SUMMARY)
    const description = await page.locator('.markdown').innerText()
    for (const text of [SCRIPT, IMG, LINK, '<a href="javascript:window.__xss=1">raw link</a>', '<svg onload="window.__xss=1"></svg>']) {
      assert.ok(description.includes(text), `the description shows ${text} as text: ${description}`)
    }
    assert.equal(await page.locator('.version-name').innerText(), VERSION)
    assert.equal(await page.locator('.changelog').innerText(), CHANGELOG)
    assertClean(await inspect(page), 'pack page')

    // Clicking where the link would be does nothing: it is text, not a link.
    assert.equal(await page.getByRole('link', { name: 'click' }).count(), 0)
    await page.locator('.markdown p', { hasText: '[click]' }).click()
    await page.locator('.markdown p', { hasText: 'raw link' }).click()
    await page.waitForTimeout(200)
    assert.equal(page.url(), site.url(`/packs/${pack.namespace}/${pack.pack_id}/`), 'no navigation')
    assertClean(await inspect(page), 'pack page after clicking')

    assert.deepEqual(dialogs, [], 'no dialog was opened')
    assertNoProblems(site)
  })
})
