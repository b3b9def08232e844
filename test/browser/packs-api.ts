// Packs made for browser tests the way the create page makes them: through
// the API, as the page's signed-in user, with its session cookie and CSRF token.
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import type { Page } from 'playwright-core'

export interface CreatedPack {
  namespace: string
  pack_id: string
  title: string
}

/**
 * Publishes a pack as the page's signed-in user, through the API with the
 * browser's own session cookie and CSRF token (what the create page does).
 */
export async function createPackAs(page: Page, data: Record<string, unknown>, archive: Buffer): Promise<CreatedPack> {
  const me = await page.request.get('/api/me/')
  assert.equal(me.status(), 200, await me.text())
  const headers = { 'x-csrf-token': ((await me.json()) as { csrf_token: string }).csrf_token }
  const draft = randomUUID()
  const uploaded = await page.request.post('/api/uploads/', {
    headers,
    multipart: { kind: 'version', draft_uuid: draft, file: { name: 'pack.zip', mimeType: 'application/zip', buffer: archive } },
  })
  assert.equal(uploaded.status(), 200, await uploaded.text())
  const saved = await page.request.post('/api/draft/', { headers, data: { draft, data } })
  assert.equal(saved.status(), 200, await saved.text())
  const published = await page.request.post('/api/draft/publish/', { headers, data: { draft } })
  assert.equal(published.status(), 201, await published.text())
  return (await published.json()) as CreatedPack
}
