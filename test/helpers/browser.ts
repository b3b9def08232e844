// Headless Chromium (Debian's /usr/bin/chromium, driven by playwright-core)
// against a real `npm start` server: the browser tier of the tests. Every page
// a test opens is watched for script errors, failed requests and CSP
// violations, and a test ends by asserting there were none. A test file starts
// one server and one browser and gives each test fresh browser contexts; the
// server and the admin CLI (run in this process) hash passwords at the low
// test cost (helpers/server.ts).
import assert from 'node:assert/strict'
import fs from 'node:fs'
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'
import { cliOk, startServer, type RunningServer } from './server.js'

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
export const SITE_PASSWORD = 'browser-site-password'

/** The flags this machine needs: no sandbox as root, and no background calls to a network that is not there. */
const CHROMIUM_ARGS = [
  '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage',
]

export async function launchBrowser(): Promise<Browser> {
  if (!fs.existsSync(CHROMIUM_PATH)) {
    throw new Error(`Chromium not found at ${CHROMIUM_PATH}: install Debian's "chromium" package (.ci/run does) or set CHROMIUM_PATH`)
  }
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS })
}

export interface BrowserSite {
  server: RunningServer
  browser: Browser
  url(path: string): string
  /** A fresh browser profile (no cookies), watched for problems. */
  newPage(options?: { width?: number; height?: number }): Promise<Page>
  /** Problems seen on every page opened so far: script errors, console errors, CSP violations, 5xx answers. */
  problems(): string[]
  /** Opens the gate with the site password in this page's context. */
  passGate(page: Page): Promise<void>
  /** Passes the gate, signs up through the form, and leaves the page signed in. */
  signUp(page: Page, username: string, password?: string): Promise<void>
  /** The admin CLI against this site (`packs ...`), in this process; resolves to its stdout. */
  cli(args: string[]): Promise<string>
  close(): Promise<void>
}

export async function startBrowserSite(env: Record<string, string> = {}): Promise<BrowserSite> {
  // Side by side: the server's start-up is mostly waiting for its modules, Chromium's its own process.
  const [started, launched] = await Promise.allSettled([startServer({ env: { PACKS_MASTER_PASSWORD: SITE_PASSWORD, ...env } }), launchBrowser()])
  if (started.status === 'rejected' || launched.status === 'rejected') {
    if (started.status === 'fulfilled') await started.value.stop()
    if (launched.status === 'fulfilled') await launched.value.close()
    throw started.status === 'rejected' ? started.reason : (launched as PromiseRejectedResult).reason
  }
  const server = started.value
  const browser = launched.value
  const problems: string[] = []
  const contexts: BrowserContext[] = []

  const watch = (page: Page) => {
    page.on('pageerror', (error) => problems.push(`page error on ${page.url()}: ${error.message}`))
    page.on('console', (message) => {
      // Chromium logs a refused resource or a CSP violation as a console error.
      if (message.type() === 'error' && !expectedConsoleError(message.text())) problems.push(`console error on ${page.url()}: ${message.text()}`)
    })
    page.on('response', (response) => {
      if (response.status() >= 500) problems.push(`${response.status()} from ${response.request().method()} ${response.url()}`)
    })
  }

  const site: BrowserSite = {
    server,
    browser,
    url: (path) => `${server.url}${path}`,
    async newPage(options = {}) {
      const context = await browser.newContext({
        viewport: { width: options.width ?? 1280, height: options.height ?? 900 },
        baseURL: server.url,
      })
      // tsx compiles these tests with esbuild's keepNames, which wraps named
      // functions inside page.evaluate callbacks in a __name() helper that
      // only exists in Node; give the page the same (identity) helper.
      await context.addInitScript('globalThis.__name = (fn) => fn')
      contexts.push(context)
      const page = await context.newPage()
      watch(page)
      return page
    },
    problems: () => [...problems],
    async passGate(page) {
      await page.goto(`${server.url}/gate/`)
      await page.getByLabel('Site password').fill(SITE_PASSWORD)
      await page.getByRole('button', { name: 'Enter' }).click()
      await page.waitForURL((url) => !url.pathname.startsWith('/gate/'))
    },
    async signUp(page, username, password = `${username}-password-1`) {
      await site.passGate(page)
      await page.goto(`${server.url}/signup/`)
      await page.getByLabel('Username').fill(username)
      await page.getByLabel('Password', { exact: true }).fill(password)
      await page.getByLabel('Repeat password').fill(password)
      await page.getByRole('button', { name: 'Sign up' }).click()
      await page.waitForURL((url) => !url.pathname.startsWith('/signup/'))
      assert.match(await page.locator('.who').innerText(), new RegExp(`Signed in as ${username}`))
    },
    async cli(args) {
      return (await cliOk(args, server.env)).stdout
    },
    async close() {
      for (const context of contexts) await context.close().catch(() => {})
      await browser.close().catch(() => {})
      await server.stop()
    },
  }
  return site
}

/**
 * Console errors that are the expected outcome of a test's own action: the
 * browser logs every 4xx answer to a fetch (a refused upload, a 401 after a
 * revoked token), which the page then shows to the user.
 */
function expectedConsoleError(text: string): boolean {
  return /Failed to load resource: the server responded with a status of 4\d\d/.test(text)
}

export function assertNoProblems(site: BrowserSite): void {
  assert.deepEqual(site.problems(), [], 'no script errors, CSP violations or 5xx answers in the browser')
}
