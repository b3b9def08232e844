// Lifetimes (issue: pending uploads expire after PACKS_UPLOAD_TTL, drafts
// after PACKS_DRAFT_TTL untouched), with their stored files.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config/index.js'
import { createApiToken } from '../../src/accounts/tokens-service.js'
import { createUser } from '../../src/accounts/users-service.js'
import { sweepExpired } from '../../src/maintenance/sweep.js'
import { MASTER_PASSWORD, siteWith, storedFiles, type TestSite, type TestUser } from '../helpers/app.js'
import { png } from '../helpers/fixtures.js'
import { pathOf, publishPack, saveDraft, upload } from '../helpers/packs.js'
import { tempDir } from '../helpers/temp.js'

const HOUR = 3_600_000
const DAY = 24 * HOUR

describe('sweepExpired', () => {
  let site: TestSite
  let alice: TestUser
  before(async () => ({ site, alice } = await siteWith({ users: ['alice'] })))
  after(() => site.close())

  const fileStatus = async (url: string) => (await site.app.inject({ url: pathOf(url), headers: site.gate })).statusCode
  const draftStatus = async (draft: string) =>
    (await site.app.inject({ url: `/api/draft/?draft=${draft}`, headers: alice.headers })).statusCode

  test('pending uploads outlive their lifetime only until the sweep; published files are never swept', async () => {
    const pack = await publishPack(site, alice, { title: 'Kept Forever' }, { thumbnail: true })
    const loose = await upload(site, alice, 'thumbnail', png())
    const filesBefore = (await storedFiles(site)).length

    // Not expired yet (default lifetime 24 h): nothing goes.
    assert.deepEqual(await sweepExpired(site.app.db, site.app.store, site.config.draftTtlMs, Date.now() + HOUR), { uploads: 0, drafts: 0 })
    assert.equal(await fileStatus(loose.url), 200)

    const swept = await sweepExpired(site.app.db, site.app.store, site.config.draftTtlMs, Date.now() + 25 * HOUR)
    assert.equal(swept.uploads, 1)
    assert.equal(await fileStatus(loose.url), 404)
    assert.equal((await storedFiles(site)).length, filesBefore - 1, 'the bytes are gone too')
    const deleted = await site.app.inject({ method: 'POST', url: `/api/uploads/${loose.uuid}/delete/`, headers: alice.headers })
    assert.equal(deleted.statusCode, 404, 'the row is gone')

    // The published pack's thumbnail and archive were uploads once; they are the pack's now.
    assert.equal(await fileStatus(pack.thumbnail_url!), 200)
    assert.equal(await fileStatus(pack.versions[0]!.download_url), 200)
  })

  test('drafts untouched past their lifetime go with their pending uploads; touched ones stay', async () => {
    const stale = randomUUID()
    const fresh = randomUUID()
    await saveDraft(site, alice, stale, { title: 'old' })
    const staleUpload = await upload(site, alice, 'thumbnail', png(), { draft: stale })
    await saveDraft(site, alice, fresh, { title: 'new' })
    // Age the stale draft by 31 days (its uploads stay within their own lifetime).
    const longAgo = new Date(Date.now() - 31 * DAY).toISOString()
    await site.app.db.updateTable('drafts').set({ updated_at: longAgo }).where('id', '=', stale).execute()

    const swept = await sweepExpired(site.app.db, site.app.store, site.config.draftTtlMs)
    assert.deepEqual(swept, { uploads: 0, drafts: 1 })
    assert.equal(await draftStatus(stale), 404)
    assert.equal(await fileStatus(staleUpload.url), 404)
    assert.equal(await draftStatus(fresh), 200)
  })
})

test('a running server sweeps on its own, at PACKS_SWEEP_INTERVAL', async () => {
  const dataDir = tempDir('packs-sweep-')
  const config = loadConfig({
    // The interval is how soon a sweep follows the last, so the test sees one; no window is waited out (the clock below).
    PACKS_DATA_DIR: dataDir, PACKS_MASTER_PASSWORD: MASTER_PASSWORD, PACKS_UPLOAD_TTL: '1h', PACKS_SWEEP_INTERVAL: '100ms',
  })
  let ahead = 0
  const app = await buildApp(config, { logger: false, clock: () => Date.now() + ahead })
  try {
    await createUser(app.db, app.passwords, 'sam', 'sam-password')
    const { token } = await createApiToken(app.db, 'sam', 't')
    const site = { app, gate: { 'x-master-password': MASTER_PASSWORD }, dataDir } as unknown as TestSite
    const user = { headers: { authorization: `Bearer sam ${token}` } } as unknown as TestUser
    const pending = await upload(site, user, 'media', png())
    assert.equal((await storedFiles(site)).length, 1)
    // Two hours pass on the app's clock: the upload's hour is over.
    ahead = 2 * HOUR
    const deadline = Date.now() + 5_000
    while ((await storedFiles(site)).length > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50))
    assert.equal((await storedFiles(site)).length, 0, 'the expired upload was swept without anyone asking')
    const res = await app.inject({ url: pathOf(pending.url), headers: { 'x-master-password': MASTER_PASSWORD } })
    assert.equal(res.statusCode, 404)
  } finally {
    await app.close()
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
})
