// backends: sqlite — pages are backend-independent; test/http/pages-*.test.ts cover them on every backend
// Settings → API tokens in Chromium: create a token, copy its header line,
// use it from a script (Node's fetch, no cookies), revoke it in the page, and
// see the script refused at once; and a publish-only token for one pack, the
// build job's token, made by choosing the pack on the page.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { assertNoProblems, startBrowserSite, type BrowserSite } from '../helpers/browser.js'
import { datapack, multipart } from '../helpers/fixtures.js'
import { createPackAs } from './packs-api.js'

describe('API tokens page in a browser', { timeout: 120_000 }, () => {
  let site: BrowserSite
  before(async () => { site = await startBrowserSite() })
  after(() => site?.close())

  test('create → copy the header line → use it from a script → revoke → 401 → gone after reload', async () => {
    const page = await site.newPage()
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: site.server.url })
    // Signing up through the form is test/browser/accounts.test.ts's; here the account is only the way in.
    await site.signUpDirectly(page, 'Scripter')
    await page.goto('/')

    await page.getByRole('link', { name: 'API tokens' }).click()
    await page.waitForURL('**/settings/tokens/')
    assert.equal(await page.locator('#new-token-panel').isVisible(), false, 'no token is shown before one is made')
    assert.equal(await page.getByText('You have no API tokens.').isVisible(), true)

    await page.getByLabel('Name').fill('release script')
    await page.getByLabel('Expires').selectOption({ label: 'In 30 days' })
    await page.getByRole('button', { name: 'Create token' }).click()

    const tokenText = page.locator('#new-token')
    await tokenText.waitFor({ state: 'visible' })
    const token = (await tokenText.innerText()).trim()
    assert.match(token, /^packs_[A-Za-z0-9_-]{20,}$/)
    const headerLine = (await page.locator('#new-token-header').innerText()).trim()
    assert.equal(headerLine, `Authorization: Bearer Scripter ${token}`)
    assert.match(await page.locator('#new-token-panel').innerText(), /will not be shown again/)
    assert.equal(page.url(), site.url('/settings/tokens/'), 'no navigation: created through the API')

    // The list gained the row without a reload.
    const row = page.getByRole('row', { name: /release script/ })
    await row.waitFor()
    assert.match(await row.innerText(), /never/, 'not used yet')
    assert.match(await row.innerText(), /\d{1,2} \w{3} \d{4}, \d\d:\d\d UTC/)
    assert.equal(await row.locator('time').count(), 2, 'created and expires are <time> elements')

    // Copy the header line; the clipboard holds exactly it.
    const copy = page.getByRole('button', { name: 'Copy header line' })
    await copy.click()
    await page.locator('button[data-copy="#new-token-header"]', { hasText: 'Copied' }).waitFor()
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), headerLine)

    // A script uses the copied header: no cookies, no gate password.
    const authorization = headerLine.replace(/^Authorization: /, '')
    const me = await fetch(site.url('/api/me/'), { headers: { authorization } })
    assert.equal(me.status, 200)
    assert.equal(((await me.json()) as { username: string }).username, 'Scripter')

    // Revoke in the page, confirming the dialog.
    let question = ''
    page.once('dialog', (dialog) => {
      question = dialog.message()
      void dialog.accept()
    })
    await row.getByRole('button', { name: 'Revoke' }).click()
    await row.waitFor({ state: 'detached' })
    assert.match(question, /Revoke the token "release script"/)
    assert.match(await page.locator('#token-status').innerText(), /Token "release script" revoked/)
    assert.equal(await page.locator('#new-token-panel').isVisible(), false, 'the revoked token is no longer on screen')

    const after = await fetch(site.url('/api/me/'), { headers: { authorization } })
    assert.equal(after.status, 401)
    assert.ok(after.headers.get('www-authenticate'))

    await page.reload()
    assert.equal(await page.getByRole('row', { name: /release script/ }).count(), 0)
    assert.ok(!(await page.content()).includes(token), 'the token is never shown again')
    assert.equal(await page.getByText('You have no API tokens.').isVisible(), true)
    assertNoProblems(site)
  })

  test('cancelling the confirmation keeps the token; an invalid name shows the server\'s message', async () => {
    const page = await site.newPage()
    await site.signUpDirectly(page, 'careful')
    await page.goto(site.url('/settings/tokens/'))
    await page.getByLabel('Name').fill('keep me')
    await page.getByLabel('Expires').selectOption({ label: 'Never' })
    await page.getByRole('button', { name: 'Create token' }).click()
    const row = page.getByRole('row', { name: /keep me/ })
    await row.waitFor()
    assert.match(await row.innerText(), /never\s+never/, 'never used, never expires')
    const header = (await page.locator('#new-token-header').innerText()).replace(/^Authorization: /, '')

    const revocations: string[] = []
    page.on('request', (request) => { if (request.method() === 'DELETE') revocations.push(request.url()) })
    const dismissed = page.waitForEvent('dialog').then((dialog) => dialog.dismiss())
    await row.getByRole('button', { name: 'Revoke' }).click()
    await dismissed
    // A round trip to the page after the dismissal: the click handler has finished, and a request it sent would have been seen.
    await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 0)))
    assert.deepEqual(revocations, [], 'nothing was sent')
    assert.equal(await row.count(), 1, 'still listed')
    assert.equal((await fetch(site.url('/api/me/'), { headers: { authorization: header } })).status, 200)

    // Spaces only pass the browser's "required" check; the server refuses them.
    await page.getByLabel('Name').fill('   ')
    await page.getByRole('button', { name: 'Create token' }).click()
    const alert = page.locator('#token-error')
    await alert.waitFor({ state: 'visible' })
    assert.equal(await alert.innerText(), 'Name must not be empty.')
    assertNoProblems(site)
  })

  test('a publish-only token for one ticked pack: shown in the list, it releases that pack and nothing else', async () => {
    const page = await site.newPage()
    await site.signUpDirectly(page, 'Releaser')
    const castle = await createPackAs(page, { title: 'Castle', version_name: '1.0.0' }, await datapack(48))
    await createPackAs(page, { title: 'Tower', version_name: '1.0.0' }, await datapack(48))
    await page.goto(site.url('/settings/tokens/'))

    // The pack boxes are for a publish token only: unusable until that is chosen.
    const castleBox = page.getByRole('checkbox', { name: /Castle/ })
    assert.equal(await page.getByRole('radio', { name: 'Full access' }).isChecked(), true, 'full access is the default, as before')
    assert.equal(await castleBox.isDisabled(), true)
    await page.getByRole('radio', { name: /Publish versions/ }).check()
    assert.equal(await castleBox.isDisabled(), false)

    // Publish with nothing ticked: the server's message, nothing made.
    await page.getByLabel('Name').fill('ci')
    await page.getByRole('button', { name: 'Create token' }).click()
    const alert = page.locator('#token-error')
    await alert.waitFor({ state: 'visible' })
    assert.match(await alert.innerText(), /^A publish token needs at least one of your packs/)

    await castleBox.check()
    await page.getByLabel('Expires').selectOption({ label: 'In 30 days' })
    await page.getByRole('button', { name: 'Create token' }).click()
    await page.locator('#new-token').waitFor({ state: 'visible' })
    const authorization = (await page.locator('#new-token-header').innerText()).trim().replace(/^Authorization: /, '')
    assert.equal(await alert.isVisible(), false, 'the earlier message is gone')
    const row = page.getByRole('row', { name: /ci/ })
    await row.waitFor()
    assert.match(await row.innerText(), /Publish versions of releaser:castle/)
    assert.equal(await row.locator('time').count(), 2, 'created and expires')
    // The form is back to its defaults for the next token.
    assert.equal(await page.getByRole('radio', { name: 'Full access' }).isChecked(), true)
    assert.equal(await castleBox.isDisabled(), true)

    // A build job with the token: a new version of Castle is 201; Tower and an upload are 403 naming what it may do.
    const release = async (packId: string, name: string) => {
      const body = multipart([{ name: 'version_name', value: name }, { name: 'file', value: await datapack(48), filename: 'pack.zip' }])
      return fetch(site.url(`/api/packs/${castle.namespace}/${packId}/versions/`), {
        method: 'POST', headers: { authorization, ...body.headers }, body: new Uint8Array(body.payload),
      })
    }
    assert.equal((await release('castle', '1.1.0')).status, 201)
    const refused = await release('tower', '1.1.0')
    assert.equal(refused.status, 403)
    assert.match(((await refused.json()) as { detail: string }).detail, /^this token may only publish new versions of releaser:castle /)

    // After a reload the server's list says the same.
    await page.reload()
    assert.match(await page.getByRole('row', { name: /ci/ }).innerText(), /Publish versions of releaser:castle/)
    assertNoProblems(site)
  })
})
