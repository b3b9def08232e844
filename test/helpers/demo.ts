// A small, realistic site on a running server: categories and tags, a staff
// user and a creator, and packs with thumbnails, media, Markdown descriptions
// and several versions. The 360 px layout test and the screenshots of the README and docs/site.md
// (scripts/screenshots.ts) look at the same pages.
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { datapack, pixelPng, png, zip } from './fixtures.js'
import { cliOk, lastLine, type RunningServer } from './server.js'

export interface DemoUser {
  username: string
  password: string
  token: string
  headers: Record<string, string>
}

export interface DemoSite {
  staff: DemoUser
  creator: DemoUser
  /** namespace:pack_id of every published pack, the newest last. */
  packs: string[]
}

type Rgb = [number, number, number]

/** A 16x16 block texture scaled up, in the spirit of the game's own art: a base colour with noisy shades. */
export function blockTexture(base: Rgb, size = 128, seed = 1): Buffer {
  let state = seed
  const random = () => ((state = (state * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff)
  const shades = Array.from({ length: 256 }, () => 0.75 + random() * 0.5)
  const scale = size / 16
  return pixelPng(size, size, (x, y) => {
    const shade = shades[Math.floor(y / scale) * 16 + Math.floor(x / scale)]!
    return base.map((c) => Math.max(0, Math.min(255, Math.round(c * shade)))) as Rgb
  })
}

const PACKS: { title: string; summary: string; category: string; tags: string[]; color: Rgb; description: string; versions: [string, number, string][] }[] = [
  {
    title: 'Mossy Dungeons',
    summary: 'Overgrown dungeon rooms with new loot tables.',
    category: 'gameplay',
    tags: ['Worldgen', 'Medieval'],
    color: [74, 124, 58],
    description: '## Features\n\n- 12 new dungeon layouts\n- Loot tables tuned for **early game**\n\nSee the [changelog](#versions) for what changed.',
    versions: [['1.0.0', 48, 'First release.'], ['1.1.0', 57, 'Two more rooms.\nFixed a loot table typo.']],
  },
  {
    title: 'Crisp Ores',
    summary: 'Sharper, brighter ore textures that stand out underground.',
    category: 'textures',
    tags: ['Resource pack', 'Vanilla+'],
    color: [96, 120, 160],
    description: 'Ores you can spot from across a cave.\n\n> Works with any pack that keeps the vanilla stone.',
    versions: [['2.0', 46, 'Redrawn diamond and emerald ore.']],
  },
  {
    title: 'Star Forge',
    summary: 'A sci-fi crafting overhaul for space-themed worlds.',
    category: 'gameplay',
    tags: ['Sci-fi', 'Data pack'],
    color: [120, 70, 160],
    description: 'Adds *forges*, alloys and 30 recipes.',
    versions: [['0.9.0-beta', 61, 'Public beta.']],
  },
  {
    title: 'Cozy Villages',
    summary: 'Warmer village houses with gardens and lanterns.',
    category: 'gameplay',
    tags: ['Worldgen', 'Vanilla+'],
    color: [176, 120, 64],
    description: 'Villages feel lived in: gardens, lanterns, market stalls.',
    versions: [['1.0', 48, 'Initial release.']],
  },
]

async function call(server: RunningServer, user: DemoUser, method: string, path: string, body?: FormData | object): Promise<unknown> {
  const isForm = body instanceof FormData
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: { ...user.headers, ...(body !== undefined && !isForm ? { 'content-type': 'application/json' } : {}) },
    body: body === undefined ? undefined : isForm ? body : JSON.stringify(body),
  })
  const text = await response.text()
  assert.ok(response.ok, `${method} ${path}: ${response.status} ${text}`)
  return JSON.parse(text)
}

async function uploadFile(server: RunningServer, user: DemoUser, draft: string, kind: string, bytes: Buffer, filename: string): Promise<void> {
  const form = new FormData()
  form.set('kind', kind)
  form.set('draft_uuid', draft)
  form.set('file', new Blob([new Uint8Array(bytes)]), filename)
  await call(server, user, 'POST', '/api/uploads/', form)
}

async function demoUser(server: RunningServer, username: string, staff: boolean): Promise<DemoUser> {
  const password = `${username}-demo-password`
  await cliOk(['user', 'create', username, '--password', password, ...(staff ? ['--staff'] : [])], server.env)
  const token = lastLine((await cliOk(['token', 'create', username, '--name', 'demo'], server.env)).stdout)
  return { username, password, token, headers: { authorization: `Bearer ${username} ${token}` } }
}

export async function seedDemoSite(server: RunningServer): Promise<DemoSite> {
  const cli = (args: string[]) => cliOk(args, server.env)
  await cli(['category', 'create', 'gameplay', '--name', 'Gameplay', '--color', '#2f855a'])
  await cli(['category', 'create', 'textures', '--name', 'Textures', '--color', '#2b6cb0'])
  await cli(['category', 'create', 'style', '--name', 'Style', '--color', '#d69e2e'])
  for (const [tag, category] of [
    ['Worldgen', 'gameplay'], ['Data pack', 'gameplay'], ['Resource pack', 'textures'],
    ['Vanilla+', 'style'], ['Medieval', 'style'], ['Sci-fi', 'style'],
  ] as const) {
    await cli(['tag', 'create', tag, '--category', category])
  }
  const staff = await demoUser(server, 'staff', true)
  const creator = await demoUser(server, 'steve', false)

  const packs: string[] = []
  for (const [index, pack] of PACKS.entries()) {
    const draft = randomUUID()
    const [first, ...later] = pack.versions
    await call(server, creator, 'POST', '/api/draft/', {
      draft,
      data: { title: pack.title, summary: pack.summary, category: pack.category, tags: pack.tags, description: pack.description, version_name: first![0], changelog: first![2] },
    })
    await uploadFile(server, creator, draft, 'thumbnail', blockTexture(pack.color, 128, index + 1), 'thumbnail.png')
    await uploadFile(server, creator, draft, 'media', blockTexture(pack.color.map((c) => 255 - c) as Rgb, 320, index + 7), 'screenshot.png')
    await uploadFile(server, creator, draft, 'version', await datapack(first![1]), `${pack.title.toLowerCase().replace(/ /g, '-')}-${first![0]}.zip`)
    const published = (await call(server, creator, 'POST', '/api/draft/publish/', { draft })) as { namespace: string; pack_id: string }
    for (const [name, format, changelog] of later) {
      const form = new FormData()
      form.set('version_name', name)
      form.set('changelog', changelog)
      form.set('file', new Blob([new Uint8Array(await zip({ 'pack.mcmeta': JSON.stringify({ pack: { pack_format: format, description: pack.title } }) }))]), `${name}.zip`)
      await call(server, creator, 'POST', `/api/packs/${published.namespace}/${published.pack_id}/versions/`, form)
    }
    packs.push(`${published.namespace}:${published.pack_id}`)
  }
  // A draft in progress, for "My drafts" and the create page.
  await call(server, creator, 'POST', '/api/draft/', { draft: randomUUID(), data: { title: 'Nether Gardens', summary: 'Work in progress' } })
  return { staff, creator, packs }
}

/** An upload that never reaches a pack (its draft is never saved): a pending upload beside the demo's published files. */
export async function addPendingUpload(server: RunningServer, user: DemoUser): Promise<void> {
  await uploadFile(server, user, randomUUID(), 'media', png(4, 4, [1, 2, 3]), 'pending.png')
}
