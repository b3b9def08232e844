// backends: sqlite — pages are backend-independent; test/http/pages-team.test.ts and teams.test.ts cover every backend
// A pack's team in Chromium, by keyboard alone and at 360 px: the owner invites
// someone by typing part of their name and picking it from the suggestions with
// the arrow keys and Enter (Escape closes them); the invitee sees the count in
// the header, accepts on the invitations page and lands on the pack page, which
// lists them with their role and, to them as an uploader, offers the new-version
// form but no Edit pack.
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

describe('a pack\'s team in a browser', { timeout: 120_000 }, () => {
  let site: BrowserSite
  let owner: Page
  let invitee: Page

  before(async () => {
    site = await startBrowserSite()
    ;[owner, invitee] = await Promise.all([site.newPage(PHONE), site.newPage(PHONE)])
    const other = await site.newPage()
    await Promise.all([site.signUpDirectly(owner, 'Warden'), site.signUpDirectly(invitee, 'Bertha'), site.signUpDirectly(other, 'Bernard')])
    await createPackAs(owner, { title: 'Beacons', version_name: '1.0', changelog: 'First light' }, await datapack(48))
  })
  after(() => site?.close())

  test('the owner invites by keyboard; the invitee accepts and, as uploader, may publish but not edit the pack', async () => {
    await owner.goto('/packs/warden/beacons/team/')
    await fitsWidth(owner)
    const field = owner.getByRole('combobox', { name: 'Username' })
    await field.focus()
    await owner.keyboard.type('ber')
    const options = owner.getByRole('listbox', { name: 'Matching users' }).getByRole('option')
    await options.nth(1).waitFor()
    assert.deepEqual(await options.allInnerTexts(), ['Bernard', 'Bertha'])
    // Escape closes the list; ArrowDown opens it again; down twice is the second match; Enter picks it.
    await owner.keyboard.press('Escape')
    assert.equal(await field.getAttribute('aria-expanded'), 'false')
    await owner.keyboard.press('ArrowDown')
    await options.nth(1).waitFor()
    await owner.keyboard.press('ArrowDown')
    await owner.keyboard.press('ArrowDown')
    assert.equal(await owner.locator('#invite-suggestions [aria-selected="true"]').innerText(), 'Bertha')
    await owner.keyboard.press('Enter')
    assert.equal(await field.inputValue(), 'Bertha')
    assert.equal(await field.getAttribute('aria-expanded'), 'false')
    // The role stays Uploader (the default); Enter in the closed field sends the invitation.
    assert.equal(await owner.getByRole('radio', { name: /Uploader/ }).isChecked(), true)
    await Promise.all([owner.waitForEvent('load'), owner.keyboard.press('Enter')])
    const invited = owner.locator('.team-member[data-username="Bertha"]')
    assert.match(await invited.innerText(), /Bertha\s+uploader\s+invited/)
    assert.equal(await owner.locator('.team-member[data-username="Warden"] .role-badge').innerText(), 'owner')
    await fitsWidth(owner)

    // A refusal shows the API's detail in the form, without leaving the page.
    await field.fill('Bertha')
    await owner.keyboard.press('Escape')
    await field.press('Enter')
    await owner.locator('#invite-form .field-error', { hasText: /\S/ }).waitFor()
    assert.equal(await owner.locator('#invite-form .field-error').innerText(), 'Bertha is invited already; withdraw that invitation to send another.')

    // The invitee: the header's count, the invitations page, Accept by keyboard, the pack page.
    await invitee.goto('/')
    const link = invitee.getByRole('link', { name: /Invitations/ })
    assert.equal(await link.innerText(), 'Invitations 1')
    await link.focus()
    await Promise.all([invitee.waitForURL('**/invitations/'), invitee.keyboard.press('Enter')])
    await fitsWidth(invitee)
    const accept = invitee.getByRole('button', { name: 'Accept' })
    await accept.focus()
    await Promise.all([invitee.waitForURL('**/packs/warden/beacons/'), invitee.keyboard.press('Enter')])
    await fitsWidth(invitee)
    const team = (await invitee.locator('.team-list .team-member').allInnerTexts()).map((text) => text.replace(/\s+/g, ' ').trim())
    assert.deepEqual(team, ['Warden owner', 'Bertha uploader'])
    assert.equal(await invitee.locator('form#new-version').isVisible(), true)
    assert.equal(await invitee.getByRole('link', { name: 'Edit pack' }).count(), 0)
    assert.equal(await invitee.getByRole('button', { name: 'Yank' }).count(), 0)
    assert.equal(await invitee.getByRole('link', { name: /Invitations/ }).count(), 0)
    assertNoProblems(site)
  })
})
