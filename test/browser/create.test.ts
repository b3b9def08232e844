// backends: sqlite — pages are backend-independent; test/http/pages-*.test.ts cover them on every backend
// The create page in Chromium, end to end: gate -> sign up -> type (debounced
// autosave) -> reload (nothing lost) -> uploads with progress, previews and
// delete -> the server's refusal shown -> publish (missing field inline, then
// for real) -> the pack page -> the download is the uploaded archive. And My
// drafts: listed, resumed, deleted.
import assert from 'node:assert/strict'
import { createHash, randomBytes } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import type { Page } from 'playwright-core'
import { assertNoProblems, startBrowserSite, type BrowserSite } from '../helpers/browser.js'
import { png, zip } from '../helpers/fixtures.js'

const SAVED = /^Saved \d\d:\d\d:\d\d$/
const TIMEOUT = 15_000

interface DraftJson {
  data: Record<string, unknown>
  uploads: Array<{ uuid: string; kind: string; filename: string; content_type: string; url: string }>
}

/** Waits until the autosave state says "Saved hh:mm:ss" (after the caller's last edit, which set it to something else). */
async function waitSaved(page: Page): Promise<void> {
  await page.waitForFunction((pattern) => new RegExp(pattern).test(document.getElementById('save-state')?.textContent ?? ''),
    SAVED.source, { timeout: TIMEOUT })
}

/** GET /api/draft/ with the page's own session cookie. */
async function loadDraft(page: Page, draft: string): Promise<{ status: number; body: DraftJson }> {
  const res = await page.request.get(`/api/draft/?draft=${draft}`)
  return { status: res.status(), body: (res.ok() ? await res.json() : null) as DraftJson }
}

function draftOf(page: Page): string {
  const match = /\/create\/([0-9a-f-]{36})\/$/.exec(new URL(page.url()).pathname)
  assert.ok(match, `on a create page: ${page.url()}`)
  return match[1]!
}

describe('the create page', () => {
  let site: BrowserSite

  before(async () => {
    // A small thumbnail limit, so a refused oversize upload (413) is quick to provoke.
    site = await startBrowserSite({ PACKS_MAX_THUMBNAIL_SIZE: '256KiB' })
    await site.cli(['category', 'create', 'theme', '--name', 'Theme', '--color', '#aa5500'])
    await site.cli(['category', 'create', 'kind', '--name', 'Kind', '--color', '#0055aa'])
    await site.cli(['tag', 'create', 'Medieval', '--category', 'theme'])
    await site.cli(['tag', 'create', 'Space', '--category', 'theme'])
    await site.cli(['tag', 'create', 'Adventure', '--category', 'kind'])
  })
  after(() => site.close())

  test('type, autosave, reload, upload, delete, publish, download', async () => {
    const page = await site.newPage()
    await site.signUp(page, 'maker')
    await page.goto('/create/')
    await page.waitForURL(/\/create\/[0-9a-f-]{36}\/$/)
    const draft = draftOf(page)
    assert.equal(await page.locator('#save-state').innerText(), 'New draft')

    // Typing: the autosave waits for a pause, so a whole title is one save or two, not one per keystroke.
    const saves: string[] = []
    page.on('request', (request) => {
      if (request.method() === 'POST' && new URL(request.url()).pathname === '/api/draft/') saves.push(request.postData() ?? '')
    })
    await page.getByLabel('Title').pressSequentially('Glowing Caves', { delay: 40 })
    await waitSaved(page)
    assert.ok(saves.length >= 1 && saves.length <= 2, `debounced: ${saves.length} saves for 13 keystrokes`)

    // Enter in a text field does not publish (nor submit anything).
    const publishes: string[] = []
    page.on('request', (request) => {
      if (new URL(request.url()).pathname === '/api/draft/publish/') publishes.push(request.url())
    })
    await page.getByLabel('Title').press('Enter')
    await page.waitForTimeout(300)
    assert.deepEqual(publishes, [])
    assert.equal(new URL(page.url()).pathname, `/create/${draft}/`)

    await page.getByLabel('Summary').fill('Caves that light themselves')
    await page.getByLabel('Category').selectOption('theme')
    await page.getByLabel('Description').fill('# Light\n\nEvery cave **glows**.')
    await page.getByLabel('Changelog').fill('First release')

    // Tags: arrows + Enter, a mouse click, an exact name + Enter; Backspace and the remove button take them away.
    const tagBox = page.getByRole('combobox', { name: 'Tags' })
    const chips = page.locator('#tag-chips li[data-tag]')
    await tagBox.click()
    await tagBox.pressSequentially('med')
    await page.getByRole('option', { name: /Medieval/ }).waitFor({ timeout: TIMEOUT })
    // The answer for "med" itself (an earlier one, for the focus or for "m", may show Medieval among others).
    await page.waitForFunction(() => [...document.querySelectorAll('#tag-options li[role="option"]')].map((li) => li.textContent).join('|').match(/^Medieval\b[^|]*$/) !== null, undefined, { timeout: TIMEOUT })
    await tagBox.press('ArrowDown')
    assert.equal(await tagBox.getAttribute('aria-activedescendant'), 'tag-option-0')
    await tagBox.press('Enter')
    await page.locator('#tag-chips li[data-tag="Medieval"]').waitFor()
    assert.equal(await tagBox.inputValue(), '', 'the box is cleared after picking')
    await tagBox.pressSequentially('spa')
    await page.getByRole('option', { name: /Space/ }).click()
    await page.locator('#tag-chips li[data-tag="Space"]').waitFor()
    await tagBox.pressSequentially('Adventure')
    await page.getByRole('option', { name: /Adventure/ }).waitFor({ timeout: TIMEOUT })
    await tagBox.press('Enter')
    await page.locator('#tag-chips li[data-tag="Adventure"]').waitFor()
    assert.deepEqual(await chips.evaluateAll((items) => items.map((li) => (li as HTMLElement).dataset.tag)), ['Medieval', 'Space', 'Adventure'])
    // Already chosen tags are not offered again.
    await tagBox.pressSequentially('e')
    await page.getByRole('listbox').getByRole('option').first().waitFor({ timeout: TIMEOUT })
    const offered = await page.getByRole('listbox').getByRole('option').allInnerTexts()
    assert.ok(!offered.some((o) => /Medieval|Space|Adventure/.test(o)), `offered: ${offered.join(', ')}`)
    await tagBox.press('Escape')
    assert.equal(await tagBox.getAttribute('aria-expanded'), 'false')
    await tagBox.fill('')
    await tagBox.press('Backspace')
    await page.locator('#tag-chips li[data-tag="Adventure"]').waitFor({ state: 'detached' })
    await page.getByRole('button', { name: 'Remove Space' }).click()
    await page.locator('#tag-chips li[data-tag="Space"]').waitFor({ state: 'detached' })
    await tagBox.pressSequentially('adv')
    await page.getByRole('option', { name: /Adventure/ }).waitFor({ timeout: TIMEOUT })
    await tagBox.press('ArrowDown')
    await tagBox.press('Enter')
    await page.locator('#tag-chips li[data-tag="Adventure"]').waitFor()
    await waitSaved(page)

    const saved = await loadDraft(page, draft)
    assert.equal(saved.status, 200)
    assert.deepEqual(
      { ...saved.body.data, revision: undefined },
      {
        title: 'Glowing Caves', summary: 'Caves that light themselves', category: 'theme', description: '# Light\n\nEvery cave **glows**.',
        tags: ['Medieval', 'Adventure'], version_name: '', changelog: 'First release', revision: undefined,
      },
    )

    // A keystroke right before a reload is not lost (keepalive save on pagehide, and the local copy).
    await page.getByLabel('Summary').press('End')
    await page.getByLabel('Summary').pressSequentially('!')
    await page.reload()
    assert.equal(await page.getByLabel('Title').inputValue(), 'Glowing Caves')
    assert.equal(await page.getByLabel('Summary').inputValue(), 'Caves that light themselves!')
    assert.equal(await page.getByLabel('Category').inputValue(), 'theme')
    assert.equal(await page.getByLabel('Description').inputValue(), '# Light\n\nEvery cave **glows**.')
    assert.equal(await page.getByLabel('Changelog').inputValue(), 'First release')
    assert.deepEqual(
      await chips.evaluateAll((items) => items.map((li) => [(li as HTMLElement).dataset.tag, li.querySelector('.chip')!.className])),
      [['Medieval', 'chip cat-theme'], ['Adventure', 'chip cat-kind']],
    )
    // The chips really are colored by /assets/categories.css.
    assert.equal(await page.locator('#tag-chips li[data-tag="Medieval"] .chip').evaluate((el) => getComputedStyle(el).backgroundColor), 'rgb(170, 85, 0)')
    await page.waitForFunction(async (id) => {
      const res = await fetch(`/api/draft/?draft=${id}`)
      return res.ok && ((await res.json()) as { data: { summary?: string } }).data.summary === 'Caves that light themselves!'
    }, draft, { timeout: TIMEOUT, polling: 200 })
    await waitSaved(page)

    // Thumbnail: a preview that really loads.
    await page.getByLabel('Thumbnail').setInputFiles({ name: 'icon.png', mimeType: 'image/png', buffer: png(16, 16, [0, 200, 0]) })
    const thumbPreview = page.locator('#thumbnail-uploads li[data-upload] img.upload-preview')
    await thumbPreview.waitFor({ timeout: TIMEOUT })
    await page.waitForFunction(() => {
      const img = document.querySelector<HTMLImageElement>('#thumbnail-uploads img.upload-preview')
      return img !== null && img.complete && img.naturalWidth === 16
    }, undefined, { timeout: TIMEOUT })
    assert.equal(await thumbPreview.getAttribute('alt'), 'Preview of icon.png')

    // The version archive: ~3 MiB of incompressible bytes, with a progress bar while it goes up.
    const archive = await zip({
      'pack.mcmeta': JSON.stringify({ pack: { pack_format: 48, description: 'Glowing caves' } }),
      'data/caves/noise.bin': randomBytes(3 * 1024 * 1024),
    })
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
      }).observe(document.getElementById('version-uploads')!, { childList: true, subtree: true, attributes: true, attributeFilter: ['value'] })
    })
    // Slow the upload to ~2 MiB/s (Chromium's own network emulation), so the bar has time to move.
    const cdp = await page.context().newCDPSession(page)
    await cdp.send('Network.enable')
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: 2 * 1024 * 1024 })
    await page.getByLabel('Version archive (ZIP)').setInputFiles({ name: 'glowing-caves.zip', mimeType: 'application/zip', buffer: archive })
    await page.locator('#version-uploads li[data-upload]').filter({ hasText: 'glowing-caves.zip' }).waitFor({ timeout: 60_000 })
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 })
    await cdp.detach()
    const progress = await page.evaluate(() => (window as unknown as { progressSeen: { bars: number; values: number[] } }).progressSeen)
    assert.equal(progress.bars, 1, 'a progress bar appeared for the upload')
    const values = progress.values.join(', ')
    assert.ok(progress.values.some((v) => v > 0 && v < 1), `the bar showed the upload part-way: ${values}`)
    assert.ok(progress.values.every((v, i) => v > 0 && v <= 1 && (i === 0 || v >= progress.values[i - 1]!)), `it only moved forward: ${values}`)
    assert.equal(progress.values.at(-1), 1, 'and reached the end')
    assert.equal(await page.locator('#version-uploads progress').count(), 0, 'the bar is replaced by the finished upload')
    assert.equal(await page.locator('#version-uploads .file-badge').innerText(), 'ZIP')

    // Media: two images at once, both previewed; then one deleted.
    await page.getByLabel('Media').setInputFiles([
      { name: 'shot-one.png', mimeType: 'image/png', buffer: png(8, 8, [200, 0, 0]) },
      { name: 'shot-two.png', mimeType: 'image/png', buffer: png(8, 8, [0, 0, 200]) },
    ])
    const media = page.locator('#media-uploads li[data-upload]')
    await media.nth(1).waitFor({ timeout: TIMEOUT })
    assert.deepEqual(await media.locator('.upload-name').allInnerTexts(), ['shot-one.png', 'shot-two.png'])
    assert.equal(await media.locator('img.upload-preview').count(), 2)
    const removed = await media.nth(1).getAttribute('data-upload')
    await page.getByRole('button', { name: 'Delete shot-two.png' }).click()
    await page.locator(`li[data-upload="${removed}"]`).waitFor({ state: 'detached', timeout: TIMEOUT })
    let current = await loadDraft(page, draft)
    assert.ok(!current.body.uploads.some((u) => u.uuid === removed), 'the deleted upload is gone from the draft')
    assert.deepEqual(current.body.uploads.map((u) => [u.kind, u.filename]), [
      ['thumbnail', 'icon.png'], ['version', 'glowing-caves.zip'], ['media', 'shot-one.png'],
    ])

    // A file that is no image, as the thumbnail: the server's reason next to the field; the current thumbnail stays.
    await page.getByLabel('Thumbnail').setInputFiles({ name: 'notes.txt', mimeType: 'image/png', buffer: Buffer.from('just some text, not a picture\n') })
    const thumbError = page.locator('#thumbnail-error')
    await thumbError.waitFor({ state: 'visible', timeout: TIMEOUT })
    assert.equal(await thumbError.getAttribute('role'), 'alert')
    assert.match(await thumbError.innerText(), /^notes\.txt: Invalid file type for kind "thumbnail": expected PNG, JPEG, GIF, WEBP\.$/)
    assert.equal(await page.locator('#thumbnail-uploads li[data-upload]').count(), 1)
    assert.match(await page.locator('#file-thumbnail-hint').innerText(), /at most 256 KiB/)
    // Too large (413): the server's reason again.
    await page.getByLabel('Thumbnail').setInputFiles({ name: 'huge.png', mimeType: 'image/png', buffer: Buffer.concat([png(), randomBytes(600 * 1024)]) })
    await page.waitForFunction(() => /^huge\.png: /.test(document.getElementById('thumbnail-error')?.textContent ?? ''), undefined, { timeout: TIMEOUT })
    assert.equal(await thumbError.innerText(), 'huge.png: The file is larger than the thumbnail limit of 256 KiB.')
    assert.equal(await page.locator('#thumbnail-uploads li[data-upload]').count(), 1)

    // A second thumbnail replaces the first once it has arrived (and clears the error).
    const firstThumb = await page.locator('#thumbnail-uploads li[data-upload]').getAttribute('data-upload')
    await page.getByLabel('Thumbnail').setInputFiles({ name: 'icon-2.png', mimeType: 'image/png', buffer: png(4, 4, [0, 0, 0]) })
    await page.locator(`li[data-upload="${firstThumb}"]`).waitFor({ state: 'detached', timeout: TIMEOUT })
    assert.deepEqual(await page.locator('#thumbnail-uploads .upload-name').allInnerTexts(), ['icon-2.png'])
    assert.equal(await thumbError.isHidden(), true)
    current = await loadDraft(page, draft)
    assert.deepEqual(current.body.uploads.filter((u) => u.kind === 'thumbnail').map((u) => u.filename), ['icon-2.png'])

    // Uploads survive a reload too.
    await page.reload()
    assert.deepEqual(await page.locator('li[data-upload] .upload-name').allInnerTexts(), ['icon-2.png', 'shot-one.png', 'glowing-caves.zip'])

    // Publishing without a version name: the field says so, and has the focus.
    await page.getByRole('button', { name: 'Publish' }).click()
    const nameError = page.locator('#version_name-error')
    await nameError.waitFor({ state: 'visible', timeout: TIMEOUT })
    assert.equal(await nameError.innerText(), 'Name this version, for example 1.0.0.')
    assert.equal(await page.getByLabel('Version name').getAttribute('aria-invalid'), 'true')
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'version_name')
    assert.equal(await page.locator('#title-error').isHidden(), true, 'the title is not marked')
    assert.equal(await page.locator('#version-error').isHidden(), true, 'the archive is not marked')
    assert.equal(new URL(page.url()).pathname, `/create/${draft}/`)

    await page.getByLabel('Version name').fill('1.0.0')
    assert.equal(await nameError.isHidden(), true, 'typing clears the message')
    assert.equal(await page.getByLabel('Version name').getAttribute('aria-invalid'), null)
    await page.getByRole('button', { name: 'Publish' }).click()
    await page.waitForURL('**/packs/maker/glowing-caves/', { timeout: TIMEOUT })

    // The pack page.
    assert.equal(await page.locator('h1').innerText(), 'Glowing Caves')
    assert.equal(await page.locator('#pack-id').innerText(), 'maker:glowing-caves')
    const version = page.locator('li.version, article.version').first()
    const versionText = await version.innerText()
    assert.match(versionText, /1\.0\.0/)
    assert.match(versionText, /Minecraft 1\.21 – 1\.21\.1 \(data pack\)/)
    const href = await version.locator('a.download').getAttribute('href')
    assert.ok(href, 'a download link')
    const download = await page.request.get(href)
    assert.equal(download.status(), 200)
    const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex')
    assert.equal(sha(await download.body()), sha(archive), 'the download is the archive that was uploaded')

    // The draft was consumed.
    assert.equal((await loadDraft(page, draft)).status, 404)
    assertNoProblems(site)
  })

  test('a refused save is retried with backoff; edits survive a reload; a newer local copy is restored, an older one dropped', async () => {
    const page = await site.newPage()
    // Signed up through the form in the first test; here the account is only the way in.
    await site.signUpDirectly(page, 'typist')
    await page.goto('/create/')
    await page.waitForURL(/\/create\/[0-9a-f-]{36}\/$/)
    const draft = draftOf(page)
    await page.getByLabel('Title').fill('Offline edits')
    await waitSaved(page)

    // The server stops taking saves (408: a timeout, worth retrying).
    const refused: number[] = []
    let thirdRefused = () => {}
    const threeRefused = new Promise<void>((resolve) => { thirdRefused = resolve })
    await page.context().route('**/api/draft/', (route) => {
      if (route.request().method() !== 'POST') return route.continue()
      if (refused.push(Date.now()) === 3) thirdRefused()
      return route.fulfill({ status: 408, contentType: 'application/json', body: JSON.stringify({ detail: 'request timed out' }) })
    })
    await page.getByLabel('Summary').fill('typed while the server was away')
    await page.waitForFunction(() => document.getElementById('save-state')?.textContent === 'Not saved, retrying…', undefined, { timeout: TIMEOUT })
    // The first attempt and two retries, 1 s and then 2 s later: backoff, not a fixed interval. Only lower
    // bounds (a timer never fires early), with room for the time each request takes to reach this process.
    await Promise.race([threeRefused, new Promise((resolve) => setTimeout(resolve, TIMEOUT).unref())])
    assert.ok(refused.length >= 3, `retried: ${refused.length} attempts`)
    const gaps = [refused[1]! - refused[0]!, refused[2]! - refused[1]!]
    assert.ok(gaps[0]! >= 800 && gaps[1]! >= 1600, `retried with backoff (1 s, 2 s, ...): ${gaps.join(' ms, ')} ms apart`)
    assert.equal((await loadDraft(page, draft)).body.data.summary, '', 'the server does not have it')

    // Reload while saves still fail: the edit is still in the field (sent with keepalive as the page went, or
    // restored from the browser's local copy), and it is saved once the server takes saves again.
    await page.reload()
    assert.equal(await page.getByLabel('Summary').inputValue(), 'typed while the server was away')
    await page.context().unroute('**/api/draft/')
    await page.getByLabel('Title').fill('Offline edits, later')
    await waitSaved(page)
    const saved = (await loadDraft(page, draft)).body.data
    assert.equal(saved.summary, 'typed while the server was away')
    assert.equal(saved.title, 'Offline edits, later')
    const copyKey = `packs:draft:${draft}`
    assert.equal(await page.evaluate((key) => localStorage.getItem(key), copyKey), null, 'the local copy is dropped once saved')

    // A page that went away before its last save arrived leaves a newer local copy: the next visit restores and saves it.
    const revision = saved.revision as number
    assert.equal(typeof revision, 'number', 'each save carries the revision of the edit it holds')
    const leftBehind = { ...saved, summary: 'left behind by a closed tab', revision: revision + 1000 }
    const leaveCopy = (copy: unknown) => page.evaluate(([key, text]) => localStorage.setItem(key!, text!), [copyKey, JSON.stringify(copy)])
    await leaveCopy({ revision: revision + 1000, data: leftBehind, extra: {} })
    await page.reload()
    assert.equal(await page.getByLabel('Summary').inputValue(), 'left behind by a closed tab')
    await waitSaved(page)
    assert.equal((await loadDraft(page, draft)).body.data.summary, 'left behind by a closed tab')

    // An older local copy (the server has newer edits, from another tab say) is dropped, not applied.
    await leaveCopy({ revision: 1, data: { ...saved, summary: 'stale' }, extra: {} })
    await page.reload()
    assert.equal(await page.getByLabel('Summary').inputValue(), 'left behind by a closed tab')
    assert.equal(await page.evaluate((key) => localStorage.getItem(key), copyKey), null)
    assertNoProblems(site)
  })

  test('My drafts: a draft is listed, resumed and deleted', async () => {
    const page = await site.newPage()
    await site.signUpDirectly(page, 'drafter')
    await page.goto('/drafts/')
    assert.equal(await page.locator('#drafts-empty').isVisible(), true)

    const drafts: string[] = []
    for (const title of ['Keep me', 'Throw me away']) {
      await page.goto('/create/')
      await page.waitForURL(/\/create\/[0-9a-f-]{36}\/$/)
      drafts.push(draftOf(page))
      await page.getByLabel('Title').fill(title)
      await waitSaved(page)
    }
    await page.getByLabel('Media').setInputFiles({ name: 'pic.png', mimeType: 'image/png', buffer: png() })
    await page.locator('#media-uploads li[data-upload]').waitFor({ timeout: TIMEOUT })

    await page.goto('/drafts/')
    const rows = page.locator('#draft-list li[data-draft]')
    assert.deepEqual(await rows.locator('.draft-title').allInnerTexts(), ['Throw me away', 'Keep me'], 'newest first')
    assert.match(await rows.first().innerText(), /1 upload/)
    assert.match(await rows.nth(1).innerText(), /0 uploads/)

    await page.getByRole('link', { name: 'Resume Keep me' }).click()
    await page.waitForURL(`**/create/${drafts[0]}/`)
    assert.equal(await page.getByLabel('Title').inputValue(), 'Keep me')

    await page.goto('/drafts/')
    // Cancelling the confirmation keeps the draft.
    page.once('dialog', (dialog) => void dialog.dismiss())
    await page.getByRole('button', { name: 'Delete Throw me away' }).click()
    assert.equal(await rows.count(), 2)
    page.once('dialog', (dialog) => {
      assert.match(dialog.message(), /Throw me away/)
      void dialog.accept()
    })
    await page.getByRole('button', { name: 'Delete Throw me away' }).click()
    await page.locator(`li[data-draft="${drafts[1]}"]`).waitFor({ state: 'detached', timeout: TIMEOUT })
    assert.match(await page.locator('#drafts-status').innerText(), /Deleted "Throw me away"/)
    assert.equal((await loadDraft(page, drafts[1]!)).status, 404)
    const list = (await (await page.request.get('/api/drafts/')).json()) as Array<{ draft: string }>
    assert.deepEqual(list.map((d) => d.draft), [drafts[0]])

    await page.reload()
    assert.deepEqual(await rows.locator('.draft-title').allInnerTexts(), ['Keep me'])
    assertNoProblems(site)
  })
})
