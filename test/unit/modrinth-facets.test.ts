// Modrinth's search facets: how GET /api/modrinth/v2/search reads them
// (parseFacets: bounded, every refusal a 400 that says what was wrong) and how
// an AND of OR-groups becomes the packs search's filters (planSearch), with
// what those filters cannot say left to check on the hits (matchesResidual).
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { BadRequest } from '../../src/errors.js'
import { matchesResidual, parseFacets, planSearch, type Atom, type PackFacts } from '../../src/modrinth/facets.js'

/** The 400 a call throws, its message matched. */
function refused(call: () => unknown, message: RegExp): void {
  assert.throws(call, (error: unknown) => {
    assert.ok(error instanceof BadRequest, String(error))
    assert.match(error.message, message)
    return true
  })
}

describe('parseFacets', () => {
  test('an AND of OR-groups of "type:value", each value once; "=" is ":"; v3 names are the same facets', () => {
    assert.deepEqual(parseFacets('[["categories:adventure","categories:magic"],["versions:1.21.4"],["project_type:resourcepack"]]'), [
      [{ type: 'categories', value: 'adventure' }, { type: 'categories', value: 'magic' }],
      [{ type: 'versions', value: '1.21.4' }],
      [{ type: 'project_type', value: 'resourcepack' }],
    ])
    assert.deepEqual(parseFacets('[["author=alice", " author : alice ", "author:Bob"]]'), [
      [{ type: 'author', value: 'alice' }, { type: 'author', value: 'Bob' }],
    ])
    assert.deepEqual(parseFacets('[["game_versions:1.21"],["project_types:datapack"]]'), [
      [{ type: 'versions', value: '1.21' }],
      [{ type: 'project_type', value: 'datapack' }],
    ])
    assert.deepEqual(parseFacets('[["author:a:b"]]'), [[{ type: 'author', value: 'a:b' }]], 'the value is all after the first ":"')
    assert.deepEqual(parseFacets('[]'), [])
  })

  test('malformed JSON and wrong shapes are refused, saying what a facet looks like', () => {
    refused(() => parseFacets('[["categories:magic"]'), /must be JSON/)
    refused(() => parseFacets('{"categories":"magic"}'), /array of OR-groups/)
    refused(() => parseFacets('["categories:magic"]'), /group 1 must be an array.*not \["versions/)
    refused(() => parseFacets('[[]]'), /group 1 is empty/)
    refused(() => parseFacets('[["versions:1.21", 3]]'), /holds a number/)
    refused(() => parseFacets('[[null]]'), /holds a null/)
    refused(() => parseFacets('[[["categories:magic"]]]'), /holds a nested array/)
    refused(() => parseFacets('[["magic"]]'), /no "type:value" form/)
    refused(() => parseFacets('[["versions:"]]'), /names no value/)
  })

  test('deep and huge input is refused by its size before any work', () => {
    refused(() => parseFacets('['.repeat(50_000) + ']'.repeat(50_000)), /100000 characters long; at most 10000/)
    // Within the length, nesting is only as deep as the text is long, and the shape check stops at the first level.
    refused(() => parseFacets('['.repeat(4000) + ']'.repeat(4000)), /group 1 must be an array of "type:value" strings|holds a nested array/)
    const group = (n: number) => JSON.stringify(Array.from({ length: n }, (_, i) => `categories:c${i}`))
    refused(() => parseFacets(`[${Array.from({ length: 11 }, () => '["versions:1.21"]').join(',')}]`), /11 groups; at most 10/)
    refused(() => parseFacets(`[${group(21)}]`), /21 values; at most 20/)
    refused(() => parseFacets(JSON.stringify([[`categories:${'x'.repeat(300)}`]])), /at most 200/)
    assert.equal(parseFacets(`[${Array.from({ length: 10 }, () => group(20)).join(',')}]`).length, 10, 'the bounds themselves are fine')
  })

  test('unknown types and operators other than ":" are refused by name', () => {
    refused(() => parseFacets('[["license:mit"]]'), /type "license" is not one this site has: use categories, versions, project_type, author/)
    refused(() => parseFacets('[["title:Lamps"]]'), /type "title"/)
    for (const op of ['!=', '<', '<=', '>', '>=']) {
      refused(() => parseFacets(JSON.stringify([[`downloads${op}100`]])), new RegExp(`uses "${op}": this site takes "type:value" only`))
    }
    refused(() => parseFacets('[["versions!=1.21"]]'), /uses "!="/)
  })
})

const facts = (over: Partial<PackFacts> = {}): PackFacts => ({ categoryKey: null, tags: new Set(), ownerId: 'u1', kinds: new Set(['resource']), ...over })

describe('planSearch', () => {
  test('releases: an AND of any-of lists, as the packs search takes them', () => {
    assert.deepEqual(planSearch([[{ release: '1.21' }, { release: '1.21.1' }], [{ release: '1.21.4' }]]), {
      empty: false, filters: { releases: [['1.21', '1.21.1'], ['1.21.4']] }, residual: [],
    })
  })

  test('categories: several groups are their intersection (a pack has one category); none in common: no pack', () => {
    assert.deepEqual(planSearch([[{ category: 'theme' }, { category: 'kind' }], [{ category: 'kind' }, { category: 'misc' }]]), {
      empty: false, filters: { categories: ['kind'] }, residual: [],
    })
    assert.deepEqual(planSearch([[{ category: 'theme' }], [{ category: 'kind' }]]), { empty: true })
  })

  test('tags: groups of one tag are all-of; a group of several tags is left to check on the hits', () => {
    assert.deepEqual(planSearch([[{ tag: 'medieval' }], [{ tag: 'space' }]]), { empty: false, filters: { tags: ['medieval', 'space'] }, residual: [] })
    assert.deepEqual(planSearch([[{ tag: 'medieval' }, { tag: 'space' }]]), { empty: false, filters: {}, residual: [[{ tag: 'medieval' }, { tag: 'space' }]] })
    assert.deepEqual(planSearch([[{ tag: 'medieval' }, { category: 'theme' }]]), { empty: false, filters: {}, residual: [[{ tag: 'medieval' }, { category: 'theme' }]] })
  })

  test('kinds: groups sharing a kind are that kind; resourcepack AND datapack keeps one kind and checks the other', () => {
    assert.deepEqual(planSearch([[{ kind: 'resource' }, { kind: 'data' }]]), { empty: false, filters: { kinds: ['data', 'resource'] }, residual: [] })
    assert.deepEqual(planSearch([[{ kind: 'resource' }, { kind: 'data' }], [{ kind: 'data' }]]), { empty: false, filters: { kinds: ['data'] }, residual: [] })
    assert.deepEqual(planSearch([[{ kind: 'resource' }], [{ kind: 'data' }]]), { empty: false, filters: { kinds: ['resource'] }, residual: [[{ kind: 'data' }]] })
  })

  test('owners: one is the owner filter, two in one group are checked on the hits, two groups apart match nothing', () => {
    assert.deepEqual(planSearch([[{ owner: 'u1' }]]), { empty: false, filters: { ownerId: 'u1' }, residual: [] })
    assert.deepEqual(planSearch([[{ owner: 'u1' }, { owner: 'u2' }]]), { empty: false, filters: {}, residual: [[{ owner: 'u1' }, { owner: 'u2' }]] })
    assert.deepEqual(planSearch([[{ owner: 'u1' }], [{ owner: 'u2' }]]), { empty: true })
  })

  test('a group naming nothing here matches no pack; versions mixed with another type is a 400', () => {
    assert.deepEqual(planSearch([[{ release: '1.21' }], []]), { empty: true })
    refused(() => planSearch([[{ release: '1.21' }, { tag: 'medieval' }]]), /mixes versions with other facet types/)
  })
})

describe('matchesResidual', () => {
  const residual: Atom[][] = [[{ tag: 'medieval' }, { tag: 'space' }], [{ kind: 'data' }, { category: 'theme' }]]
  test('every group, any atom of each', () => {
    assert.equal(matchesResidual(residual, facts({ tags: new Set(['space']), kinds: new Set(['data']) })), true)
    assert.equal(matchesResidual(residual, facts({ tags: new Set(['medieval']), categoryKey: 'theme' })), true)
    assert.equal(matchesResidual(residual, facts({ tags: new Set(['medieval']) })), false, 'the second group fails')
    assert.equal(matchesResidual(residual, facts({ kinds: new Set(['data']) })), false, 'the first group fails')
    assert.equal(matchesResidual([[{ owner: 'u2' }, { owner: 'u3' }]], facts({ ownerId: 'u3' })), true)
    assert.equal(matchesResidual([], facts()), true)
  })
})
