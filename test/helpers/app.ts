// Builds the real app on a throwaway data directory (SQLite file, local files;
// or a fresh PostgreSQL database when PACKS_TEST_DATABASE_URL is set, see
// ./database.ts) and gives tests ready-made users and credentials.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { FastifyServerOptions, LightMyRequestResponse } from 'fastify'
import assert from 'node:assert/strict'
import { buildApp } from '../../src/app.js'
import { loadConfig, type Config } from '../../src/config/index.js'
import { createApiToken, createUser } from '../../src/accounts/service.js'
import type { App } from '../../src/http/types.js'
import { createTestDatabase } from './database.js'
import { S3FileStore } from '../../src/storage/s3.js'
import { bucketContents, s3Bucket, s3Selected } from './s3.js'

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
}

export async function makeSite(env: Record<string, string> = {}, siteOptions: SiteOptions = {}): Promise<TestSite> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'packs-test-'))
  // A test that brings its own DATABASE_URL (a cluster it stops and starts) gets no fresh database.
  const database = env.DATABASE_URL === undefined ? await createTestDatabase() : { url: undefined, drop: async () => {} }
  // PACKS_TEST_STORAGE=s3: files go to a fresh bucket on the local S3 server (./s3.ts).
  const bucket = s3Selected() && env.STORAGE_URL === undefined ? await s3Bucket() : undefined
  const config = loadConfig({
    PACKS_DATA_DIR: dataDir,
    PACKS_MASTER_PASSWORD: MASTER_PASSWORD,
    ...(database.url ? { DATABASE_URL: database.url } : {}),
    ...(bucket ? { STORAGE_URL: bucket.storageUrl } : {}),
    ...env,
  })
  let app: App
  try {
    app = await buildApp(config, { logger: siteOptions.logger ?? false, sweep: false })
    await app.ready()
  } catch (error) {
    await database.drop()
    throw error
  }
  return {
    app,
    config,
    dataDir,
    gate: { 'x-master-password': MASTER_PASSWORD },
    async user(username, options = {}) {
      const password = options.password ?? `${username}-password`
      await createUser(app.db, username, password, options.staff ?? false)
      const { token } = await createApiToken(app.db, username, 'tests')
      return { username, password, token, headers: { authorization: `Bearer ${username} ${token}` } }
    },
    async close() {
      await app.close()
      await siteOptions.onClose?.()
      await database.drop()
      fs.rmSync(dataDir, { recursive: true, force: true })
    },
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
  return (fs.readdirSync(root, { recursive: true }) as string[])
    .filter((p) => fs.statSync(path.join(root, p)).isFile())
    .sort()
}
