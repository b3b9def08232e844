// Inviting co-authors from the create page, in Chromium and by keyboard alone:
// type part of a name, move to it with the arrow keys, Enter adds it with a
// role of its own (changed with the keyboard); the author and anyone already in
// the list are not offered, and typing them (or a name nobody has) says why.
// The team is autosaved into the draft and restored on reload. A co-author whose
// account was disabled meanwhile makes the publish fail with a readable message
// on the Team field; once removed, the pack is published, the invitation waits
// for the invitee (API and /invitations/), who accepts and is listed on the
// pack page with the role chosen.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { Page } from 'playwright-core'
import { assertNoProblems, startBrowserSite, type BrowserSite } from '../helpers/browser.js'
import { datapack } from '../helpers/fixtures.js'

const TIMEOUT = 15_000

/** Waits until the suggestions shown are exactly `expected` (an older answer may be showing first). */
async function waitOptions(page: Page, expected: string[]): Promise<void> {
  await page.waitForFunction((want) => {
    const list = document.getElementById('team-options')
    if (!list || list.hidden) return false
    const texts = [...list.querySelectorAll('li[role="option"]')].map((li) => li.textContent)
    return JSON.stringify(texts) === want
  }, JSON.stringify(expected), { timeout: TIMEOUT })
}

/** Waits until the server's copy of the draft names exactly this team (the autosave has gone through). */
async function waitSavedTeam(page: Page, draft: string, expected: unknown): Promise<void> {
  await page.waitForFunction(async ([id, want]) => {
    const res = await fetch(`/api/draft/?draft=${id}`)
    return res.ok && JSON.stringify(((await res.json()) as { data: { team?: unknown } }).data.team ?? null) === want
  }, [draft, JSON.stringify(expected)] as const, { timeout: TIMEOUT, polling: 200 })
}

async function teamError(page: Page, text: string): Promise<void> {
  const line = page.locator('#team-error')
  await line.waitFor({ state: 'visible', timeout: TIMEOUT })
  await page.waitForFunction((want) => document.getElementById('team-error')?.textContent === want, text, { timeout: TIMEOUT })
  assert.equal(await line.getAttribute('role'), 'alert')
}

async function rows(page: Page): Promise<Array<[string, string]>> {
  return page.locator('#team-people li[data-username]').evaluateAll((items) =>
    items.map((li) => [(li as HTMLElement).dataset.username!, li.querySelector('select')!.value] as [string, string]))
}

async function focused(page: Page): Promise<string> {
  return page.evaluate(() => {
    const el = document.activeElement
    return el instanceof HTMLSelectElement ? `select:${el.closest('label')?.querySelector('.visually-hidden')?.textContent ?? ''}` : el?.id || el?.textContent?.trim() || ''
  })
}

describe('co-authors from the create page', { timeout: 180_000 }, () => {
  let site: BrowserSite
  let author: Page
  let invitee: Page

  before(async () => {
    site = await startBrowserSite()
    const [bernard, beatrix] = await Promise.all([site.newPage(), site.newPage()])
    ;[author, invitee] = await Promise.all([site.newPage(), site.newPage()])
    await Promise.all([
      site.signUpDirectly(author, 'Quill'), site.signUpDirectly(invitee, 'Bertha'),
      site.signUpDirectly(bernard, 'Bernard'), site.signUpDirectly(beatrix, 'Beatrix'),
    ])
  })
  after(() => site?.close())

  test('picked by keyboard with a role, saved, refused while disabled, invited on publish, accepted', async () => {
    await author.goto('/create/')
    await author.waitForURL(/\/create\/[0-9a-f-]{36}\/$/)
    const draft = /\/create\/([0-9a-f-]{36})\/$/.exec(new URL(author.url()).pathname)![1]!
    // What is said about invitations, next to the field.
    assert.match(await author.locator('#team-about').innerText(),
      /The invitations go out when the pack is published, and each person joins the team only once they accept/)

    const box = author.getByRole('combobox', { name: 'Add a co-author' })
    const keyboard = author.keyboard
    await box.focus()
    await keyboard.type('ber')
    await waitOptions(author, ['Bernard', 'Bertha'])
    assert.equal(await box.getAttribute('aria-expanded'), 'true')
    // Down twice is the second match; Enter adds it, as an uploader, and empties the box for the next name.
    await keyboard.press('ArrowDown')
    await keyboard.press('ArrowDown')
    assert.equal(await author.locator('#team-options [aria-selected="true"]').innerText(), 'Bertha')
    assert.equal(await box.getAttribute('aria-activedescendant'), 'team-options-1')
    await keyboard.press('Enter')
    await author.locator('#team-people li[data-username="Bertha"]').waitFor({ timeout: TIMEOUT })
    assert.deepEqual(await rows(author), [['Bertha', 'uploader']])
    assert.equal(await box.inputValue(), '')
    assert.equal(await box.getAttribute('aria-expanded'), 'false')
    assert.equal(await author.locator('#team-live').innerText(), 'Bertha added as uploader')
    assert.equal(await focused(author), 'team', 'the focus stays in the box')

    // Whoever is in the list already is not offered again; nor is the author.
    await keyboard.type('ber')
    await waitOptions(author, ['Bernard'])
    await keyboard.press('Escape')
    assert.equal(await box.getAttribute('aria-expanded'), 'false')
    for (let i = 0; i < 3; i++) await keyboard.press('Backspace')
    await keyboard.type('qu')
    await waitOptions(author, ['No matching users'])
    // Typed in full with Enter (nothing highlighted), each is refused with the reason.
    await keyboard.type('ill')
    await keyboard.press('Enter')
    await teamError(author, 'You are the author: the pack is yours once published. Add the people who work on it with you.')
    for (let i = 0; i < 5; i++) await keyboard.press('Backspace')
    assert.equal(await author.locator('#team-error').isHidden(), true, 'typing clears the message')
    await keyboard.type('BERTHA')
    await keyboard.press('Enter')
    await teamError(author, 'Bertha is in the list already.')
    for (let i = 0; i < 6; i++) await keyboard.press('Backspace')
    await keyboard.type('nobody-here')
    await keyboard.press('Enter')
    await teamError(author, 'No account is named "nobody-here".')
    assert.equal(await box.getAttribute('aria-invalid'), 'true')
    for (let i = 0; i < 11; i++) await keyboard.press('Backspace')
    assert.deepEqual(await rows(author), [['Bertha', 'uploader']])

    // The role: Tab to Bertha's choice, ArrowDown makes her a maintainer.
    await keyboard.press('Tab')
    assert.equal(await focused(author), 'select:Role of Bertha')
    await keyboard.press('ArrowDown')
    assert.deepEqual(await rows(author), [['Bertha', 'maintainer']])
    // Back to the box for another: a name typed in full and Enter adds it too.
    await keyboard.press('Shift+Tab')
    assert.equal(await focused(author), 'team')
    await keyboard.type('beatrix')
    await keyboard.press('Enter')
    await author.locator('#team-people li[data-username="Beatrix"]').waitFor({ timeout: TIMEOUT })
    await waitSavedTeam(author, draft, [{ username: 'Bertha', role: 'maintainer' }, { username: 'Beatrix', role: 'uploader' }])

    // The rest of the pack, then a reload: the team is restored from the draft.
    await author.getByLabel('Title').fill('Shared Lanterns')
    await author.getByLabel('Version name').fill('1.0.0')
    await author.getByLabel('Version archive (ZIP)').setInputFiles({ name: 'lanterns.zip', mimeType: 'application/zip', buffer: await datapack(48) })
    await author.locator('#version-uploads li[data-upload]').waitFor({ timeout: TIMEOUT })
    await author.waitForFunction(async (id) => {
      const res = await fetch(`/api/draft/?draft=${id}`)
      return res.ok && ((await res.json()) as { data: { version_name?: string } }).data.version_name === '1.0.0'
    }, draft, { timeout: TIMEOUT, polling: 200 })
    await author.reload()
    assert.deepEqual(await rows(author), [['Bertha', 'maintainer'], ['Beatrix', 'uploader']])

    // Beatrix's account is disabled before the publish: nothing is published, the Team field says whom and why.
    await site.cli(['user', 'disable', 'Beatrix', '--reason', 'left the site'])
    const publish = author.getByRole('button', { name: 'Publish' })
    await publish.focus()
    await keyboard.press('Enter')
    await teamError(author, 'The account "Beatrix" is disabled. Remove them from the team to publish.')
    assert.equal(await author.locator('#publish-error').innerText(), 'Not published: see the marked field.')
    assert.equal(await focused(author), 'team', 'the focus goes to the marked field')
    assert.equal(await author.locator('#team-people li.refused').getAttribute('data-username'), 'Beatrix')
    assert.equal(new URL(author.url()).pathname, `/create/${draft}/`)

    // Remove her by keyboard: the row goes, the focus comes back to the box (nobody after her), the mark with it.
    await author.getByRole('button', { name: 'Remove Beatrix' }).focus()
    await keyboard.press('Enter')
    await author.locator('#team-people li[data-username="Beatrix"]').waitFor({ state: 'detached', timeout: TIMEOUT })
    assert.equal(await focused(author), 'team')
    assert.equal(await author.locator('#team-error').isHidden(), true)
    assert.equal(await author.locator('#team-live').innerText(), 'Beatrix removed')
    await publish.focus()
    await Promise.all([author.waitForURL('**/packs/quill/shared-lanterns/', { timeout: TIMEOUT }), keyboard.press('Enter')])
    // The author sees the invitation waiting.
    const listed = async (page: Page) => (await page.locator('.team-list .team-member').allInnerTexts()).map((t) => t.replace(/\s+/g, ' ').trim())
    assert.deepEqual(await listed(author), ['Quill owner', 'Bertha maintainer invited'])

    // The invitee: the invitation through the API and on /invitations/; Accept by keyboard; listed with the role.
    const inbox = (await (await invitee.request.get('/api/invitations/')).json()) as Array<Record<string, unknown>>
    assert.deepEqual(inbox.map((i) => [i.kind, i.namespace, i.pack_id, i.role, i.invited_by]), [['invitation', 'quill', 'shared-lanterns', 'maintainer', 'Quill']])
    await invitee.goto('/invitations/')
    const card = invitee.locator('li.invitation[data-pack="quill:shared-lanterns"]')
    assert.match((await card.innerText()).replace(/\s+/g, ' '), /Shared Lanterns quill:shared-lanterns Quill invites you as maintainer\./)
    await card.getByRole('button', { name: 'Accept' }).focus()
    await Promise.all([invitee.waitForURL('**/packs/quill/shared-lanterns/', { timeout: TIMEOUT }), invitee.keyboard.press('Enter')])
    assert.deepEqual(await listed(invitee), ['Quill owner', 'Bertha maintainer'])
    assert.deepEqual((await (await invitee.request.get('/api/invitations/')).json()) as unknown[], [])
    assertNoProblems(site)
  })
})
