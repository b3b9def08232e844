// Profiles in Chromium: a visitor follows the owner link
// from a pack page to the owner's profile, which lists their packs; browse
// cards link there too; staff disable the account from its profile (the
// page then says so and offers Enable) and enable it again; at phone width
// the profile needs no horizontal scrolling.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { Page } from 'playwright-core'
import { assertNoProblems, startBrowserSite, type BrowserSite } from '../helpers/browser.js'
import { datapack } from '../helpers/fixtures.js'
import { createPackAs } from './packs-api.js'

const STAFF_PASSWORD = 'warden-password-1'

describe('profiles in a browser', { timeout: 180_000 }, () => {
  let site: BrowserSite
  let visitor: Page
  let staff: Page

  before(async () => {
    site = await startBrowserSite()
    await site.cli(['user', 'create', 'Warden', '--password', STAFF_PASSWORD, '--staff'])
    const owner = await site.newPage()
    await site.signUpDirectly(owner, 'Builder')
    await createPackAs(owner, { title: 'Castle Walls', summary: 'Tall stone walls', version_name: '1.0.0' }, await datapack(48))
    await createPackAs(owner, { title: 'Rocket Parts', version_name: '0.1' }, await datapack(15))
    const other = await site.newPage()
    await site.signUpDirectly(other, 'Someone')
    await createPackAs(other, { title: 'Other Things', version_name: '1' }, await datapack(48))
    visitor = await site.newPage()
    await site.passGateDirectly(visitor)
    staff = await site.newPage()
    await site.signInDirectly(staff, 'Warden', STAFF_PASSWORD)
  })
  after(() => site?.close())

  test('the owner link on a pack page leads to the profile listing their packs', async () => {
    await visitor.goto('/packs/builder/castle-walls/')
    await visitor.locator('.byline').getByRole('link', { name: 'Builder' }).click()
    await visitor.waitForURL('**/users/Builder/')
    assert.equal(await visitor.locator('h1').innerText(), 'Builder')
    const titles = await visitor.locator('.pack-grid .pack-title a').allInnerTexts()
    assert.deepEqual(titles, ['Rocket Parts', 'Castle Walls'])
    assert.match(await visitor.locator('.profile-count').innerText(), /2 packs/)
    assert.equal(await visitor.getByText('Other Things').count(), 0, 'only their packs')
    assert.equal(await visitor.locator('#moderate-account').count(), 0, 'no staff controls for a visitor')

    // A card leads back to its pack.
    await visitor.getByRole('link', { name: 'Castle Walls' }).click()
    await visitor.waitForURL('**/packs/builder/castle-walls/')

    // Browse cards link the owner too.
    await visitor.goto('/')
    await visitor.locator('.pack-card', { hasText: 'Other Things' }).getByRole('link', { name: 'Someone' }).click()
    await visitor.waitForURL('**/users/Someone/')
    assert.deepEqual(await visitor.locator('.pack-grid .pack-title a').allInnerTexts(), ['Other Things'])
    assertNoProblems(site)
  })

  test('staff disable the account from its profile and enable it again', async () => {
    await staff.goto('/users/builder/')
    await staff.getByLabel('Reason (for the audit log)').fill('spam')
    await staff.getByRole('button', { name: 'Disable account' }).click()
    // The page reloads showing the account's new state.
    await staff.locator('.profile-disabled').waitFor()
    assert.match(await staff.locator('.profile-disabled').innerText(), /This account is disabled/)
    assert.equal(await staff.locator('.hidden-badge', { hasText: 'Hidden' }).count(), 2, 'its packs are marked hidden')
    await staff.getByRole('button', { name: 'Enable account' }).waitFor()

    assert.equal((await visitor.goto('/users/builder/'))?.status(), 404)
    assert.equal((await visitor.goto('/packs/builder/castle-walls/'))?.status(), 404)

    await staff.getByRole('button', { name: 'Enable account' }).click()
    await staff.getByRole('button', { name: 'Disable account' }).waitFor()
    assert.equal(await staff.locator('.profile-disabled').count(), 0)
    assert.equal((await visitor.goto('/users/builder/'))?.status(), 200)
    assert.equal(await visitor.locator('.hidden-badge').count(), 0)
    assertNoProblems(site)
  })

  test('at 360 px the profile needs no horizontal scrolling', async () => {
    const phone = await site.newPage({ width: 360, height: 740 })
    await site.signInDirectly(phone, 'Warden', STAFF_PASSWORD)
    for (const path of ['/users/builder/', '/?sort=downloads']) {
      await phone.goto(path)
      const { scrollWidth, viewport } = await phone.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth, viewport: window.innerWidth }))
      assert.ok(scrollWidth <= viewport, `${path}: ${scrollWidth}px wide in a ${viewport}px viewport`)
    }
    assertNoProblems(site)
  })
})
