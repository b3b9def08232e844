// backends: sqlite — pages are backend-independent; test/http/pages-*.test.ts cover them on every backend
// Accounts in Chromium: sign up, sign out, sign in, change password; the
// sign-in form by keyboard alone; the staff statistics page for staff and its
// 403 page for others; and the gate's wrong-password and rate-limit messages.
// The site allows 2 failed password attempts per address, so the test that
// spends them runs last.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { Page } from 'playwright-core'
import { assertNoProblems, startBrowserSite, SITE_PASSWORD, type BrowserSite } from '../helpers/browser.js'

describe('accounts, statistics and the gate in a browser', { timeout: 180_000 }, () => {
  let site: BrowserSite
  before(async () => { site = await startBrowserSite({ PACKS_AUTH_FAILURE_LIMIT: '2', PACKS_STATS_CACHE: '1s' }) })
  after(() => site?.close())

  async function signIn(page: Page, username: string, password: string, next = '/'): Promise<void> {
    await page.goto(site.url(`/login/?next=${encodeURIComponent(next)}`))
    await page.getByLabel('Username').fill(username)
    await page.getByLabel('Password').fill(password)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.waitForURL((url) => !url.pathname.startsWith('/login/'))
    assert.match(await page.locator('.who').innerText(), new RegExp(`Signed in as ${username}`, 'i'))
  }

  async function signOut(page: Page): Promise<void> {
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.waitForURL('**/login/')
    assert.equal(await page.locator('.who').count(), 0)
  }

  test('sign up → sign out → sign in → change password → sign in with the new one', async () => {
    const page = await site.newPage()
    await site.signUp(page, 'Walker', 'first-password')
    // Signed in: the sign-up page sends us home.
    await page.goto(site.url('/signup/'))
    assert.equal(new URL(page.url()).pathname, '/')
    await signOut(page)

    await signIn(page, 'walker', 'first-password')
    await page.getByRole('link', { name: 'Password' }).click()
    await page.waitForURL('**/settings/password/')
    // A mismatch is explained and nothing changes.
    await page.getByLabel('Current password').fill('first-password')
    await page.getByLabel('New password', { exact: true }).fill('second-password')
    await page.getByLabel('Repeat new password').fill('second-passwort')
    await page.getByRole('button', { name: 'Change password' }).click()
    assert.equal(await page.getByRole('alert').innerText(), 'The two new passwords do not match.')

    await page.getByLabel('Current password').fill('first-password')
    await page.getByLabel('New password', { exact: true }).fill('second-password')
    await page.getByLabel('Repeat new password').fill('second-password')
    await page.getByRole('button', { name: 'Change password' }).click()
    await page.getByRole('status').filter({ hasText: 'Password changed.' }).waitFor()
    assert.match(await page.locator('.who').innerText(), /Signed in as Walker/, 'this browser stays signed in')

    await signOut(page)
    await signIn(page, 'Walker', 'second-password')
    assertNoProblems(site)
  })

  // The gate's form is the first test's (and the last one's); the other tests only need its cookie.
  test('sign-up errors are shown on the form, which keeps the name', async () => {
    const page = await site.newPage()
    await site.passGateDirectly(page)
    await page.goto(site.url('/signup/'))
    await page.getByLabel('Username').fill('WALKER')
    await page.getByLabel('Password', { exact: true }).fill('some-password')
    await page.getByLabel('Repeat password').fill('some-password')
    await page.getByRole('button', { name: 'Sign up' }).click()
    assert.equal(await page.getByRole('alert').innerText(), 'That username is taken.')
    assert.equal(await page.getByLabel('Username').inputValue(), 'WALKER')
    assert.equal(await page.getByLabel('Password', { exact: true }).inputValue(), '', 'passwords are not echoed')
    assertNoProblems(site)
  })

  test('the sign-in form works by keyboard alone: type, Tab, type, Tab to the button, Enter', async () => {
    await site.cli(['user', 'create', 'keys', '--password', 'keyboard-pw-1'])
    const page = await site.newPage()
    await site.passGateDirectly(page)
    await page.goto(site.url('/login/'))
    const focused = () => page.evaluate(() => {
      const el = document.activeElement
      return el ? `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}:${(el.textContent ?? '').trim()}` : ''
    })
    // `autofocus` is applied at a rendering update after load, which a loaded machine may delay: wait for it (bounded), then assert.
    await page.waitForFunction(() => document.activeElement?.id === 'username', null, { timeout: 10_000 }).catch(() => {})
    assert.equal(await focused(), 'input#username:', 'the username field has focus on arrival')
    await page.keyboard.type('keys')
    await page.keyboard.press('Tab')
    assert.equal(await focused(), 'input#password:')
    await page.keyboard.type('keyboard-pw-1')
    await page.keyboard.press('Tab')
    assert.equal(await focused(), 'button:Sign in')
    // The focus ring is visible on the button.
    const outline = await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle)
    assert.notEqual(outline, 'none')
    await page.keyboard.press('Enter')
    await page.waitForURL((url) => !url.pathname.startsWith('/login/'))
    assert.match(await page.locator('.who').innerText(), /Signed in as keys/)
    assertNoProblems(site)
  })

  test('statistics: a non-staff user gets the 403 page; staff see the numbers and the chart', async () => {
    // The sign-in form is tested above: here signing in is only the way in.
    const member = await site.newPage()
    await site.signInDirectly(member, 'keys', 'keyboard-pw-1')
    await member.goto(site.url('/'))
    assert.match(await member.locator('.who').innerText(), /Signed in as keys/i)
    assert.equal(await member.getByRole('link', { name: 'Statistics' }).count(), 0, 'no link for non-staff')
    const denied = await member.goto(site.url('/staff/stats/'))
    assert.equal(denied?.status(), 403)
    assert.equal(await member.getByRole('heading', { level: 1 }).innerText(), 'Forbidden')
    assert.equal(await member.locator('main svg').count(), 0, 'no chart')

    await site.cli(['user', 'create', 'chief', '--password', 'chief-password-1', '--staff'])
    const staff = await site.newPage()
    await site.signInDirectly(staff, 'chief', 'chief-password-1')
    await staff.goto(site.url('/'))
    assert.match(await staff.locator('.who').innerText(), /Signed in as chief/i)
    await staff.getByRole('link', { name: 'Statistics' }).click()
    await staff.waitForURL('**/staff/stats/')
    assert.equal(await staff.getByRole('heading', { level: 1 }).innerText(), 'Statistics')
    const chart = staff.getByRole('img', { name: /Requests per route/ })
    await chart.waitFor()
    const box = await chart.boundingBox()
    assert.ok(box && box.width > 200 && box.height > 50, `the chart is drawn: ${JSON.stringify(box)}`)
    assert.ok(await staff.locator('svg.chart rect.bar-count').count() > 0, 'with bars')
    assert.ok(await staff.getByRole('img', { name: /Latency per route/ }).isVisible())
    // The table carries the same routes as the chart.
    const firstLabel = await staff.locator('#chart-requests .chart-label').first().textContent()
    assert.ok(firstLabel)
    assert.equal(await staff.locator('.route-table th.route', { hasText: firstLabel }).count(), 1)
    assertNoProblems(site)
  })

  test('the gate: a wrong password says so; past the limit the page says when to retry', async () => {
    const page = await site.newPage()
    await page.goto(site.url('/gate/'))
    for (let i = 0; i < 2; i++) {
      await page.getByLabel('Site password').fill('not the password')
      await page.getByRole('button', { name: 'Enter' }).click()
      assert.equal(await page.getByRole('alert').innerText(), 'Wrong password.')
    }
    // Now even the right password waits.
    await page.getByLabel('Site password').fill(SITE_PASSWORD)
    await page.getByRole('button', { name: 'Enter' }).click()
    assert.match(await page.getByRole('alert').innerText(), /^Too many failed attempts\. Try again in \d+ seconds\.$/)
    assert.equal(new URL(page.url()).pathname, '/gate/')
    assertNoProblems(site)
  })
})
