// Builds the real app on a throwaway data directory and gives tests ready-made
// users and credentials. On the sqlite combination: SQLite file, local files,
// shared state in memory. On the scaled one (scripts/run-tests.js sets
// PACKS_TEST_*): a fresh PostgreSQL database (./database.ts), a fresh S3
// bucket (./s3.ts) and a Redis database of its own (./redis.ts). A test that
// passes its own DATABASE_URL, STORAGE_URL or REDIS_URL keeps it ('' for none).
import fs from 'node:fs'
import path from 'node:path'
import type { FastifyServerOptions, LightMyRequestResponse } from 'fastify'
import assert from 'node:assert/strict'
import { buildApp, type BuildOptions } from '../../src/app.js'
import { loadConfig, type Config } from '../../src/config/index.js'
import { createApiToken } from '../../src/accounts/tokens-service.js'
import { createUser } from '../../src/accounts/users-service.js'
import type { App } from '../../src/http/types.js'
import { createTestDatabase } from './database.js'
import { S3FileStore } from '../../src/storage/s3.js'
import { bucketContents, s3Bucket, s3Selected } from './s3.js'
import { takeRedisDatabase } from './redis.js'
import { TEST_HASH_COST } from './server.js'
import { tempDir } from './temp.js'

export const MASTER_PASSWORD = 'test-master-password'

export interface TestUser {
  username: string
  password: string
  token: string
  /** Headers that pass the gate and authenticate as this user with a Bearer token. */
  headers: Record<string, string>
}

export interface TestSite {
  app: App
  config: Config
  dataDir: string
  /** Headers that pass the gate only (no user). */
  gate: Record<string, string>
  user(username: string, options?: { staff?: boolean; password?: string }): Promise<TestUser>
  close(): Promise<void>
}

export interface SiteOptions {
  /** Fastify's logger option (tests that check what a failure logs pass a capturing stream); off by default. */
  logger?: FastifyServerOptions['logger']
  /** Also run when the site closes, after the app (a Redis server the site was given, say). */
  onClose?: () => Promise<void>
  /** The app's clock (BuildOptions.clock): a test moves it past a window instead of waiting for it. */
  clock?: () => number
  /** The update-check cache's bounds (BuildOptions.updateCheckLimits): a test sets them small and exceeds them. */
  updateCheckLimits?: BuildOptions['updateCheckLimits']
  /** The download counter's bound and write interval (BuildOptions.downloads): a test sets the bound small and exceeds it. */
  downloads?: BuildOptions['downloads']
  /** Where the packs-sync bundle is read from (BuildOptions.syncClientBundle): a test points it at a missing file. */
  syncClientBundle?: string
  /** The webhooks' dispatcher (BuildOptions.webhooks): a test shortens a try's timeout. */
  webhooks?: BuildOptions['webhooks']
}

export async function makeSite(env: Record<string, string> = {}, siteOptions: SiteOptions = {}): Promise<TestSite> {
  const dataDir = tempDir('packs-test-')
  // A test that brings its own DATABASE_URL (a cluster it stops and starts) gets no fresh database.
  const database = env.DATABASE_URL === undefined ? await createTestDatabase({ migrated: true }) : { url: undefined, drop: async () => {} }
  // PACKS_TEST_STORAGE=s3: files go to a fresh bucket on the local S3 server (./s3.ts).
  const bucket = s3Selected() && env.STORAGE_URL === undefined ? await s3Bucket() : undefined
  const redis = env.REDIS_URL === undefined ? await takeRedisDatabase() : undefined
  const release = async () => {
    await redis?.release()
    await database.drop()
  }
  const config = loadConfig({
    PACKS_DATA_DIR: dataDir,
    PACKS_MASTER_PASSWORD: MASTER_PASSWORD,
    // The servers' low scrypt cost (./server.ts): a test of the cost itself passes its own.
    PACKS_PASSWORD_HASH_COST: TEST_HASH_COST,
    ...(database.url ? { DATABASE_URL: database.url } : {}),
    ...(bucket ? { STORAGE_URL: bucket.storageUrl } : {}),
    ...(redis ? { REDIS_URL: redis.url } : {}),
    ...env,
  })
  let app: App
  try {
    app = await buildApp(config, { logger: siteOptions.logger ?? false, sweep: false, clock: siteOptions.clock, updateCheckLimits: siteOptions.updateCheckLimits, downloads: siteOptions.downloads, syncClientBundle: siteOptions.syncClientBundle, webhooks: siteOptions.webhooks })
    await app.ready()
  } catch (error) {
    await release()
    throw error
  }
  return {
    app,
    config,
    dataDir,
    gate: { 'x-master-password': MASTER_PASSWORD },
    async user(username, options = {}) {
      const password = options.password ?? `${username}-password`
      await createUser(app.db, app.passwords, username, password, options.staff ?? false)
      const { token } = await createApiToken(app.db, username, 'tests')
      return { username, password, token, headers: { authorization: `Bearer ${username} ${token}` } }
    },
    async close() {
      // A test that made the site listen may leave a keep-alive connection whose answer was still going out
      // when close() began (a fetch whose body it never read). Node closes idle connections once, at the start
      // of close(); this one becomes idle only later and would hold close() until its keep-alive timeout
      // (65 s), so idle connections are closed again until close() is done. Answers in flight still finish.
      const closing = app.close()
      const sweep = setInterval(() => app.server.closeIdleConnections(), 25)
      try {
        await closing
      } finally {
        clearInterval(sweep)
      }
      await siteOptions.onClose?.()
      await release()
      fs.rmSync(dataDir, { recursive: true, force: true })
    },
  }
}

export interface SiteSpec<U extends string, S extends string> extends SiteOptions {
  /** Users to create, in this order; each is returned under its name. */
  users?: readonly U[]
  /** Staff users to create after them, also returned under their names. */
  staff?: readonly S[]
  /** Settings for the site, as makeSite takes them. */
  env?: Record<string, string>
}

/** A site and its users by name: `{ site, alice, bob, root }`. */
export type SiteWith<Name extends string> = { site: TestSite } & { readonly [K in Name]: TestUser }

/**
 * The site an http test needs, with its users, in one line:
 *
 *   const { site, alice, bob, root } = await siteWith({ users: ['alice', 'bob'], staff: ['root'] })
 *
 * and in a file that shares one site between its tests:
 *
 *   let site: TestSite, alice: TestUser
 *   before(async () => ({ site, alice } = await siteWith({ users: ['alice'] })))
 *   after(() => site.close())
 *
 * Each user's password is `<name>-password` and its token is named "tests", as site.user gives them.
 */
export async function siteWith<const U extends string = never, const S extends string = never>(
  spec: SiteSpec<U, S> = {},
): Promise<SiteWith<U | S>> {
  const { users = [], staff = [], env = {}, ...siteOptions } = spec
  const names: string[] = [...users, ...staff]
  const clash = names.find((name, index) => name === 'site' || names.indexOf(name) !== index)
  if (clash !== undefined) throw new Error(`siteWith: "${clash}" cannot be a user name here (it is "site" or given twice)`)
  const site = await makeSite(env, siteOptions)
  try {
    const created: Record<string, TestUser> = {}
    for (const name of users) created[name] = await site.user(name)
    for (const name of staff) created[name] = await site.user(name, { staff: true })
    return { site, ...created } as SiteWith<U | S>
  } catch (error) {
    await site.close()
    throw error
  }
}

/** Asserts an error response: status, JSON `{ detail }`, and WWW-Authenticate on a 401. */
export function expectError(res: LightMyRequestResponse, status: number, detailPattern?: RegExp): string {
  assert.equal(res.statusCode, status, `expected ${status}, got ${res.statusCode}: ${res.body}`)
  assert.match(String(res.headers['content-type']), /^application\/json/)
  const body = res.json() as { detail?: unknown }
  assert.equal(typeof body.detail, 'string', `error body has a string detail: ${res.body}`)
  if (status === 401) assert.ok(res.headers['www-authenticate'], '401 carries WWW-Authenticate')
  if (detailPattern) assert.match(body.detail as string, detailPattern)
  return body.detail as string
}

/**
 * What the site's store really keeps: files under the local store (excluding
 * directories), or on S3 the bucket's objects and pending multipart uploads.
 */
export async function storedFiles(site: Pick<TestSite, 'app' | 'dataDir'>): Promise<string[]> {
  const store = site.app.store
  if (store instanceof S3FileStore) {
    return bucketContents(store.client, store.location.bucket, store.location.prefix)
  }
  const root = path.join(site.dataDir, 'files')
  if (!fs.existsSync(root)) return []
  // A `.partial` listed while an upload ends may be gone by its stat.
  return (fs.readdirSync(root, { recursive: true }) as string[])
    .filter((p) => fs.statSync(path.join(root, p), { throwIfNoEntry: false })?.isFile() === true)
    .sort()
}

/** The site's environment as the admin CLI on its server would have it: runCli(args, undefined, cliEnvOf(site)). */
export function cliEnvOf(site: TestSite): Record<string, string | undefined> {
  const { config } = site
  return {
    PACKS_DATA_DIR: site.dataDir,
    DATABASE_URL: config.databaseUrl,
    STORAGE_URL: config.storageUrl,
    REDIS_URL: config.redisUrl ?? undefined,
    PACKS_MASTER_PASSWORD: config.masterPassword ?? undefined,
  }
}

/** A browser's signed-in session: its cookie header and its CSRF token (for forms and the API's X-CSRF-Token). */
export interface Session {
  cookie: string
  csrf: string
}

/** Signs in as a browser does (POST /login/ past the gate): the session cookie and its CSRF token. */
export async function signIn(site: TestSite, user: TestUser): Promise<Session> {
  const res = await site.app.inject({ method: 'POST', url: '/login/', headers: site.gate, payload: { username: user.username, password: user.password } })
  assert.equal(res.statusCode, 200, res.body)
  const session = res.cookies.find((c) => c.name === 'packs_session')?.value
  assert.ok(session, 'a session cookie')
  return { cookie: `packs_session=${session}`, csrf: (res.json() as { csrf_token: string }).csrf_token }
}
