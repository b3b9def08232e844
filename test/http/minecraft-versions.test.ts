// A version says which Minecraft releases it is for, not
// only its pack_format. Resource and data packs are published with each shape
// of pack.mcmeta, and the API's fields and the pages' words are checked; an
// archive whose format the table does not know still publishes.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { siteWith, type TestSite, type TestUser } from '../helpers/app.js'
import { multipart, zip } from '../helpers/fixtures.js'
import { publishPack, type PackJson } from '../helpers/packs.js'

const HTML = { accept: 'text/html,application/xhtml+xml' }

let site: TestSite
let alice: TestUser

before(async () => ({ site, alice } = await siteWith({ users: ['alice'] })))
after(() => site.close())

type Folders = 'assets' | 'data' | 'both' | 'neither'

/** An archive with `pack.mcmeta` holding `mcmeta` (a string is written as it is; null: no pack.mcmeta), and the folders of its kind. */
function archive(folders: Folders, mcmeta: Record<string, unknown> | string | null): Promise<Buffer> {
  const entries: Record<string, string> = {}
  if (mcmeta !== null) entries['pack.mcmeta'] = typeof mcmeta === 'string' ? mcmeta : JSON.stringify({ pack: { description: 'test', ...mcmeta } })
  if (folders === 'assets' || folders === 'both') entries['assets/minecraft/lang/en_us.json'] = '{}'
  if (folders === 'data' || folders === 'both') entries['data/test/function/hello.mcfunction'] = 'say hello'
  if (folders === 'neither') entries['readme.txt'] = 'hello'
  return zip(entries)
}

type VersionJson = PackJson['versions'][number]

interface Expected {
  pack_format: number | null
  pack_kind: 'resource' | 'data' | null
  min_format: number[] | null
  max_format: number[] | null
  minecraft_versions: string[]
  minecraft_label: string
  /** What the pages show beside the version. */
  page: string
}

const CASES: [string, Folders, Record<string, unknown> | string | null, Expected][] = [
  ['resource pack, pack_format alone', 'assets', { pack_format: 46 }, {
    pack_format: 46, pack_kind: 'resource', min_format: [46], max_format: [46],
    minecraft_versions: ['1.21.4'], minecraft_label: 'Minecraft 1.21.4', page: 'Minecraft 1.21.4 (resource pack)',
  }],
  ['resource pack, supported_formats as [min, max]', 'assets', { pack_format: 34, supported_formats: [34, 46] }, {
    pack_format: 34, pack_kind: 'resource', min_format: [34], max_format: [46],
    minecraft_versions: ['1.21', '1.21.1', '1.21.2', '1.21.3', '1.21.4'], minecraft_label: 'Minecraft 1.21 – 1.21.4',
    page: 'Minecraft 1.21 – 1.21.4 (resource pack)',
  }],
  ['resource pack, supported_formats as an object', 'assets', { pack_format: 55, supported_formats: { min_inclusive: 55, max_inclusive: 64 } }, {
    pack_format: 55, pack_kind: 'resource', min_format: [55], max_format: [64],
    minecraft_versions: ['1.21.5', '1.21.6', '1.21.7', '1.21.8'], minecraft_label: 'Minecraft 1.21.5 – 1.21.8',
    page: 'Minecraft 1.21.5 – 1.21.8 (resource pack)',
  }],
  ['resource pack, supported_formats as an integer', 'assets', { pack_format: 42, supported_formats: 42 }, {
    pack_format: 42, pack_kind: 'resource', min_format: [42], max_format: [42],
    minecraft_versions: ['1.21.2', '1.21.3'], minecraft_label: 'Minecraft 1.21.2 – 1.21.3', page: 'Minecraft 1.21.2 – 1.21.3 (resource pack)',
  }],
  ['data pack, min_format/max_format with minors', 'data', { min_format: [94, 1], max_format: [94, 1] }, {
    pack_format: 94, pack_kind: 'data', min_format: [94, 1], max_format: [94, 1],
    minecraft_versions: ['1.21.11'], minecraft_label: 'Minecraft 1.21.11', page: 'Minecraft 1.21.11 (data pack)',
  }],
  ['data pack, min_format as an integer, max_format [major, minor]', 'data', { min_format: 88, max_format: [101, 1] }, {
    pack_format: 101, pack_kind: 'data', min_format: [88], max_format: [101, 1],
    minecraft_versions: ['1.21.9', '1.21.10', '1.21.11', '26.1', '26.1.1', '26.1.2'], minecraft_label: 'Minecraft 1.21.9 – 26.1.2',
    page: 'Minecraft 1.21.9 – 26.1.2 (data pack)',
  }],
  ['data pack for old and new releases at once', 'data', { pack_format: 48, supported_formats: [48, 81], min_format: 48, max_format: 94 }, {
    pack_format: 48, pack_kind: 'data', min_format: [48], max_format: [94],
    minecraft_versions: ['1.21', '1.21.1', '1.21.2', '1.21.3', '1.21.4', '1.21.5', '1.21.6', '1.21.7', '1.21.8', '1.21.9', '1.21.10', '1.21.11'],
    minecraft_label: 'Minecraft 1.21 – 1.21.11', page: 'Minecraft 1.21 – 1.21.11 (data pack)',
  }],
  ['data pack of a format the table does not know', 'data', { pack_format: 99 }, {
    pack_format: 99, pack_kind: 'data', min_format: [99], max_format: [99],
    minecraft_versions: [], minecraft_label: 'pack format 99 (unknown Minecraft version)', page: 'pack format 99 (unknown Minecraft version)',
  }],
  ['both folders: no kind, named because both kinds agree', 'both', { pack_format: 15 }, {
    pack_format: 15, pack_kind: null, min_format: [15], max_format: [15],
    minecraft_versions: ['1.20', '1.20.1'], minecraft_label: 'Minecraft 1.20 – 1.20.1', page: 'Minecraft 1.20 – 1.20.1',
  }],
  ['neither folder, a format the kinds disagree on', 'neither', { pack_format: 61 }, {
    pack_format: 61, pack_kind: null, min_format: [61], max_format: [61],
    minecraft_versions: [], minecraft_label: 'pack format 61', page: 'pack format 61',
  }],
  ['no pack.mcmeta', 'assets', null, {
    pack_format: null, pack_kind: 'resource', min_format: null, max_format: null,
    minecraft_versions: [], minecraft_label: 'pack format unknown', page: 'pack format unknown',
  }],
  ['a pack.mcmeta that is not JSON', 'data', '{"pack": {"pack_format": 48,', {
    pack_format: null, pack_kind: 'data', min_format: null, max_format: null,
    minecraft_versions: [], minecraft_label: 'pack format unknown', page: 'pack format unknown',
  }],
  ['numbers past what the game reads: none of them counts', 'data', { pack_format: 1e300, min_format: 2 ** 31, max_format: [1e20] }, {
    pack_format: null, pack_kind: 'data', min_format: null, max_format: null,
    minecraft_versions: [], minecraft_label: 'pack format unknown', page: 'pack format unknown',
  }],
  ['hostile numbers: no range, and still published', 'data', { pack_format: 2 ** 31 - 1, min_format: [-1, 'x'], max_format: { a: 1 }, supported_formats: [1e300, 2] }, {
    pack_format: 2 ** 31 - 1, pack_kind: 'data', min_format: [2 ** 31 - 1], max_format: [2 ** 31 - 1],
    minecraft_versions: [], minecraft_label: 'pack format 2147483647 (unknown Minecraft version)', page: 'pack format 2147483647 (unknown Minecraft version)',
  }],
]

function pick(version: VersionJson): Omit<Expected, 'page'> {
  const { pack_format, pack_kind, min_format, max_format, minecraft_versions, minecraft_label } = version
  return { pack_format, pack_kind, min_format, max_format, minecraft_versions, minecraft_label }
}

/** The text of the <span class="game-versions"> in `html`, with its title. */
function gameVersions(html: string): { text: string; title: string } {
  const match = /<span class="game-versions" title="([^"]*)">([^<]*)<\/span>/.exec(html)
  assert.ok(match, 'a game-versions element')
  return { title: match[1]!, text: match[2]! }
}

function page(url: string) {
  return site.app.inject({ url, headers: { ...HTML, ...site.gate } })
}

describe('publishing packs of every pack.mcmeta shape', () => {
  for (const [index, [name, folders, mcmeta, expected]] of CASES.entries()) {
    test(name, async () => {
      const pack = await publishPack(site, alice, { title: `Shape ${index}` }, { archive: await archive(folders, mcmeta) })
      const { page: pageText, ...api } = expected
      assert.deepEqual(pick(pack.versions[0]!), api, 'the publish answer')
      const read = await site.app.inject({ url: `/api/packs/${pack.namespace}/${pack.pack_id}/`, headers: site.gate })
      assert.equal(read.statusCode, 200, read.body)
      assert.deepEqual(pick((read.json() as PackJson).versions[0]!), api, 'the pack as read back')
      const list = await site.app.inject({ url: `/api/packs/?q=${encodeURIComponent(`Shape ${index}`)}`, headers: site.gate })
      const summary = (list.json() as { items: { pack_id: string; latest_version: VersionJson | null }[] }).items.find((p) => p.pack_id === pack.pack_id)
      assert.ok(summary, 'the pack is listed')
      assert.deepEqual(pick(summary.latest_version!), api, 'the listing')

      const packPage = await page(`/packs/${pack.namespace}/${pack.pack_id}/`)
      assert.equal(packPage.statusCode, 200)
      const shown = gameVersions(packPage.body.slice(packPage.body.indexOf('<li class="version">')))
      assert.equal(shown.text, pageText)
      assert.equal(shown.title, expected.pack_format === null ? 'pack_format unknown' : `pack_format ${expected.pack_format}`)

      const browse = await page(`/?q=${encodeURIComponent(`Shape ${index}`)}`)
      assert.equal(browse.statusCode, 200)
      // The card's line follows its title link (several packs may match the search).
      const card = browse.body.indexOf(`<a href="/packs/${pack.namespace}/${pack.pack_id}/">`)
      assert.ok(card > 0, 'the card is on the browse page')
      assert.equal(gameVersions(browse.body.slice(card)).text, pageText)
    })
  }
})

describe('a new version through POST /api/packs/{namespace}/{pack_id}/versions/', () => {
  test('keeps its own declaration; the older version keeps its', async () => {
    const pack = await publishPack(site, alice, { title: 'Growing Pack' }, { archive: await archive('data', { pack_format: 61 }) })
    const body = multipart([
      { name: 'version_name', value: '2.0.0' },
      { name: 'file', value: await archive('data', { min_format: [94, 1], max_format: [107, 1] }), filename: 'v2.zip', contentType: 'application/zip' },
    ])
    const res = await site.app.inject({
      method: 'POST', url: `/api/packs/${pack.namespace}/${pack.pack_id}/versions/`, headers: { ...alice.headers, ...body.headers }, payload: body.payload,
    })
    assert.equal(res.statusCode, 201, res.body)
    const [newer, older] = (res.json() as PackJson).versions
    assert.deepEqual(pick(newer!), {
      pack_format: 107, pack_kind: 'data', min_format: [94, 1], max_format: [107, 1],
      minecraft_versions: ['1.21.11', '26.1', '26.1.1', '26.1.2', '26.2'], minecraft_label: 'Minecraft 1.21.11 – 26.2',
    })
    assert.equal(older!.minecraft_label, 'Minecraft 1.21.4')

    const packPage = await page(`/packs/${pack.namespace}/${pack.pack_id}/`)
    const items = packPage.body.split('<li class="version">').slice(1)
    assert.equal(gameVersions(items[0]!).text, 'Minecraft 1.21.11 – 26.2 (data pack)')
    assert.equal(gameVersions(items[1]!).text, 'Minecraft 1.21.4 (data pack)')
  })
})

describe('versions stored before declarations were kept', () => {
  test('are named from their pack_format alone, when it says enough', async () => {
    const pack = await publishPack(site, alice, { title: 'Old Row' }, { archive: await archive('data', { pack_format: 15 }) })
    const versionId = pack.versions[0]!.id
    const file = await site.app.db.selectFrom('versions').select('file_id').where('id', '=', versionId).executeTakeFirstOrThrow()
    // As migration 0002 left the files uploaded before it: the columns empty.
    await site.app.db.updateTable('files')
      .set({ pack_kind: null, min_format: null, min_format_minor: null, max_format: null, max_format_minor: null })
      .where('id', '=', file.file_id)
      .execute()
    const read = await site.app.inject({ url: `/api/packs/${pack.namespace}/${pack.pack_id}/`, headers: site.gate })
    assert.deepEqual(pick((read.json() as PackJson).versions[0]!), {
      pack_format: 15, pack_kind: null, min_format: null, max_format: null,
      minecraft_versions: ['1.20', '1.20.1'], minecraft_label: 'Minecraft 1.20 – 1.20.1',
    })
    const packPage = await page(`/packs/${pack.namespace}/${pack.pack_id}/`)
    assert.equal(gameVersions(packPage.body.slice(packPage.body.indexOf('<li class="version">'))).text, 'Minecraft 1.20 – 1.20.1')
  })
})
