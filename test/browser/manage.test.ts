// backends: sqlite — pages are backend-independent; test/http/versions-manage.test.ts covers the API on every backend
// Managing a published pack in Chromium, as its owner does it: edit a
// changelog, yank a version (the page marks it and "Latest" moves to the one
// before), un-yank it, delete a version after a confirm, and delete the pack
// on its page by typing its id (the button stays disabled until it matches).
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { Page } from 'playwright-core'
import { assertNoProblems, startBrowserSite, type BrowserSite } from '../helpers/browser.js'
import { datapack } from '../helpers/fixtures.js'
import { createPackAs } from './packs-api.js'

describe('managing a pack in a browser', { timeout: 180_000 }, () => {
  let site: BrowserSite
  let owner: Page

  before(async () => {
    site = await startBrowserSite()
    owner = await site.newPage()
    await site.signUpDirectly(owner, 'Keeper')
  })
  after(() => site?.close())

  async function addVersion(page: Page, packId: string, name: string): Promise<void> {
    const me = await page.request.get('/api/me/')
    const headers = { 'x-csrf-token': ((await me.json()) as { csrf_token: string }).csrf_token }
    const res = await page.request.post(`/api/packs/keeper/${packId}/versions/`, {
      headers,
      multipart: { version_name: name, file: { name: `${name}.zip`, mimeType: 'application/zip', buffer: await datapack(61) } },
    })
    assert.equal(res.status(), 201, await res.text())
  }

  const versionItem = (page: Page, name: string) => page.locator('li.version', { has: page.locator('h3.version-name', { hasText: name }) })

  test('edit a changelog, yank and un-yank a version, delete one after a confirm', async () => {
    const page = owner
    await createPackAs(page, { title: 'Lanterns', version_name: '1.0', changelog: 'first' }, await datapack(48))
    await addVersion(page, 'lanterns', '2.0')
    await page.goto('/packs/keeper/lanterns/')
    assert.equal(await versionItem(page, '2.0').locator('.latest-badge').count(), 1)

    // Changelog
    await versionItem(page, '1.0').getByText('Edit changelog').click()
    await versionItem(page, '1.0').getByLabel('Changelog of 1.0').fill('First release, now with notes')
    await Promise.all([page.waitForEvent('load'), versionItem(page, '1.0').getByRole('button', { name: 'Save changelog' }).click()])
    assert.match(await versionItem(page, '1.0').locator('.changelog').innerText(), /now with notes/)

    // Yank 2.0: marked, and Latest moves to 1.0; the update-check agrees.
    await Promise.all([page.waitForEvent('load'), versionItem(page, '2.0').getByRole('button', { name: 'Yank' }).click()])
    await versionItem(page, '2.0').locator('.yanked-badge').waitFor()
    assert.equal(await versionItem(page, '1.0').locator('.latest-badge').count(), 1)
    const check = await page.request.get('/api/packs/keeper/lanterns/latest')
    assert.equal(((await check.json()) as { version: string }).version, '1.0')

    // Un-yank
    await Promise.all([page.waitForEvent('load'), versionItem(page, '2.0').getByRole('button', { name: 'Un-yank' }).click()])
    assert.equal(await versionItem(page, '2.0').locator('.yanked-badge').count(), 0)
    assert.equal(await versionItem(page, '2.0').locator('.latest-badge').count(), 1)

    // Delete 1.0: dismissing the confirm keeps it; accepting deletes it.
    page.once('dialog', (dialog) => void dialog.dismiss())
    await versionItem(page, '1.0').getByRole('button', { name: 'Delete' }).click()
    assert.equal(await versionItem(page, '1.0').count(), 1, 'a dismissed confirm deletes nothing')
    page.once('dialog', (dialog) => {
      assert.match(dialog.message(), /Delete version 1\.0/)
      void dialog.accept()
    })
    await Promise.all([page.waitForEvent('load'), versionItem(page, '1.0').getByRole('button', { name: 'Delete' }).click()])
    assert.equal(await versionItem(page, '1.0').count(), 0)
    assert.equal(await page.locator('li.version').count(), 1)
    assertNoProblems(site)
  })

  test('delete the pack by typing its id; the id is then held', async () => {
    const page = owner
    await createPackAs(page, { title: 'Short Lived', version_name: '1' }, await datapack(48))
    await page.goto('/packs/keeper/short-lived/')
    await page.getByRole('link', { name: 'Delete pack…' }).click()
    await page.waitForURL('**/packs/keeper/short-lived/delete/')
    const button = page.getByRole('button', { name: 'Delete this pack' })
    assert.equal(await button.isDisabled(), true, 'disabled until the id is typed')
    const input = page.getByLabel('Type the pack id short-lived to confirm')
    await input.fill('short-live')
    assert.equal(await button.isDisabled(), true)
    await input.fill('short-lived')
    assert.equal(await button.isDisabled(), false)
    await Promise.all([page.waitForURL(/\/users\/keeper\/\?deleted=/i), button.click()])
    const gone = await page.request.get('/api/packs/keeper/short-lived/')
    assert.equal(gone.status(), 404)
    // A new pack may not take the id for 30 days.
    await assert.rejects(createPackAs(page, { title: 'Short Lived', version_name: '2' }, await datapack(48)), /held until/)
    assertNoProblems(site)
  })
})
