import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { createCategory, createTag } from '../../src/packs/tags.js'
import { insertUser } from '../../src/accounts/users-repository.js'
import { nowIso } from '../../src/db/time.js'
import { expectError, makeSite, type TestSite } from '../helpers/app.js'

interface Suggestion {
  name: string
  category: string
  category_name: string
  color: string
}

async function tags(site: TestSite, q?: string): Promise<Suggestion[]> {
  const url = q === undefined ? '/api/tags/autocomplete/' : `/api/tags/autocomplete/?q=${encodeURIComponent(q)}`
  const res = await site.app.inject({ method: 'GET', url, headers: site.gate })
  assert.equal(res.statusCode, 200, res.body)
  return res.json() as Suggestion[]
}

const names = (list: { name: string }[]) => list.map((s) => s.name)

/** Attaches `tagName` to `times` new packs (rows only: usage is all the autocomplete reads). */
async function use(site: TestSite, ownerId: string, tagName: string, times: number): Promise<void> {
  const tag = await site.app.db.selectFrom('tags').select('id').where('name_lower', '=', tagName.toLowerCase()).executeTakeFirstOrThrow()
  for (let i = 0; i < times; i++) {
    const packId = randomUUID()
    const now = nowIso()
    await site.app.db.insertInto('packs').values({
      id: packId, namespace: 'owner', pack_id: `p-${packId}`, owner_id: ownerId, title: 'Pack', summary: '', description: '',
      category_id: null, thumbnail_file_id: null, created_at: now, updated_at: now,
    }).execute()
    await site.app.db.insertInto('pack_tags').values({ pack_id: packId, tag_id: tag.id }).execute()
  }
}

describe('GET /api/tags/autocomplete/', () => {
  let site: TestSite
  let ownerId: string

  before(async () => {
    site = await makeSite()
    const db = site.app.db
    ownerId = (await insertUser(db, 'owner', 'not-a-real-hash', false)).id
    await createCategory(db, 'blocks', 'Blocks', '#112233')
    await createCategory(db, 'era', 'Stone Age', '#445566')
    await createCategory(db, 'misc', 'Misc', '#778899')
    await createTag(db, 'Stone', 'blocks')
    await createTag(db, 'stonecutter', 'blocks')
    await createTag(db, 'cobblestone', 'blocks')
    await createTag(db, 'bricks', 'era')
    await createTag(db, 'a_b', 'misc')
    await createTag(db, 'axb', 'misc')
    await createTag(db, '50%off', 'misc')
    await createTag(db, '50off', 'misc')
    await createTag(db, 'back\\slash', 'misc')
    await createTag(db, 'backxslash', 'misc')
    await createTag(db, "it's", 'misc')
    await use(site, ownerId, 'stonecutter', 3)
    await use(site, ownerId, 'bricks', 2)
    await use(site, ownerId, 'axb', 1)
  })
  after(async () => site.close())

  test('returns tag, category key, category name and color', async () => {
    assert.deepEqual(await tags(site, 'cobble'), [{ name: 'cobblestone', category: 'blocks', category_name: 'Blocks', color: '#112233' }])
  })

  test('tag-name prefix matches first, then category-name prefix matches, then substring matches; usage breaks ties', async () => {
    // stonecutter is used more than Stone, so it leads the prefix group;
    // bricks matches through its category "Stone Age"; cobblestone only contains "stone".
    assert.deepEqual(names(await tags(site, 'stone')), ['stonecutter', 'Stone', 'bricks', 'cobblestone'])
  })

  test('matches case-insensitively and keeps the stored spelling', async () => {
    assert.deepEqual(names(await tags(site, 'STONE')), ['stonecutter', 'Stone', 'bricks', 'cobblestone'])
    assert.deepEqual(names(await tags(site, 'sToNe AG')), ['bricks'])
  })

  test('matches the category name anywhere in it', async () => {
    assert.deepEqual(names(await tags(site, 'age')), ['bricks'])
  })

  test('%, _, backslash and quotes are plain characters', async () => {
    assert.deepEqual(names(await tags(site, 'a_')), ['a_b'])
    assert.deepEqual(names(await tags(site, '%')), ['50%off'])
    assert.deepEqual(names(await tags(site, '50%')), ['50%off'])
    assert.deepEqual(names(await tags(site, 'back\\')), ['back\\slash'])
    assert.deepEqual(names(await tags(site, "'")), ["it's"])
    assert.deepEqual(await tags(site, "' or 1=1 --"), [])
  })

  test('without q, or with a blank q, lists the most used tags first', async () => {
    for (const q of [undefined, '', '   ']) {
      const list = names(await tags(site, q))
      // Unused tags follow in (lower-cased) name order, so a new site still gets suggestions.
      assert.deepEqual(list, [
        'stonecutter', 'bricks', 'axb',
        '50%off', '50off', 'a_b', 'back\\slash', 'backxslash', 'cobblestone', "it's", 'Stone',
      ], `q=${JSON.stringify(q)}`)
    }
  })

  test('a q longer than 64 characters is refused with 400', async () => {
    const res = await site.app.inject({ method: 'GET', url: `/api/tags/autocomplete/?q=${'a'.repeat(65)}`, headers: site.gate })
    expectError(res, 400)
  })

  test('needs the gate: 401 without it, 200 with the gate alone', async () => {
    expectError(await site.app.inject({ method: 'GET', url: '/api/tags/autocomplete/?q=stone' }), 401)
    const gated = await site.app.inject({ method: 'GET', url: '/api/tags/autocomplete?q=stone', headers: site.gate })
    assert.equal(gated.statusCode, 200)
  })
})

describe('tag autocomplete limit', () => {
  let site: TestSite
  before(async () => {
    site = await makeSite()
    await createCategory(site.app.db, 'many', 'Many', '#000000')
    for (let i = 24; i >= 0; i--) await createTag(site.app.db, `tag${String(i).padStart(2, '0')}`, 'many')
  })
  after(async () => site.close())

  test('returns at most 20 suggestions, in name order when usage is equal', async () => {
    const expected = Array.from({ length: 20 }, (_, i) => `tag${String(i).padStart(2, '0')}`)
    assert.deepEqual(names(await tags(site, 'TAG')), expected)
    assert.deepEqual(names(await tags(site)), expected)
  })
})

describe('GET /api/users/autocomplete/', () => {
  let site: TestSite

  async function users(q?: string): Promise<string[]> {
    const url = q === undefined ? '/api/users/autocomplete/' : `/api/users/autocomplete/?q=${encodeURIComponent(q)}`
    const res = await site.app.inject({ method: 'GET', url, headers: site.gate })
    assert.equal(res.statusCode, 200, res.body)
    return (res.json() as { username: string }[]).map((u) => u.username)
  }

  before(async () => {
    site = await makeSite()
    for (const name of ['alice', 'Alicia', 'bob', 'a_b', 'axb', 'al.ex']) await insertUser(site.app.db, name, 'not-a-real-hash', false)
    for (let i = 0; i < 25; i++) await insertUser(site.app.db, `user${String(i).padStart(2, '0')}`, 'not-a-real-hash', false)
  })
  after(async () => site.close())

  test('username prefix, case-insensitive, in name order', async () => {
    assert.deepEqual(await users('ali'), ['alice', 'Alicia'])
    assert.deepEqual(await users('ALI'), ['alice', 'Alicia'])
    assert.deepEqual(await users('alic'), ['alice', 'Alicia'])
    assert.deepEqual(await users('al.'), ['al.ex'])
    assert.deepEqual(await users('lic'), [], 'a prefix, not a substring')
  })

  test('_ and % are plain characters', async () => {
    assert.deepEqual(await users('a_'), ['a_b'])
    assert.deepEqual(await users('%'), [])
    assert.deepEqual(await users('a%'), [])
  })

  test('at most 20', async () => {
    const list = await users('user')
    assert.deepEqual(list, Array.from({ length: 20 }, (_, i) => `user${String(i).padStart(2, '0')}`))
    assert.equal((await users()).length, 20)
  })

  test('a q longer than 64 characters is refused with 400', async () => {
    expectError(await site.app.inject({ method: 'GET', url: `/api/users/autocomplete/?q=${'a'.repeat(65)}`, headers: site.gate }), 400)
  })

  test('needs the gate: 401 without it, 200 with the gate alone', async () => {
    expectError(await site.app.inject({ method: 'GET', url: '/api/users/autocomplete/?q=ali' }), 401)
    const res = await site.app.inject({ method: 'GET', url: '/api/users/autocomplete?q=ali', headers: site.gate })
    assert.deepEqual(res.json(), [{ username: 'alice' }, { username: 'Alicia' }])
  })
})

describe('user autocomplete and disabled accounts', () => {
  let site: TestSite
  let root: { headers: Record<string, string> }

  async function users(q?: string, headers: Record<string, string> = site.gate): Promise<string[]> {
    const url = q === undefined ? '/api/users/autocomplete/' : `/api/users/autocomplete/?q=${encodeURIComponent(q)}`
    const res = await site.app.inject({ method: 'GET', url, headers })
    assert.equal(res.statusCode, 200, res.body)
    return (res.json() as { username: string }[]).map((u) => u.username)
  }

  async function moderate(action: 'disable' | 'enable', username: string): Promise<void> {
    const res = await site.app.inject({ method: 'POST', url: `/api/users/${username}/${action}/`, headers: root.headers, payload: {} })
    assert.equal(res.statusCode, 200, res.body)
  }

  before(async () => {
    site = await makeSite()
    root = await site.user('root', { staff: true })
    for (const name of ['dana', 'Dave', 'david']) await site.user(name)
    // More disabled accounts than one answer holds, all before the enabled ones in name order: the limit counts
    // only the accounts that are listed.
    for (let i = 0; i < 25; i++) await site.user(`d${String(i).padStart(2, '0')}`)
  })
  after(async () => site.close())

  test('a disabled account is never suggested, to anyone; enabled again, it is', async () => {
    assert.deepEqual(await users('dav'), ['Dave', 'david'])
    await moderate('disable', 'Dave')
    assert.deepEqual(await users('dav'), ['david'])
    assert.deepEqual(await users('dave'), [])
    assert.deepEqual(await users('dav', root.headers), ['david'], 'not to staff either')
    assert.ok(!(await users()).includes('Dave'), 'nor without q')
    await moderate('enable', 'dave')
    assert.deepEqual(await users('dav'), ['Dave', 'david'])
  })

  test('at most 20 suggestions, counted among the accounts listed', async () => {
    for (let i = 0; i < 25; i++) await moderate('disable', `d${String(i).padStart(2, '0')}`)
    assert.deepEqual(await users('d'), ['dana', 'Dave', 'david'])
    assert.ok((await users()).every((name) => !/^d\d\d$/.test(name)))
  })
})
