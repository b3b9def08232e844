// Screenshots of the main pages for the README (docs/screenshots/), taken in
// Debian's Chromium against a real server seeded with the demo site of
// test/helpers/demo.ts. Run: `npm run screenshots`.
import fs from 'node:fs'
import path from 'node:path'
import type { Page } from 'playwright-core'
import { startBrowserSite, SITE_PASSWORD } from '../test/helpers/browser.js'
import { seedDemoSite } from '../test/helpers/demo.js'
import { ROOT } from '../test/helpers/server.js'

const OUT = path.join(ROOT, 'docs', 'screenshots')

async function signIn(page: Page, base: string, username: string, password: string): Promise<void> {
  await page.goto(`${base}/gate/`)
  await page.getByLabel('Site password').fill(SITE_PASSWORD)
  await page.getByRole('button', { name: 'Enter' }).click()
  await page.goto(`${base}/login/`)
  await page.getByLabel('Username').fill(username)
  await page.getByLabel('Password').fill(password)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.waitForURL((url) => !url.pathname.startsWith('/login/'))
}

async function shoot(page: Page, name: string): Promise<void> {
  await page.waitForLoadState('networkidle')
  const file = path.join(OUT, `${name}.png`)
  await page.screenshot({ path: file, fullPage: true })
  console.log(`docs/screenshots/${name}.png`)
}

const site = await startBrowserSite()
try {
  fs.mkdirSync(OUT, { recursive: true })
  const demo = await seedDemoSite(site.server)
  const base = site.server.url

  const gate = await site.newPage()
  await gate.goto(`${base}/gate/`)
  await shoot(gate, 'gate')

  const creator = await site.newPage()
  await signIn(creator, base, demo.creator.username, demo.creator.password)
  await creator.goto(`${base}/`)
  await shoot(creator, 'browse')
  const [namespace, packId] = demo.packs[0]!.split(':')
  await creator.goto(`${base}/packs/${namespace}/${packId}/`)
  await shoot(creator, 'pack')
  await creator.goto(`${base}/create/`)
  await creator.getByLabel('Title').fill('Nether Gardens')
  await creator.getByLabel('Summary').fill('Glowing gardens for the Nether wastes.')
  await creator.getByLabel('Version name').fill('0.1.0')
  await creator.locator('#save-state').getByText(/Saved/).waitFor()
  await shoot(creator, 'create')
  await creator.goto(`${base}/settings/tokens/`)
  await creator.getByLabel('Name').fill('laptop')
  await creator.getByRole('button', { name: 'Create token' }).click()
  await creator.locator('#new-token').waitFor()
  await shoot(creator, 'tokens')

  const staff = await site.newPage()
  await signIn(staff, base, demo.staff.username, demo.staff.password)
  for (const pack of demo.packs) await staff.goto(`${base}/packs/${pack.replace(':', '/')}/`)
  await staff.goto(`${base}/staff/stats/`)
  await shoot(staff, 'stats')

  const phone = await site.newPage({ width: 360, height: 740 })
  await signIn(phone, base, demo.creator.username, demo.creator.password)
  await phone.goto(`${base}/`)
  await shoot(phone, 'browse-360')
  await phone.goto(`${base}/packs/${namespace}/${packId}/`)
  await shoot(phone, 'pack-360')

  const problems = site.problems()
  if (problems.length > 0) throw new Error(`the browser saw problems:\n${problems.join('\n')}`)
} finally {
  await site.close()
}
