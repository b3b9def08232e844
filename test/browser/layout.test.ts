// backends: sqlite — pages are backend-independent; test/http/pages-*.test.ts cover them on every backend
// Every main page at 360 px (a small phone): no horizontal scrolling, nothing
// interactive off-screen, every form control labelled, a visible focus ring
// when moving by keyboard, and not one request to another origin (the site
// must work on a network without internet).
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { Page } from 'playwright-core'
import { assertNoProblems, startBrowserSite, SITE_PASSWORD, type BrowserSite } from '../helpers/browser.js'
import { seedDemoSite, type DemoSite } from '../helpers/demo.js'

const PHONE = { width: 360, height: 740 }

interface LayoutReport {
  scrollWidth: number
  viewport: number
  offscreen: string[]
  unlabelled: string[]
}

/** Measures the page in the browser: overflow, controls outside the viewport, controls without a label. */
function inspect(page: Page): Promise<LayoutReport> {
  return page.evaluate(() => {
    const describe = (el: Element) => `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}${el.getAttribute('name') ? `[name=${el.getAttribute('name')}]` : ''} "${(el.textContent ?? '').trim().slice(0, 30)}"`
    const controls = [...document.querySelectorAll('a[href], button, input, select, textarea')]
      .filter((el) => (el as HTMLInputElement).type !== 'hidden')
      .filter((el) => el.getClientRects().length > 0 && !el.closest('.table-scroll') && !el.closest('.skip-link'))
    const offscreen = controls
      .filter((el) => { const r = el.getBoundingClientRect(); return r.left < -1 || r.right > window.innerWidth + 1 })
      .map(describe)
    const unlabelled = [...document.querySelectorAll('input, select, textarea')]
      .filter((el) => (el as HTMLInputElement).type !== 'hidden')
      .filter((el) => !((el as HTMLInputElement).labels?.length) && !el.getAttribute('aria-label') && !el.getAttribute('aria-labelledby'))
      .map(describe)
    return { scrollWidth: document.documentElement.scrollWidth, viewport: window.innerWidth, offscreen, unlabelled }
  })
}

const inFlight = new WeakMap<Page, Set<unknown>>()

/** Counts the page's requests still under way (from the first call on). */
function trackRequests(page: Page): Set<unknown> {
  let open = inFlight.get(page)
  if (!open) {
    const pending = new Set<unknown>()
    page.on('request', (request) => { pending.add(request) })
    page.on('requestfinished', (request) => { pending.delete(request) })
    page.on('requestfailed', (request) => { pending.delete(request) })
    inFlight.set(page, pending)
    open = pending
  }
  return open
}

/**
 * Loaded, and what the page's script fetched after the load has arrived and
 * been drawn: no request under way across two animation frames. (Playwright's
 * "networkidle" waits half a second of silence on every page instead.)
 */
async function settled(page: Page): Promise<void> {
  const pending = trackRequests(page)
  await page.waitForLoadState('load')
  const deadline = Date.now() + 10_000
  for (;;) {
    while (pending.size > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10))
    await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))))
    if (pending.size === 0 || Date.now() >= deadline) return
  }
}

async function expectPhoneFriendly(page: Page, path: string): Promise<void> {
  trackRequests(page)
  await page.goto(path)
  await settled(page)
  const report = await inspect(page)
  assert.ok(report.scrollWidth <= report.viewport, `${path}: page is ${report.scrollWidth}px wide in a ${report.viewport}px viewport`)
  assert.deepEqual(report.offscreen, [], `${path}: controls outside the viewport`)
  assert.deepEqual(report.unlabelled, [], `${path}: form controls without a label`)
}

describe('the pages at 360 px, by keyboard, offline', () => {
  let site: BrowserSite
  let demo: DemoSite
  const foreignRequests: string[] = []

  before(async () => {
    site = await startBrowserSite()
    demo = await seedDemoSite(site.server)
  })
  after(() => site.close())

  /** A page at phone size whose requests to other origins are noted. */
  async function phonePage(): Promise<Page> {
    const page = await site.newPage(PHONE)
    page.on('request', (request) => {
      if (!request.url().startsWith(site.server.url) && !request.url().startsWith('blob:') && !request.url().startsWith('data:')) {
        foreignRequests.push(request.url())
      }
    })
    return page
  }

  /** Signed in without the forms (the first test looks at those, test/browser/accounts.test.ts uses them). */
  async function signedIn(username: string, password: string): Promise<Page> {
    const page = await phonePage()
    await site.signInDirectly(page, username, password)
    return page
  }

  test('the gate, sign-in and sign-up forms fit a phone', async () => {
    const page = await phonePage()
    await expectPhoneFriendly(page, '/gate/')
    await page.getByLabel('Site password').fill(SITE_PASSWORD)
    await page.keyboard.press('Enter')
    await page.waitForURL((url) => !url.pathname.startsWith('/gate/'))
    await expectPhoneFriendly(page, '/login/')
    await expectPhoneFriendly(page, '/signup/')
    assertNoProblems(site)
  })

  test("a creator's pages fit a phone", async () => {
    const page = await signedIn(demo.creator.username, demo.creator.password)
    const [namespace, packId] = demo.packs[0]!.split(':')
    for (const path of ['/', `/packs/${namespace}/${packId}/`, '/drafts/', '/settings/tokens/', '/settings/password/', '/packs-sync/']) {
      await expectPhoneFriendly(page, path)
    }
    await expectPhoneFriendly(page, '/create/')
    assert.match(new URL(page.url()).pathname, /^\/create\/[0-9a-f-]{36}\/$/)
    assertNoProblems(site)
  })

  test("staff statistics fit a phone (the route table scrolls inside its box)", async () => {
    const page = await signedIn(demo.staff.username, demo.staff.password)
    await expectPhoneFriendly(page, '/staff/stats/')
    assert.equal(await page.locator('main svg').count() > 0, true, 'a chart is drawn')
    assertNoProblems(site)
  })

  test('keyboard users see where focus is, and can skip to the content', async () => {
    const page = await signedIn(demo.creator.username, demo.creator.password)
    await page.goto('/')
    await page.keyboard.press('Tab')
    const skip = await page.evaluate(() => {
      const el = document.activeElement as HTMLElement
      return { text: el.textContent?.trim(), outline: getComputedStyle(el).outlineStyle, visible: el.getBoundingClientRect().left >= 0 }
    })
    assert.deepEqual(skip, { text: 'Skip to content', outline: 'solid', visible: true })
    await page.keyboard.press('Enter')
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'main')
    // Every focusable thing on the page shows a ring when reached by Tab.
    for (let i = 0; i < 12; i++) {
      await page.keyboard.press('Tab')
      const focused = await page.evaluate(() => {
        const el = document.activeElement as HTMLElement
        return { tag: el.tagName, outline: getComputedStyle(el).outlineStyle }
      })
      if (focused.tag === 'BODY') break
      assert.notEqual(focused.outline, 'none', `${focused.tag} has a visible focus ring`)
    }
    assertNoProblems(site)
  })

  test('no page asked any other origin for anything', () => {
    assert.deepEqual(foreignRequests, [])
  })
})
