// Words as search sees them (src/packs/search-text.ts), the typo budget and the
// edit distance behind typo tolerance, and the Minecraft release filter's
// ranges (src/packs/search-service.ts): pure functions, no database.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { BadRequest } from '../../src/errors.js'
import { RELEASES } from '../../src/minecraft/formats.js'
import { compareReleases, knownReleases, releasesMatching } from '../../src/packs/search-service.js'
import { editDistance, MAX_QUERY_WORDS, queryWords, typoBudget, words } from '../../src/packs/search-text.js'

describe('words', () => {
  test('lower case, accents removed, split at anything that is not a letter or a digit', () => {
    assert.deepEqual(words('Dragon LAIRS'), ['dragon', 'lairs'])
    assert.deepEqual(words('Café Élan naïve Ñandú'), ['cafe', 'elan', 'naive', 'nandu'])
    assert.deepEqual(words('Redstone_Rose x-ray 1.21 "quoted" (paren) a&b|c!d*e:f^g'), ['redstone', 'rose', 'x', 'ray', '1', '21', 'quoted', 'paren', 'a', 'b', 'c', 'd', 'e', 'f', 'g'])
    assert.deepEqual(words('ＡＢＣ１２３'), ['abc123'], 'full-width forms fold under NFKD')
    assert.deepEqual(words('Straße Ærø Łódź ŒUVRE'), ['strasse', 'aero', 'lodz', 'oeuvre'], 'letters NFKD keeps whole fold as pack ids fold them')
    assert.deepEqual(words('  ...  !!! '), [])
    assert.deepEqual(words(''), [])
  })

  test('keeps repeats and order (a document\'s word counts)', () => {
    assert.deepEqual(words('stone Stone STONE brick'), ['stone', 'stone', 'stone', 'brick'])
  })

  test('cuts words longer than 40 letters', () => {
    const long = 'a'.repeat(100)
    assert.deepEqual(words(`${long} b`), ['a'.repeat(40), 'b'])
    assert.deepEqual(words('x'.repeat(40)), ['x'.repeat(40)], 'exactly 40 stays whole')
  })
})

describe('queryWords', () => {
  test('distinct words in order, at most MAX_QUERY_WORDS', () => {
    assert.deepEqual(queryWords('Dragon dragon DRAGÖN lair'), ['dragon', 'lair'])
    const many = Array.from({ length: 20 }, (_, i) => `w${i}`).join(' ')
    assert.equal(MAX_QUERY_WORDS, 8)
    assert.deepEqual(queryWords(many), Array.from({ length: 8 }, (_, i) => `w${i}`))
    assert.deepEqual(queryWords('"*:&|!(NEAR-^)"'), ['near'])
  })

  test('reads at most the first 1,000 characters of a query', () => {
    assert.deepEqual(queryWords(`${' '.repeat(1000)}late`), [])
  })
})

describe('typoBudget', () => {
  test('none below 5 letters, one from 5, two from 9 (letters, not UTF-16 units)', () => {
    assert.deepEqual(['a', 'drag', 'lair'].map(typoBudget), [0, 0, 0])
    assert.deepEqual(['dragon', 'stone', 'redstone'].map(typoBudget), [1, 1, 1])
    assert.deepEqual(['adventure', 'medievalist'].map(typoBudget), [2, 2])
    assert.equal(typoBudget('𝒜𝒜𝒜𝒜'), 0, 'four astral letters are four letters')
  })
})

describe('editDistance', () => {
  test('insertions, deletions and substitutions count one each', () => {
    assert.equal(editDistance('dragon', 'dragon', 2), 0)
    assert.equal(editDistance('dragon', 'dragons', 2), 1)
    assert.equal(editDistance('dragon', 'drgon', 2), 1)
    assert.equal(editDistance('dragon', 'dravon', 2), 1)
    assert.equal(editDistance('kitten', 'sitting', 3), 3)
    assert.equal(editDistance('', 'abc', 3), 3)
  })

  test('a swap of neighbouring letters is one edit', () => {
    assert.equal(editDistance('dargon', 'dragon', 2), 1)
    assert.equal(editDistance('drgaon', 'dragon', 2), 1)
    assert.equal(editDistance('ab', 'ba', 1), 1)
  })

  test('stops at max + 1 as soon as the distance is certain to exceed max', () => {
    assert.equal(editDistance('dragon', 'castle', 1), 2)
    assert.equal(editDistance('dragon', 'castle', 2), 3)
    assert.equal(editDistance('a', 'abcdef', 2), 3, 'lengths too far apart')
    assert.equal(editDistance('abcdefgh', 'hgfedcba', 0), 1)
    // Never more than max + 1, however far apart.
    assert.equal(editDistance('x'.repeat(40), 'y'.repeat(40), 2), 3)
  })
})

describe('releases', () => {
  test('compare as numbers, part by part: 1.9 < 1.10 < 1.21 < 1.21.4 < 26.1', () => {
    const sorted = ['26.1', '1.21.4', '1.10', '1.9', '1.21', '1.9.4'].sort(compareReleases)
    assert.deepEqual(sorted, ['1.9', '1.9.4', '1.10', '1.21', '1.21.4', '26.1'])
    assert.equal(compareReleases('1.21', '1.21'), 0)
    assert.ok(compareReleases('1.21', '1.21.0') < 0, 'a shorter name sorts before its .0')
  })

  test('knownReleases: every release of either kind once, newest first', () => {
    const all = knownReleases()
    const names = new Set([...RELEASES.resource, ...RELEASES.data].map((r) => r.name))
    assert.equal(all.length, names.size)
    for (let i = 1; i < all.length; i++) assert.ok(compareReleases(all[i - 1]!, all[i]!) > 0, `${all[i - 1]} before ${all[i]}`)
  })

  test('a single release must be one Packs knows', () => {
    assert.deepEqual(releasesMatching('1.21.4'), ['1.21.4'])
    assert.deepEqual(releasesMatching(' 1.21.4 '), ['1.21.4'])
    assert.deepEqual(releasesMatching('=1.20.1'), ['1.20.1'])
    assert.throws(() => releasesMatching('1.21.99'), (e: unknown) => e instanceof BadRequest && /1\.21\.99 is not a release Packs knows/.test(e.message))
    assert.throws(() => releasesMatching('1.5'), BadRequest, '1.5 had no packs of either kind')
  })

  test('ranges: >=, >, <=, <, and a..b with both ends included; the ends need not be known releases', () => {
    const all = knownReleases()
    const atLeast = releasesMatching('>=1.21')
    assert.ok(atLeast.includes('1.21') && atLeast.includes('1.21.4') && atLeast.includes('26.1'))
    assert.ok(!atLeast.includes('1.20.6') && !atLeast.includes('1.9'))
    assert.deepEqual(new Set(atLeast), new Set(all.filter((r) => compareReleases(r, '1.21') >= 0)))
    assert.ok(!releasesMatching('>1.21').includes('1.21') && releasesMatching('>1.21').includes('1.21.1'))
    const below = releasesMatching('<1.20')
    assert.ok(below.includes('1.19.4') && below.includes('1.9') && below.includes('1.10'), '1.10 is below 1.20 though "1.10" > "1.2" as text')
    assert.ok(!below.includes('1.20') && !below.includes('1.20.1'))
    assert.ok(releasesMatching('<=1.20').includes('1.20'))
    assert.deepEqual(releasesMatching('1.20.1..1.21.4'),
      ['1.20.1', '1.20.2', '1.20.3', '1.20.4', '1.20.5', '1.20.6', '1.21', '1.21.1', '1.21.2', '1.21.3', '1.21.4'])
    assert.deepEqual(releasesMatching('1.20.1 .. 1.20.2'), ['1.20.1', '1.20.2'])
    assert.deepEqual(releasesMatching('>=1.21.99').filter((r) => r.startsWith('1.21')), [], 'an unknown end is fine')
    assert.deepEqual(releasesMatching('1.21.4..1.20.1'), [], 'a range the wrong way round holds nothing')
  })

  test('garbage is a BadRequest that says what to write', () => {
    for (const spec of ['>=abc', 'abc', '', '>=', '1.21..', '..1.21', '1..2..3', '1.2.3.4', '>>1.21', '1.21-pre1', '9999.1', "1.21'; drop table packs"]) {
      assert.throws(() => releasesMatching(spec), (e: unknown) => e instanceof BadRequest && /is not a Minecraft release or range/.test(e.message), spec)
    }
  })
})
