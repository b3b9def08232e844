// backends: sqlite — pages are backend-independent; test/http/follows.test.ts and notifications.test.ts cover them on every backend
// Following and notifications in Chromium, by keyboard alone and at 360 px: a player signed out on a pack's
// page follows its "Sign in to follow" link, signs in and is back on the pack, tabs to its Follow button and
// presses Enter (the page comes back to its follow box, now Unfollow); its creator publishes
// a new version; the player's bell says "Notifications, 1 unread"; Enter on the bell opens the notifications
// page, where Mark read, reached by Tab, marks the notice read and the bell goes quiet.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { Page } from 'playwright-core'
import { assertNoProblems, startBrowserSite, type BrowserSite } from '../helpers/browser.js'
import { datapack } from '../helpers/fixtures.js'
import { createPackAs } from './packs-api.js'

const PHONE = { width: 360, height: 740 }

/** Nothing wider than the viewport: no sideways scrolling at 360 px. */
async function fitsWidth(page: Page): Promise<void> {
  const { scrollWidth, viewport } = await page.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth, viewport: window.innerWidth }))
  assert.ok(scrollWidth <= viewport, `${page.url()}: ${scrollWidth}px wide in a ${viewport}px viewport`)
}

/** Presses Tab from where the focus is until the element `selector` names has it, as a keyboard user would. */
async function tabTo(page: Page, selector: string): Promise<void> {
  for (let presses = 0; presses < 80; presses++) {
    if (await page.evaluate((s) => document.activeElement !== null && document.activeElement === document.querySelector(s), selector)) return
    await page.keyboard.press('Tab')
  }
  assert.fail(`Tab never reached ${selector} on ${page.url()}`)
}

describe('following a pack and reading the notice in a browser', { timeout: 120_000 }, () => {
  let site: BrowserSite
  let creator: Page
  let player: Page

  before(async () => {
    site = await startBrowserSite()
    ;[creator, player] = await Promise.all([site.newPage(), site.newPage(PHONE)])
    await site.signUpDirectly(creator, 'Mason')
    await createPackAs(creator, { title: 'Lighthouses', version_name: '1.0', changelog: 'First beam' }, await datapack(48))
    await site.cli(['user', 'create', 'Piper', '--password', 'piper-password-1'])
  })
  after(() => site?.close())

  test('follow by keyboard, a new version arrives, the bell counts it, the notifications page marks it read', async () => {
    await site.passGateDirectly(player)
    await player.goto('/packs/mason/lighthouses/')
    await fitsWidth(player)
    assert.equal(await player.locator('#followers-count').innerText(), '0 followers')
    assert.equal(await player.getByRole('button', { name: 'Follow' }).count(), 0, 'signed out: no button')
    await tabTo(player, '#follow a')
    await Promise.all([player.waitForURL('**/login/?next=*'), player.keyboard.press('Enter')])
    await player.getByLabel('Username').fill('Piper')
    await player.getByLabel('Password').fill('piper-password-1')
    await Promise.all([player.waitForURL('**/packs/mason/lighthouses/'), player.getByLabel('Password').press('Enter')])
    assert.equal(await player.getByRole('link', { name: 'Notifications, none unread' }).count(), 1)

    await tabTo(player, '#follow button')
    assert.equal(await player.locator('#follow button').innerText(), 'Follow')
    await Promise.all([player.waitForURL('**/packs/mason/lighthouses/#follow'), player.keyboard.press('Enter')])
    await player.locator('#follow button', { hasText: 'Unfollow' }).waitFor()
    assert.equal(await player.locator('#followers-count').innerText(), '1 follower')
    await fitsWidth(player)

    // The creator publishes 1.1 through the API, as the pack page's form does.
    const me = await creator.request.get('/api/me/')
    const csrf = ((await me.json()) as { csrf_token: string }).csrf_token
    const published = await creator.request.post('/api/packs/mason/lighthouses/versions/', {
      headers: { 'x-csrf-token': csrf },
      multipart: { version_name: '1.1', changelog: 'Brighter', file: { name: 'pack.zip', mimeType: 'application/zip', buffer: await datapack(48) } },
    })
    assert.equal(published.status(), 201, await published.text())

    // Followers are told just after the publish's commit, a batch at a time: the next page view shows it.
    const bell = player.getByRole('link', { name: 'Notifications, 1 unread' })
    for (let tries = 0; tries < 50; tries++) {
      await player.goto('/')
      if ((await bell.count()) === 1) break
      await player.waitForTimeout(100)
    }
    assert.equal(await bell.innerText(), '1', 'the badge shows the count')
    await fitsWidth(player)
    await bell.focus()
    await Promise.all([player.waitForURL('**/notifications/'), player.keyboard.press('Enter')])
    await fitsWidth(player)
    assert.equal(await player.getByRole('link', { name: 'Notifications, 1 unread' }).getAttribute('aria-current'), 'page')
    const notice = player.locator('.notification').first()
    assert.match(await notice.innerText(), /Unread\s+Lighthouses has a new version, 1\.1/)
    assert.equal(await notice.getByRole('link').getAttribute('href'), '/packs/mason/lighthouses/#version-1.1')

    await tabTo(player, '.notification .mark-read button')
    await Promise.all([player.waitForURL('**/notifications/?done=read'), player.keyboard.press('Enter')])
    assert.equal(await player.getByRole('status').innerText(), 'Marked read.')
    assert.equal(await player.locator('.notification.unread').count(), 0)
    assert.equal(await player.getByRole('button', { name: 'Mark read' }).count(), 0)
    assert.equal(await player.getByRole('link', { name: 'Notifications, none unread' }).count(), 1)
    await fitsWidth(player)

    // The notice's link leads to the version on the pack's page.
    await Promise.all([player.waitForURL('**/packs/mason/lighthouses/#version-1.1'), player.locator('.notification a').first().click()])
    assert.equal(await player.locator('[id="version-1.1"] h3').innerText(), '1.1')
    assertNoProblems(site)
  })
})
