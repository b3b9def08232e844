// Headless Chromium (Debian's /usr/bin/chromium, driven by playwright-core)
// against a real `npm start` server: the browser tier of the tests. Every page
// a test opens is watched for script errors, failed requests and CSP
// violations, and a test ends by asserting there were none. A test file starts
// its own server and gives each test fresh browser contexts; the files that
// run in one process (scripts/test-batch.js) share one Chromium, launched when
// the first needs it and closed when the last is done. The server and the
// admin CLI (run in this process) hash passwords at the low test cost
// (helpers/server.ts).
import assert from 'node:assert/strict'
import fs from 'node:fs'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { cliOk, startServer, type RunningServer } from './server.js'

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
export const SITE_PASSWORD = 'browser-site-password'

/**
 * The flags a test container needs: no sandbox when run as root, and no background calls to
 * a network that is not there. --no-zygote: every renderer is then a child of
 * the browser process, which waits for it, so the CPU time renderers use is
 * counted in the test process's, which scripts/run-tests.js reports. Forked by
 * the zygote, their time went to the zygote, which nobody waits for: more than
 * half of Chromium's time was missing from the report. It costs nothing measurable.
 */
const CHROMIUM_ARGS = [
  '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage', '--no-zygote',
]

/**
 * Chromium features turned off on top of Playwright's own list. Every browser
 * context is a browser window of its own, and each window loads the omnibox
 * popup (WebUI pages in a renderer of their own: chrome://omnibox-popup.top-chrome/)
 * although a headless window has no omnibox to show it under: 1 to 2 s of CPU
 * per context (that renderer's and the browser process's), half of what
 * Chromium spent on these tests.
 */
const DISABLED_FEATURES = ['WebUIOmniboxPopup', 'WebUIOmniboxAimPopup']

/**
 * Playwright's own --disable-features (playwright-core 1.65). Chromium keeps
 * only the LAST --disable-features it is given, so ours repeats Playwright's;
 * launchBrowser() checks this list against the command line Playwright really
 * built and adds what a newer Playwright disables.
 */
const playwrightDisabledFeatures = [
  'AvoidUnnecessaryBeforeUnloadCheckSync', 'DestroyProfileOnBrowserClose', 'HttpsUpgrades', 'HttpsFirstBalancedModeAutoEnable',
  'LensOverlay', 'MediaRouter', 'PaintHolding', 'ThirdPartyStoragePartitioning', 'AvoidCorsURLLoaderRestartOnRedirect',
  'TcpPortRandomizationWin', 'OptimizationHints', 'NetworkTimeServiceQuerying', 'AimEnabled', 'PreconnectToSearch',
  'msForceBrowserSignIn', 'msEdgeUpdateLaunchServicesPreferredVersion',
]

export async function launchBrowser(): Promise<Browser> {
  if (!fs.existsSync(CHROMIUM_PATH)) {
    throw new Error(`Chromium not found at ${CHROMIUM_PATH}: install Debian's "chromium" package (.ci/run does) or set CHROMIUM_PATH`)
  }
  // Loaded here, not with this module: compiling playwright-core takes a second of CPU (seconds of
  // wall time on a busy machine), spent while the server of startBrowserSite() starts beside it.
  const { chromium } = await import('playwright-core')
  const launch = () => chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [...CHROMIUM_ARGS, `--disable-features=${[...new Set([...playwrightDisabledFeatures, ...DISABLED_FEATURES])].join(',')}`],
  })
  const browser = await launch()
  const dropped = droppedDefaultFeatures()
  if (dropped.length === 0) return browser
  // A Playwright that disables more than the list above: launch again with its features too.
  playwrightDisabledFeatures.push(...dropped)
  await browser.close()
  return launch()
}

/**
 * The features that Playwright's --disable-features names but the last one
 * (ours, which Chromium keeps) leaves out, read from the command lines of the
 * Chromium processes this process started (Linux's /proc; none elsewhere).
 */
function droppedDefaultFeatures(): string[] {
  const dropped = new Set<string>()
  let pids: string[]
  try {
    pids = fs.readdirSync('/proc').filter((name) => /^\d+$/.test(name))
  } catch {
    return []
  }
  for (const pid of pids) {
    let args: string[]
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) !== process.pid) continue
      args = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')
    } catch {
      continue // Gone meanwhile.
    }
    if (!args.includes('--remote-debugging-pipe')) continue
    const lists = args.filter((arg) => arg.startsWith('--disable-features=')).map((arg) => arg.slice('--disable-features='.length).split(','))
    const kept = new Set(lists.at(-1))
    for (const list of lists.slice(0, -1)) for (const feature of list) if (feature && !kept.has(feature)) dropped.add(feature)
  }
  return [...dropped]
}

// ---------------------------------------------------------------- one Chromium per process

/**
 * How many test files of this process drive a browser: scripts/test-batch.js
 * runs the files named on its command line one after another (each starts
 * one site). Run any other way, a process is taken to hold one such file.
 */
const BROWSER_FILES = Math.max(1, process.argv.slice(2).filter((arg) => /(^|\/)test\/browser\/[^/]+\.test\.[jt]s$/.test(arg)).length)
/** How long an unused browser waits for the next file of the batch when one that was expected never asked (its import or hook failed first). */
const IDLE_CLOSE_MS = 5_000

interface SharedBrowser {
  browser: Promise<Browser>
  /** Sites using it now. */
  users: number
  /** Closes it when no file of the batch took it over. */
  idle?: NodeJS.Timeout
}

let shared: SharedBrowser | undefined
let sitesStarted = 0

function acquireBrowser(): Promise<Browser> {
  sitesStarted++
  if (shared) {
    clearTimeout(shared.idle)
    shared.users++
    return shared.browser
  }
  const entry: SharedBrowser = { browser: launchBrowser(), users: 1 }
  shared = entry
  entry.browser.then((browser) => {
    // A browser that crashed is not handed to the next file.
    browser.once('disconnected', () => { if (shared === entry) shared = undefined })
  }, () => { if (shared === entry) shared = undefined })
  return entry.browser
}

async function releaseBrowser(browser: Promise<Browser>): Promise<void> {
  const entry = shared
  if (!entry || entry.browser !== browser) {
    // Already let go (it crashed, or never launched): close what this site was given, if anything.
    await closeQuietly(browser)
    return
  }
  entry.users--
  if (entry.users > 0) return
  const close = () => {
    if (shared === entry) shared = undefined
    return closeQuietly(entry.browser)
  }
  // The last file of this process: close it now, so the process can end.
  if (sitesStarted >= BROWSER_FILES) return close()
  // Another file of the batch comes next and takes it over; unless none does.
  entry.idle = setTimeout(() => void close(), IDLE_CLOSE_MS)
}

async function closeQuietly(browser: Promise<Browser>): Promise<void> {
  await browser.then((b) => b.close()).catch(() => {})
}

// ---------------------------------------------------------------- a site

export interface BrowserSite {
  server: RunningServer
  /** Shared with the other files of this process: close contexts, never the browser (close() lets it go). */
  browser: Browser
  url(path: string): string
  /** A fresh browser profile (no cookies), watched for problems. */
  newPage(options?: { width?: number; height?: number }): Promise<Page>
  /** Problems seen on every page opened so far: script errors, console errors, CSP violations, 5xx answers. */
  problems(): string[]
  /** Opens the gate with the site password through the gate page's form, in this page's context. */
  passGate(page: Page): Promise<void>
  /** Gives the page's context the gate cookie as the gate's form would (POST /gate/), without loading a page. */
  passGateDirectly(page: Page): Promise<void>
  /** Passes the gate, signs up through the form, and leaves the page signed in. */
  signUp(page: Page, username: string, password?: string): Promise<void>
  /**
   * Gives the page's context the gate cookie and a new account's session the
   * way the forms would (POST /gate/, POST /signup/), without loading a page:
   * for tests where the forms are not what is under test (signUp() is).
   */
  signUpDirectly(page: Page, username: string, password?: string): Promise<void>
  /** The same for an account that exists: POST /gate/, POST /login/. */
  signInDirectly(page: Page, username: string, password: string): Promise<void>
  /** The admin CLI against this site (`packs ...`), in this process; resolves to its stdout. */
  cli(args: string[]): Promise<string>
  close(): Promise<void>
}

export async function startBrowserSite(env: Record<string, string> = {}): Promise<BrowserSite> {
  // Side by side: the server's start-up is mostly waiting for its modules, Chromium's its own process.
  // The server first: its process is spawned before this one is busy compiling playwright-core.
  const starting = startServer({ env: { PACKS_MASTER_PASSWORD: SITE_PASSWORD, ...env } })
  const launching = acquireBrowser()
  const [started, launched] = await Promise.allSettled([starting, launching])
  if (started.status === 'rejected' || launched.status === 'rejected') {
    if (started.status === 'fulfilled') await started.value.stop()
    await releaseBrowser(launching)
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

  /** A form post from the page's context (its cookies, and the cookies the answer sets), expecting the 303 of a success. */
  const post = async (page: Page, path: string, form: Record<string, string>) => {
    const response = await page.context().request.post(`${server.url}${path}`, { form, maxRedirects: 0 })
    assert.equal(response.status(), 303, `POST ${path}: ${response.status()} ${await response.text()}`)
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
      // tsx compiles with esbuild's keepNames, which wraps named functions
      // inside page.evaluate callbacks in a __name() helper that only exists
      // in Node; give the page the same (identity) helper, for a run of these
      // files under tsx (the test runner runs them compiled, without it).
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
    async passGateDirectly(page) {
      await post(page, '/gate/', { password: SITE_PASSWORD })
    },
    async signUpDirectly(page, username, password = `${username}-password-1`) {
      await site.passGateDirectly(page)
      await post(page, '/signup/', { username, password, password_repeat: password })
    },
    async signInDirectly(page, username, password) {
      await site.passGateDirectly(page)
      await post(page, '/login/', { username, password })
    },
    async cli(args) {
      return (await cliOk(args, server.env)).stdout
    },
    async close() {
      for (const context of contexts) await context.close().catch(() => {})
      await Promise.all([releaseBrowser(launching), server.stop()])
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
