// backends: sqlite — pages are backend-independent; test/http/pages-*.test.ts cover them on every backend
// The pack page and the browse page in Chromium: copy the id to the
// clipboard, upload a new version through the owner's form with a progress
// bar, see the server's 409 / 400 next to the form, the form hidden from
// others, and browse filters by clicking a tag chip.
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import type { Page } from 'playwright-core'
import { assertNoProblems, startBrowserSite, type BrowserSite } from '../helpers/browser.js'
import { datapack, png, zip } from '../helpers/fixtures.js'
import { createPackAs, type CreatedPack } from './packs-api.js'

describe('pack page and browse page in a browser', { timeout: 180_000 }, () => {
  let site: BrowserSite
  let owner: Page
  let castle: CreatedPack

  before(async () => {
    site = await startBrowserSite()
    await site.cli(['category', 'create', 'theme', '--name', 'Theme', '--color', '#aa5500'])
    await site.cli(['category', 'create', 'kind', '--name', 'Kind', '--color', '#1d4ed8'])
    await site.cli(['tag', 'create', 'Medieval', '--category', 'theme'])
    await site.cli(['tag', 'create', 'Space', '--category', 'theme'])
    await site.cli(['tag', 'create', 'Adventure', '--category', 'kind'])
    owner = await site.newPage()
    // The accounts are only the way in here (test/browser/accounts.test.ts signs up through the form).
    await site.signUpDirectly(owner, 'Builder')
    castle = await createPackAs(owner, {
      title: 'Castle Walls',
      summary: 'Tall stone walls',
      description: 'Walls for **every** castle.',
      category: 'theme',
      tags: ['Medieval', 'Adventure'],
      version_name: '1.0.0',
      changelog: 'First release',
    }, await datapack(48))
    await createPackAs(owner, { title: 'Rocket Parts', category: 'kind', tags: ['Space'], version_name: '0.1' }, await datapack(15))
  })
  after(() => site?.close())

  test('the owner copies the id and uploads a new version with a progress bar; a duplicate name and a non-ZIP are refused next to the form', async () => {
    const page = owner
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: site.server.url })
    assert.deepEqual([castle.namespace, castle.pack_id], ['builder', 'castle-walls'])
    await page.goto('/packs/builder/castle-walls/')
    assert.equal(await page.locator('h1').innerText(), 'Castle Walls')
    assert.equal(await page.locator('#pack-id').innerText(), 'builder:castle-walls')

    // Copy the id; the clipboard holds exactly namespace:pack_id.
    await page.getByRole('button', { name: 'Copy id' }).click()
    await page.getByRole('button', { name: 'Copied' }).waitFor()
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), 'builder:castle-walls')

    // Watch the progress bar across the reload that follows a successful upload.
    const progress: { hidden: boolean; value: number }[] = []
    await page.exposeFunction('reportProgress', (state: { hidden: boolean; value: number }) => { progress.push(state) })
    await page.evaluate(() => {
      const bar = document.getElementById('nv-progress') as HTMLProgressElement
      const report = (window as unknown as { reportProgress(state: { hidden: boolean; value: number }): void }).reportProgress
      new MutationObserver(() => report({ hidden: bar.hidden, value: bar.value })).observe(bar, { attributes: true })
    })

    // About 3 MB of random bytes: no compression, so the upload takes long enough to report progress.
    const archive = await zip({
      'pack.mcmeta': JSON.stringify({ pack: { pack_format: 61, description: 'v2' } }),
      'assets/blob.bin': randomBytes(3 * 1024 * 1024),
    })
    assert.ok(archive.length > 3_000_000)
    await page.getByLabel('Version archive (ZIP)').setInputFiles({ name: 'castle-2.zip', mimeType: 'application/zip', buffer: archive })
    await page.getByLabel('Version name').fill('2.0.0')
    await page.getByLabel('Changelog', { exact: true }).fill('Taller walls\nA new gate')
    await page.getByRole('button', { name: 'Upload version' }).click()

    // The page reloads with the new version on top.
    await page.locator('li.version', { hasText: '2.0.0' }).waitFor({ timeout: 30_000 })
    assert.ok(progress.some((p) => !p.hidden), `the progress bar was shown: ${JSON.stringify(progress)}`)
    assert.ok(progress.some((p) => !p.hidden && p.value > 0), `the progress bar moved: ${JSON.stringify(progress)}`)
    const versions = page.locator('li.version')
    assert.equal(await versions.count(), 2)
    const newest = versions.first()
    assert.equal(await newest.locator('.version-name').innerText(), '2.0.0')
    // Its archive has assets/: a resource pack, and no release has resource pack format 61.
    assert.match(await newest.innerText(), /pack format 61 \(unknown Minecraft version\)/)
    assert.equal(await newest.locator('.changelog').innerText(), 'Taller walls\nA new gate')
    assert.equal(await versions.nth(1).locator('.version-name').innerText(), '1.0.0')
    assert.match(await versions.nth(1).innerText(), /Minecraft 1\.21 – 1\.21\.1 \(data pack\)/)

    // Its Download link gives the bytes just uploaded.
    const href = await newest.getByRole('link', { name: 'Download' }).getAttribute('href')
    assert.ok(href)
    const downloaded = await page.request.get(href)
    assert.equal(downloaded.status(), 200)
    assert.ok((await downloaded.body()).equals(archive), 'the download gives the uploaded bytes')

    // A duplicate name: the server's 409, shown as an alert next to the form; nothing added.
    await page.getByLabel('Version archive (ZIP)').setInputFiles({ name: 'again.zip', mimeType: 'application/zip', buffer: await datapack(61) })
    await page.getByLabel('Version name').fill('2.0.0')
    await page.getByRole('button', { name: 'Upload version' }).click()
    const alert = page.locator('#new-version').getByRole('alert')
    await alert.filter({ hasText: 'already has a version named "2.0.0"' }).waitFor()
    assert.equal(await page.getByLabel('Version name').getAttribute('aria-invalid'), 'true')
    assert.equal(await page.locator('#nv-progress').isHidden(), true, 'the progress bar is hidden again')
    assert.equal(await page.getByRole('button', { name: 'Upload version' }).isEnabled(), true)

    // Not a ZIP: the server's 400.
    await page.getByLabel('Version archive (ZIP)').setInputFiles({ name: 'picture.zip', mimeType: 'application/zip', buffer: png(2, 2) })
    await page.getByLabel('Version name').fill('3.0.0')
    await page.getByRole('button', { name: 'Upload version' }).click()
    await alert.filter({ hasText: /ZIP/ }).waitFor()

    // Nothing chosen: said before anything is sent.
    await page.getByLabel('Version archive (ZIP)').setInputFiles([])
    await page.getByRole('button', { name: 'Upload version' }).click()
    await alert.filter({ hasText: 'Choose the version archive' }).waitFor()

    await page.reload()
    assert.equal(await page.locator('li.version').count(), 2, 'the refused uploads added nothing')
    assertNoProblems(site)
  })

  test('another user sees the pack but not the new-version form', async () => {
    const page = await site.newPage()
    await site.signUpDirectly(page, 'Visitor')
    await page.goto('/packs/Builder/Castle-Walls/')
    assert.equal(await page.locator('h1').innerText(), 'Castle Walls')
    assert.equal(await page.locator('#new-version').count(), 0)
    assert.equal(await page.getByRole('button', { name: 'Upload version' }).count(), 0)
    assert.equal(await page.getByRole('link', { name: 'Download' }).count(), 2)
    // The tag chip leads to the browse page filtered by it.
    await page.locator('.pack-header').getByRole('link', { name: 'Medieval' }).click()
    await page.waitForURL('**/?tag=Medieval')
    assert.deepEqual(await page.locator('.pack-title').allInnerTexts(), ['Castle Walls'])
    assertNoProblems(site)
  })

  test('browse: packs newest first; a card\'s tag chip filters, the filter in use is a link that drops it; search by words', async () => {
    const page = await site.newPage()
    await site.passGateDirectly(page)
    await page.goto('/')
    // Castle Walls got a new version after Rocket Parts was published: it is on top.
    assert.deepEqual(await page.locator('.pack-title').allInnerTexts(), ['Castle Walls', 'Rocket Parts'])
    assert.match(await page.locator('.pack-card').first().innerText(), /pack format 61 \(unknown Minecraft version\)/)

    // The chip takes its category's color from /assets/categories.css, and narrows the results to its tag.
    const chip = page.locator('.pack-card').getByRole('link', { name: 'Space' })
    assert.equal(await chip.evaluate((el) => getComputedStyle(el).backgroundColor), 'rgb(170, 85, 0)')
    await chip.click()
    await page.waitForURL('**/?tags=Space')
    await page.locator('.pack-title', { hasText: 'Castle Walls' }).waitFor({ state: 'detached' })
    assert.deepEqual(await page.locator('.pack-title').allInnerTexts(), ['Rocket Parts'])
    assert.equal(await page.getByRole('checkbox', { name: /^Space/ }).isChecked(), true)
    await page.getByRole('link', { name: 'Remove the tag Space' }).click()
    await page.waitForURL((url) => url.search === '')
    await page.locator('.pack-title', { hasText: 'Castle Walls' }).waitFor()
    assert.equal(await page.locator('.pack-title').count(), 2)

    await page.getByLabel('Search packs').fill('castle')
    await page.getByLabel('Search packs').press('Enter')
    await page.waitForURL('**/?q=castle')
    await page.locator('.pack-title', { hasText: 'Rocket Parts' }).waitFor({ state: 'detached' })
    assert.deepEqual(await page.locator('.pack-title').allInnerTexts(), ['Castle Walls'])
    await page.locator('.pack-title a').click()
    await page.waitForURL('**/packs/builder/castle-walls/')
    assertNoProblems(site)
  })
})
