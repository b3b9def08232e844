// backends: sqlite — pages are backend-independent; test/http/versions-manage.test.ts and pack-delete.test.ts cover every backend
// Managing a published pack in Chromium: on the
// pack page the owner edits a changelog, yanks a version (marked, no longer
// Latest, skipped by the update-check) and un-yanks it, and deletes a version
// after a confirm() (dismissing it deletes nothing); a visitor sees the mark
// but no controls. Then the owner deletes the pack on its delete page, whose
// button works only once the pack id is typed, and lands on their profile.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { Page } from 'playwright-core'
import { assertNoProblems, startBrowserSite, type BrowserSite } from '../helpers/browser.js'
import { datapack } from '../helpers/fixtures.js'
import { createPackAs } from './packs-api.js'

describe('managing a pack in a browser', { timeout: 180_000 }, () => {
  let site: BrowserSite
  let owner: Page
  let visitor: Page

  /** A new version through the API with the owner's session (the pack page's own form is test/browser/pack.test.ts's). */
  async function addVersion(name: string, changelog: string): Promise<void> {
    const me = await owner.request.get('/api/me/')
    const headers = { 'x-csrf-token': ((await me.json()) as { csrf_token: string }).csrf_token }
    const res = await owner.request.post('/api/packs/keeper/lanterns/versions/', {
      headers,
      multipart: { version_name: name, changelog, file: { name: `${name}.zip`, mimeType: 'application/zip', buffer: await datapack(61) } },
    })
    assert.equal(res.status(), 201, await res.text())
  }

  const latestOffered = async (page: Page) => {
    const res = await page.request.get('/api/packs/keeper/lanterns/latest')
    return { status: res.status(), body: (await res.json()) as { version?: string; detail?: string } }
  }

  before(async () => {
    site = await startBrowserSite()
    owner = await site.newPage()
    await site.signUpDirectly(owner, 'Keeper')
    await createPackAs(owner, { title: 'Lanterns', version_name: '1.0', changelog: 'First lights' }, await datapack(48))
    await addVersion('2.0', 'Brighter')
    visitor = await site.newPage()
    await site.signUpDirectly(visitor, 'Passerby')
  })
  after(() => site?.close())

  const versionItem = (page: Page, name: string) =>
    page.locator('li.version').filter({ has: page.locator('.version-name', { hasText: new RegExp(`^${name.replace('.', '\\.')}$`) }) })

  test('the owner edits a changelog, yanks and un-yanks a version, and deletes one after confirming', async () => {
    const page = owner
    await page.goto('/packs/keeper/lanterns/')
    const v2 = versionItem(page, '2.0')
    const v1 = versionItem(page, '1.0')
    assert.equal(await v2.locator('.latest-badge').innerText(), 'Latest')

    // Edit the changelog of 1.0 inline.
    await v1.getByText('Edit changelog').click()
    await v1.getByLabel('Changelog of 1.0').fill('First lights\nNow with oil')
    await v1.getByRole('button', { name: 'Save changelog' }).click()
    await versionItem(page, '1.0').locator('.changelog', { hasText: 'Now with oil' }).waitFor()
    assert.equal(await versionItem(page, '1.0').locator('.changelog').innerText(), 'First lights\nNow with oil')

    // Yank 2.0: the page reloads with it marked, and 1.0 is Latest, for the update-check too.
    await versionItem(page, '2.0').getByRole('button', { name: 'Yank' }).click()
    await versionItem(page, '2.0').locator('.yanked-badge').waitFor()
    assert.equal(await versionItem(page, '2.0').locator('.latest-badge').count(), 0)
    assert.equal(await versionItem(page, '1.0').locator('.latest-badge').innerText(), 'Latest')
    const offered = await latestOffered(page)
    assert.equal(offered.status, 200)
    assert.equal(offered.body.version, '1.0', 'the update-check skips the yanked version')
    // Still downloadable by its link: nothing already installed breaks.
    const href = await versionItem(page, '2.0').getByRole('link', { name: 'Download' }).getAttribute('href')
    assert.equal((await page.request.get(href!)).status(), 200)

    // A visitor sees the mark, and no controls.
    await visitor.goto('/packs/keeper/lanterns/')
    assert.equal(await versionItem(visitor, '2.0').locator('.yanked-badge').innerText(), 'Yanked')
    assert.equal(await visitor.getByRole('button', { name: /^(Yank|Un-yank|Delete)$/ }).count(), 0)
    assert.equal(await visitor.getByRole('link', { name: /Delete pack/ }).count(), 0)

    // Un-yank: Latest again.
    await versionItem(page, '2.0').getByRole('button', { name: 'Un-yank' }).click()
    await versionItem(page, '2.0').locator('.latest-badge').waitFor()
    assert.equal(await versionItem(page, '2.0').locator('.yanked-badge').count(), 0)
    assert.equal((await latestOffered(page)).body.version, '2.0')

    // Delete 2.0: dismissing the confirm() deletes nothing; accepting it does.
    const messages: string[] = []
    page.once('dialog', (dialog) => { messages.push(dialog.message()); void dialog.dismiss() })
    await versionItem(page, '2.0').getByRole('button', { name: 'Delete' }).click()
    await page.waitForTimeout(300)
    assert.equal(await page.locator('li.version').count(), 2, 'dismissed: nothing deleted')
    assert.match(messages[0] ?? '', /Delete version 2\.0/)
    page.once('dialog', (dialog) => { void dialog.accept() })
    await versionItem(page, '2.0').getByRole('button', { name: 'Delete' }).click()
    await page.waitForFunction(() => document.querySelectorAll('li.version').length === 1)
    assert.equal(await versionItem(page, '1.0').locator('.latest-badge').innerText(), 'Latest')
    assert.equal((await page.request.get(href!)).status(), 404, 'its file is gone')
    assert.equal((await latestOffered(page)).body.version, '1.0')
    assertNoProblems(site)
  })

  test('the owner deletes the pack by typing its id; the id is then held', async () => {
    const page = owner
    await page.goto('/packs/keeper/lanterns/')
    await page.getByRole('link', { name: /Delete pack/ }).click()
    await page.waitForURL('**/packs/keeper/lanterns/delete/')
    assert.match(await page.locator('.delete-pack').innerText(), /held for 30 days/)
    const input = page.getByLabel(/Type the pack id/)
    const button = page.getByRole('button', { name: 'Delete this pack' })
    assert.equal(await button.isDisabled(), true, 'disabled until the id is typed')
    await input.fill('lantern')
    assert.equal(await button.isDisabled(), true)
    await input.fill('keeper:lanterns')
    assert.equal(await button.isDisabled(), true, 'the pack id, not namespace:pack_id')
    await input.fill('lanterns')
    assert.equal(await button.isEnabled(), true)
    await button.click()
    await page.waitForURL((url) => url.pathname === '/users/Keeper/' && url.searchParams.get('deleted') === 'keeper:lanterns')
    assert.match(await page.getByRole('status').first().innerText(), /Pack keeper:lanterns deleted\. Its id is held for 30 days/)

    assert.equal((await page.goto('/packs/keeper/lanterns/'))?.status(), 404)
    assert.equal((await latestOffered(visitor)).status, 404)
    // Publishing a new pack under the same id is refused while it is held.
    await assert.rejects(createPackAs(page, { title: 'Lanterns', version_name: '1' }, await datapack(48)), /held until/)
    assertNoProblems(site)
  })
})
