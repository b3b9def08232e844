// Editing a pack in Chromium: from the pack page's Edit
// link, a person changes the title, moves a gallery image down, adds an image
// (with a progress bar), sees "Unsaved changes" and the leave-page warning,
// and saves with the button; a second tab opened before that save is refused
// with the conflict message and reloads to the saved state.
import assert from 'node:assert/strict'
import { randomInt, randomUUID } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import type { Page } from 'playwright-core'
import { assertNoProblems, startBrowserSite, type BrowserSite } from '../helpers/browser.js'
import { datapack, pixelPng, png } from '../helpers/fixtures.js'

const TIMEOUT = 15_000

interface PackJson {
  title: string
  summary: string
  revision: number
  media: { id: string; filename: string }[]
}

/** A pack with three gallery images, published as the create page does (uploads into a draft, then publish), as the page's user. */
async function publishWithGallery(page: Page, title: string): Promise<void> {
  const me = await page.request.get('/api/me/')
  assert.equal(me.status(), 200, await me.text())
  const headers = { 'x-csrf-token': ((await me.json()) as { csrf_token: string }).csrf_token }
  const draft = randomUUID()
  const files: [string, string, Buffer][] = [
    ['version', 'pack.zip', await datapack(48)],
    ['media', 'shot-1.png', png(8, 8, [200, 0, 0])],
    ['media', 'shot-2.png', png(8, 8, [0, 200, 0])],
    ['media', 'shot-3.png', png(8, 8, [0, 0, 200])],
  ]
  for (const [kind, name, buffer] of files) {
    const res = await page.request.post('/api/uploads/', {
      headers, multipart: { kind, draft_uuid: draft, file: { name, mimeType: kind === 'version' ? 'application/zip' : 'image/png', buffer } },
    })
    assert.equal(res.status(), 200, await res.text())
  }
  const saved = await page.request.post('/api/draft/', { headers, data: { draft, data: { title, summary: 'Before any edit', version_name: '1.0' } } })
  assert.equal(saved.status(), 200, await saved.text())
  const published = await page.request.post('/api/draft/publish/', { headers, data: { draft } })
  assert.equal(published.status(), 201, await published.text())
}

async function packJson(page: Page): Promise<PackJson> {
  const res = await page.request.get('/api/packs/editor/gallery-edit/')
  assert.equal(res.status(), 200, await res.text())
  return (await res.json()) as PackJson
}

const galleryNames = (page: Page) => page.locator('#gallery-list > li[data-media], #gallery-list > li[data-upload]').locator('.upload-name').allInnerTexts()

async function waitState(page: Page, pattern: RegExp): Promise<void> {
  await page.waitForFunction((source) => new RegExp(source).test(document.getElementById('edit-state')?.textContent ?? ''),
    pattern.source, { timeout: TIMEOUT })
}

describe('the edit page in a browser', { timeout: 180_000 }, () => {
  let site: BrowserSite
  let page: Page

  before(async () => {
    site = await startBrowserSite()
    page = await site.newPage()
    await site.signUpDirectly(page, 'Editor')
    await publishWithGallery(page, 'Gallery Edit')
  })
  after(() => site?.close())

  test('edit the title, reorder and add to the gallery with progress, see unsaved changes, save; a stale tab gets the 409 message', async () => {
    await page.goto('/packs/editor/gallery-edit/')
    await page.getByRole('link', { name: 'Edit pack' }).click()
    await page.waitForURL('**/packs/editor/gallery-edit/edit/')
    // The second tab opens the same page now, before anything is saved: its edit will start from this revision.
    const staleTab = await page.context().newPage()
    await staleTab.goto('/packs/editor/gallery-edit/edit/')

    assert.equal(await page.locator('#edit-state').innerText(), 'No unsaved changes')
    assert.deepEqual(await galleryNames(page), ['shot-1.png', 'shot-2.png', 'shot-3.png'])

    await page.getByLabel('Title').fill('Gallery Edited')
    await waitState(page, /^Unsaved changes$/)
    // Typing it back is no change.
    await page.getByLabel('Title').fill('Gallery Edit')
    await waitState(page, /^No unsaved changes$/)
    await page.getByLabel('Title').fill('Gallery Edited')
    await waitState(page, /^Unsaved changes$/)

    // Leaving now asks first; staying keeps everything typed.
    const dialog = page.waitForEvent('dialog')
    void page.locator('#cancel').click().catch(() => {})
    const asked = await dialog
    assert.equal(asked.type(), 'beforeunload')
    await asked.dismiss()
    assert.match(page.url(), /\/edit\/$/)
    assert.equal(await page.getByLabel('Title').inputValue(), 'Gallery Edited')

    // Reorder with the buttons: shot-1 one place down. The focus stays on the button, so it can be pressed again.
    await page.getByRole('button', { name: 'Move down shot-1.png' }).click()
    assert.deepEqual(await galleryNames(page), ['shot-2.png', 'shot-1.png', 'shot-3.png'])
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Move down shot-1.png')
    assert.match(await page.locator('#gallery-live').innerText(), /Moved shot-1\.png to position 2 of 3/)

    // Add an image of ~3 MiB (random pixels do not compress), with the upload slowed so the progress bar moves.
    await page.evaluate(() => {
      const seen = { bars: 0, values: [] as number[] }
      ;(window as unknown as { progressSeen: typeof seen }).progressSeen = seen
      new MutationObserver((records) => {
        for (const record of records) {
          for (const node of record.addedNodes) {
            if (node instanceof HTMLElement && (node.matches('progress') || node.querySelector('progress'))) seen.bars++
          }
          if (record.type === 'attributes' && record.target instanceof HTMLProgressElement) seen.values.push(record.target.value)
        }
      }).observe(document.getElementById('gallery-list')!, { childList: true, subtree: true, attributes: true, attributeFilter: ['value'] })
    })
    const big = pixelPng(1024, 1024, () => [randomInt(256), randomInt(256), randomInt(256)])
    assert.ok(big.length > 3_000_000, `an incompressible image: ${big.length} bytes`)
    const cdp = await page.context().newCDPSession(page)
    await cdp.send('Network.enable')
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: 2 * 1024 * 1024 })
    await page.getByLabel('Add images or videos').setInputFiles({ name: 'big.png', mimeType: 'image/png', buffer: big })
    await page.locator('#gallery-list > li.pending progress').waitFor({ timeout: TIMEOUT })
    await waitState(page, /^Unsaved changes$/)
    await page.locator('#gallery-list > li[data-upload]').filter({ hasText: 'big.png' }).waitFor({ timeout: 60_000 })
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 })
    await cdp.detach()
    const progress = await page.evaluate(() => (window as unknown as { progressSeen: { bars: number; values: number[] } }).progressSeen)
    const values = progress.values.join(', ')
    assert.equal(progress.bars, 1, 'a progress bar appeared for the upload')
    assert.ok(progress.values.some((v) => v > 0 && v < 1), `the bar showed the upload part-way: ${values}`)
    assert.equal(await page.locator('#gallery-list progress').count(), 0, 'the bar is replaced by the finished item')
    assert.deepEqual(await galleryNames(page), ['shot-2.png', 'shot-1.png', 'shot-3.png', 'big.png'])
    await page.waitForFunction(() => {
      const img = document.querySelector<HTMLImageElement>('#gallery-list > li[data-upload] img')
      return img !== null && img.complete && img.naturalWidth === 1024
    }, undefined, { timeout: TIMEOUT })

    // Nothing is saved until the button is pressed.
    let stored = await packJson(page)
    assert.equal(stored.title, 'Gallery Edit')
    assert.equal(stored.revision, 1)
    await page.getByRole('button', { name: 'Save changes' }).click()
    await waitState(page, /^All changes saved \d\d:\d\d:\d\d$/)
    assert.equal(await page.locator('#save-status').innerText(), 'Saved.')
    stored = await packJson(page)
    assert.equal(stored.title, 'Gallery Edited')
    assert.equal(stored.summary, 'Before any edit')
    assert.equal(stored.revision, 2)
    assert.deepEqual(stored.media.map((m) => m.filename), ['shot-2.png', 'shot-1.png', 'shot-3.png', 'big.png'])
    assert.equal(await page.locator('#edit-title-heading').innerText(), 'Gallery Edited')
    // The new item is now one of the pack's media, by its file id.
    assert.equal(await page.locator('#gallery-list > li[data-media]').count(), 4)
    assert.equal(await page.locator('#gallery-list > li[data-media]').last().getAttribute('data-media'), stored.media[3]!.id)

    // Saved: leaving asks nothing.
    await page.locator('#cancel').click()
    await page.waitForURL('**/packs/editor/gallery-edit/')
    assert.equal(await page.locator('h1').innerText(), 'Gallery Edited')
    assert.equal(await page.locator('.gallery img').count(), 4)
    assertNoProblems(site)

    // The second tab still shows revision 1: its save is refused, said plainly, with a way to reload.
    await staleTab.getByLabel('Summary').fill('From the stale tab')
    await staleTab.getByRole('button', { name: 'Save changes' }).click()
    const conflict = staleTab.locator('#edit-conflict')
    await conflict.waitFor({ state: 'visible', timeout: TIMEOUT })
    assert.match(await conflict.innerText(), /changed elsewhere .* not saved\. Reload the page/s)
    assert.equal(await staleTab.evaluate(() => document.activeElement?.id), 'edit-reload', 'the focus moves to the way out')
    assert.equal(await staleTab.locator('#edit-state').innerText(), 'Unsaved changes', 'what was typed is still there')
    assert.equal((await packJson(page)).summary, 'Before any edit', 'nothing was overwritten')
    await staleTab.getByRole('link', { name: 'Reload the page' }).click()
    await staleTab.waitForFunction(() => (document.getElementById('title') as HTMLInputElement | null)?.value === 'Gallery Edited', undefined, { timeout: TIMEOUT })
    assert.equal(await staleTab.locator('#edit-state').innerText(), 'No unsaved changes')
    assert.equal(await staleTab.locator('#revision').inputValue(), '2')
    await staleTab.close()
  })

  test('replace the thumbnail and remove a gallery item; a refused title is marked at its field', async () => {
    await page.goto('/packs/editor/gallery-edit/edit/')
    assert.equal(await page.locator('#thumbnail-none').innerText(), 'No thumbnail.')
    await page.getByLabel('Upload a new thumbnail').setInputFiles({ name: 'icon.png', mimeType: 'image/png', buffer: png(16, 16, [0, 200, 0]) })
    await page.locator('#thumbnail-preview').waitFor({ timeout: TIMEOUT })
    await waitState(page, /^Unsaved changes$/)
    await page.getByRole('button', { name: 'Remove shot-3.png' }).click()
    assert.deepEqual(await galleryNames(page), ['shot-2.png', 'shot-1.png', 'big.png'])
    assert.match(await page.locator('#gallery-live').innerText(), /Removed shot-3\.png/)

    // An empty title: the server's 400 lands on the field; nothing is saved.
    await page.getByLabel('Title').fill('   ')
    await page.getByRole('button', { name: 'Save changes' }).click()
    await page.locator('#title-error').waitFor({ state: 'visible', timeout: TIMEOUT })
    assert.equal(await page.locator('#title-error').innerText(), 'Title must not be empty.')
    assert.equal(await page.getByLabel('Title').getAttribute('aria-invalid'), 'true')
    assert.equal((await packJson(page)).revision, 2)

    await page.getByLabel('Title').fill('Gallery Edited')
    await page.getByRole('button', { name: 'Save changes' }).click()
    await waitState(page, /^All changes saved/)
    const stored = (await packJson(page)) as PackJson & { thumbnail_url: string | null }
    assert.equal(stored.revision, 3)
    assert.ok(stored.thumbnail_url, 'the new thumbnail')
    assert.deepEqual(stored.media.map((m) => m.filename), ['shot-2.png', 'shot-1.png', 'big.png'])
    assert.equal(await page.locator('#thumbnail-remove').isVisible(), true, 'the saved thumbnail can now be removed')
    assert.equal(await page.locator('#title').getAttribute('aria-invalid'), null)
    assertNoProblems(site)
  })
})
