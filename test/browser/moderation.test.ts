// Moderation in Chromium: a staff member hides a pack from
// its page with a reason, the page then says it is hidden and offers Unhide,
// a visitor gets the 404 page, and the audit log page (reached from the staff
// navigation) shows the entry and filters by it; unhiding brings it back.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { Page } from 'playwright-core'
import { assertNoProblems, startBrowserSite, type BrowserSite } from '../helpers/browser.js'
import { datapack } from '../helpers/fixtures.js'
import { createPackAs } from './packs-api.js'

const STAFF_PASSWORD = 'warden-password-1'

describe('moderation in a browser', { timeout: 180_000 }, () => {
  let site: BrowserSite
  let staff: Page
  let visitor: Page

  before(async () => {
    site = await startBrowserSite()
    await site.cli(['user', 'create', 'Warden', '--password', STAFF_PASSWORD, '--staff'])
    const owner = await site.newPage()
    await site.signUpDirectly(owner, 'Maker')
    await createPackAs(owner, { title: 'Loud Banners', summary: 'Very loud', version_name: '1.0' }, await datapack(48))
    staff = await site.newPage()
    await site.signInDirectly(staff, 'Warden', STAFF_PASSWORD)
    visitor = await site.newPage()
    await site.passGateDirectly(visitor)
  })
  after(() => site?.close())

  test('staff hide a pack from its page, see the audit entry, and unhide it', async () => {
    assert.equal((await visitor.goto('/packs/maker/loud-banners/'))?.status(), 200)

    await staff.goto('/packs/maker/loud-banners/')
    assert.equal(await staff.locator('.hidden-notice').count(), 0)
    await staff.getByLabel('Reason (for the audit log)').fill('misleading screenshots')
    await staff.getByRole('button', { name: 'Hide pack', exact: true }).click()
    // The page reloads showing the pack's new state.
    await staff.locator('.hidden-notice').waitFor()
    assert.match(await staff.locator('.hidden-notice').innerText(), /Staff have hidden this pack: only its team and staff can see it/)
    await staff.getByRole('button', { name: 'Unhide pack' }).waitFor()

    const gone = await visitor.goto('/packs/maker/loud-banners/')
    assert.equal(gone?.status(), 404)
    assert.match(await visitor.locator('h1').innerText(), /Not found/)
    await visitor.goto('/')
    assert.equal(await visitor.getByText('Loud Banners').count(), 0, 'not in the listing')

    // The staff navigation leads to the audit log.
    await staff.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Audit log' }).click()
    await staff.waitForURL('**/staff/audit/')
    const row = staff.locator('tr.audit-entry', { hasText: 'pack.hide' })
    assert.equal(await row.count(), 1)
    const text = await row.innerText()
    assert.match(text, /Warden/)
    assert.match(text, /maker:loud-banners/)
    assert.match(text, /misleading screenshots/)
    // Filter by action with the form; then by the pack, from its link.
    await staff.getByLabel('Action').selectOption('pack.publish')
    await staff.getByRole('button', { name: 'Filter' }).click()
    await staff.waitForURL(/action=pack\.publish/)
    assert.equal(await staff.locator('tr.audit-entry').count(), 1)
    assert.match(await staff.locator('tr.audit-entry').innerText(), /Maker/)
    await staff.getByRole('link', { name: 'Clear filters' }).click()
    await staff.locator('tr.audit-entry', { hasText: 'pack.hide' }).getByRole('link', { name: 'maker:loud-banners' }).click()
    await staff.waitForURL(/target=maker%3Aloud-banners/)
    assert.equal(await staff.locator('tr.audit-entry').count(), 2, 'publish and hide')

    // Back to the pack; unhide it.
    await staff.goto('/packs/maker/loud-banners/')
    await staff.getByRole('button', { name: 'Unhide pack' }).click()
    await staff.getByRole('button', { name: 'Hide pack', exact: true }).waitFor()
    assert.equal(await staff.locator('.hidden-notice').count(), 0)
    assert.equal((await visitor.goto('/packs/maker/loud-banners/'))?.status(), 200)
    assertNoProblems(site)
  })

  test('at 360 px the audit page and a pack page with the staff control need no horizontal scrolling', async () => {
    const phone = await site.newPage({ width: 360, height: 740 })
    await site.signInDirectly(phone, 'Warden', STAFF_PASSWORD)
    for (const path of ['/staff/audit/', '/packs/maker/loud-banners/']) {
      await phone.goto(path)
      const { scrollWidth, viewport } = await phone.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth, viewport: window.innerWidth }))
      assert.ok(scrollWidth <= viewport, `${path}: ${scrollWidth}px wide in a ${viewport}px viewport`)
    }
    assert.equal(await phone.locator('#moderate-pack').count(), 1)
  })

  test('the moderation control is for staff only', async () => {
    await visitor.goto('/packs/maker/loud-banners/')
    assert.equal(await visitor.locator('#moderate-pack').count(), 0)
    assert.equal(await visitor.getByRole('link', { name: 'Audit log' }).count(), 0)
    // Someone not signed in is sent to sign in first.
    await visitor.goto('/staff/audit/')
    assert.match(new URL(visitor.url()).pathname, /^\/login\/$/)
    assert.equal(await visitor.locator('.audit-entry').count(), 0)
  })
})
