// Drafts, uploads and published packs for the tests of drafts, publishing and packs.
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import type { Static } from 'typebox'
import type { UploadKind } from '../../src/api/constants.js'
import { createCategory, createTag } from '../../src/packs/tags.js'
import type { Pack } from '../../src/api/packs.js'
import type { TestSite, TestUser } from './app.js'
import { datapack, multipart, png, type Part } from './fixtures.js'

export interface Uploaded {
  uuid: string
  kind: UploadKind
  filename: string
  content_type: string
  url: string
  /** The stored file's id, taken from `url`. */
  fileId: string
}

/** A pending upload of `bytes` by `user` through POST /api/uploads/, optionally scoped to `draft`. */
export async function upload(
  site: TestSite,
  user: TestUser,
  kind: UploadKind,
  bytes: Buffer,
  options: { draft?: string; filename?: string } = {},
): Promise<Uploaded> {
  const parts: Part[] = [{ name: 'kind', value: kind }]
  if (options.draft) parts.push({ name: 'draft_uuid', value: options.draft })
  parts.push({ name: 'file', value: bytes, filename: options.filename ?? `${kind}.${kind === 'version' ? 'zip' : 'bin'}` })
  const body = multipart(parts)
  const res = await site.app.inject({ method: 'POST', url: '/api/uploads/', headers: { ...user.headers, ...body.headers }, payload: body.payload })
  assert.equal(res.statusCode, 200, res.body)
  const uploaded = res.json() as Omit<Uploaded, 'fileId'>
  const fileId = /\/api\/files\/([0-9a-f-]{36})\/$/.exec(uploaded.url)?.[1]
  assert.ok(fileId, `a file URL: ${uploaded.url}`)
  return { ...uploaded, fileId }
}

export async function saveDraft(site: TestSite, user: TestUser, draft: string, data: Record<string, unknown>): Promise<void> {
  const res = await site.app.inject({ method: 'POST', url: '/api/draft/', headers: user.headers, payload: { draft, data } })
  assert.equal(res.statusCode, 200, res.body)
}

/** A pack as the API answers it (GET /api/packs/{namespace}/{pack_id}/, a publish, a new version). */
export type PackJson = Static<typeof Pack>

/** A complete draft (data and a version upload) published as a pack by `user`. */
export async function publishPack(
  site: TestSite,
  user: TestUser,
  data: Record<string, unknown> = {},
  options: { archive?: Buffer; thumbnail?: boolean } = {},
): Promise<PackJson> {
  const draft = randomUUID()
  await saveDraft(site, user, draft, { title: 'Test Pack', version_name: '1.0.0', ...data })
  await upload(site, user, 'version', options.archive ?? (await datapack(48)), { draft })
  if (options.thumbnail) await upload(site, user, 'thumbnail', png(), { draft })
  const res = await site.app.inject({ method: 'POST', url: '/api/draft/publish/', headers: user.headers, payload: { draft } })
  assert.equal(res.statusCode, 201, res.body)
  return res.json() as PackJson
}

/** A category with some tags, as the admin CLI makes them. */
export async function seedTags(site: TestSite): Promise<void> {
  await createCategory(site.app.db, 'theme', 'Theme', '#aa5500')
  await createCategory(site.app.db, 'kind', 'Kind', '#0055aa')
  await createTag(site.app.db, 'Medieval', 'theme')
  await createTag(site.app.db, 'Space', 'theme')
  await createTag(site.app.db, 'Adventure', 'kind')
}

/** Path (with query) of an absolute or relative URL, for app.inject. */
export function pathOf(url: string): string {
  const parsed = new URL(url, 'http://localhost')
  return parsed.pathname + parsed.search
}
