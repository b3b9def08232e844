// The declared format range read from pack.mcmeta: every shape the game has
// accepted, and whatever else an uploader may write (src/minecraft/mcmeta.ts).
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import fc from 'fast-check'
import { declaredRange, declaredRangeOfText, parseMcmeta } from '../../src/minecraft/mcmeta.js'
import type { FormatRange } from '../../src/minecraft/declaration.js'

const range = (min: [number, number], max: [number] | [number, number]): FormatRange => ({ min, max })
const pack = (fields: Record<string, unknown>): unknown => ({ pack: { description: 'test', ...fields } })

describe('declaredRange: the shapes pack.mcmeta has had', () => {
  const cases: [string, unknown, FormatRange | null][] = [
    ['pack_format alone', pack({ pack_format: 46 }), range([46, 0], [46])],
    ['pack_format 0', pack({ pack_format: 0 }), range([0, 0], [0])],
    ['supported_formats as an integer', pack({ pack_format: 42, supported_formats: 42 }), range([42, 0], [42])],
    ['supported_formats as [min, max]', pack({ pack_format: 34, supported_formats: [34, 46] }), range([34, 0], [46])],
    ['supported_formats as an object', pack({ pack_format: 46, supported_formats: { min_inclusive: 34, max_inclusive: 46 } }), range([34, 0], [46])],
    ['supported_formats without pack_format', pack({ supported_formats: [18, 22] }), range([18, 0], [22])],
    ['pack_format outside supported_formats: pack_format alone, as 1.20.2 – 1.21.8 do', pack({ pack_format: 15, supported_formats: [18, 22] }), range([15, 0], [15])],
    ['min_format/max_format as integers', pack({ min_format: 88, max_format: 94 }), range([88, 0], [94])],
    ['min_format/max_format as [major]', pack({ min_format: [88], max_format: [94] }), range([88, 0], [94])],
    ['min_format/max_format as [major, minor]', pack({ min_format: [94, 1], max_format: [94, 1] }), range([94, 1], [94, 1])],
    ['mixed shapes', pack({ min_format: 88, max_format: [101, 1] }), range([88, 0], [101, 1])],
    ['a list longer than two: the first two count, as in the game', pack({ min_format: [94, 1, 7], max_format: [107, 1, 3] }), range([94, 1], [107, 1])],
    ['a multi-version pack: min/max_format win over the older fields', pack({ pack_format: 48, supported_formats: [48, 81], min_format: 48, max_format: 94 }), range([48, 0], [94])],
    ['max with its minor left out is any minor, so above min of the same major', pack({ min_format: [94, 3], max_format: 94 }), range([94, 3], [94])],
    ['a pack that says nothing', pack({}), null],
  ]
  for (const [name, mcmeta, expected] of cases) {
    test(name, () => assert.deepEqual(declaredRange(mcmeta), expected))
  }
})

describe('declaredRange: broken fields are ignored, never thrown', () => {
  const cases: [string, unknown, FormatRange | null][] = [
    ['min_format alone falls to pack_format', pack({ pack_format: 57, min_format: 88 }), range([57, 0], [57])],
    ['max_format alone falls to supported_formats', pack({ pack_format: 34, supported_formats: [34, 42], max_format: 94 }), range([34, 0], [42])],
    ['min above max falls to pack_format', pack({ pack_format: 61, min_format: 94, max_format: 88 }), range([61, 0], [61])],
    ['min minor above max minor', pack({ min_format: [94, 2], max_format: [94, 1] }), null],
    ['negative formats', pack({ pack_format: -1, min_format: -5, max_format: 3 }), null],
    ['a negative minor', pack({ min_format: [94, -1], max_format: [94, 1] }), null],
    ['fractions', pack({ pack_format: 48.5, supported_formats: [34.5, 46] }), null],
    ['beyond a Java int', pack({ pack_format: 2 ** 31, min_format: 1e300, max_format: 1e300 }), null],
    ['the largest Java int is still a format', pack({ pack_format: 2 ** 31 - 1 }), range([2 ** 31 - 1, 0], [2 ** 31 - 1])],
    ['numbers as strings', pack({ pack_format: '48', min_format: '88', max_format: ['94'] }), null],
    ['booleans and null', pack({ pack_format: true, supported_formats: null, min_format: false, max_format: null }), null],
    ['an empty list', pack({ min_format: [], max_format: [94], pack_format: 94 }), range([94, 0], [94])],
    ['a list past 256 numbers', pack({ min_format: [88], max_format: Array.from({ length: 257 }, () => 94), pack_format: 15 }), range([15, 0], [15])],
    ['supported_formats of three numbers', pack({ supported_formats: [34, 42, 46], pack_format: 42 }), range([42, 0], [42])],
    ['supported_formats of one number in a list', pack({ supported_formats: [34] }), null],
    ['supported_formats reversed', pack({ supported_formats: [46, 34] }), null],
    ['supported_formats object missing a bound', pack({ supported_formats: { min_inclusive: 34 } }), null],
    ['supported_formats object with a string bound', pack({ supported_formats: { min_inclusive: 34, max_inclusive: '46' } }), null],
    ['min/max_format as objects', pack({ min_format: { major: 94 }, max_format: { major: 94 } }), null],
    ['pack is a list', { pack: [{ pack_format: 48 }] }, null],
    ['pack is a number', { pack: 48 }, null],
    ['no pack', { meta: { pack_format: 48 } }, null],
    ['null', null, null],
    ['undefined (not JSON)', undefined, null],
    ['a string', 'pack_format 48', null],
    ['a list at the top', [pack({ pack_format: 48 })], null],
  ]
  for (const [name, mcmeta, expected] of cases) {
    test(name, () => assert.deepEqual(declaredRange(mcmeta), expected))
  }

  test('a "__proto__" key is only a key, not the prototype of pack', () => {
    const parsed = parseMcmeta('{"pack":{"__proto__":{"pack_format":48}}}')
    assert.equal(declaredRange(parsed), null)
  })

  test('any JSON value: never throws, and whatever comes out is a well-formed range', () => {
    const formatish = fc.oneof(fc.integer({ min: -3, max: 130 }), fc.double(), fc.string(), fc.constant(null), fc.boolean())
    const field = fc.oneof(
      formatish,
      fc.array(formatish, { maxLength: 4 }),
      fc.record({ min_inclusive: formatish, max_inclusive: formatish }, { requiredKeys: [] }),
      fc.jsonValue({ maxDepth: 3 }),
    )
    const mcmeta = fc.oneof(
      fc.jsonValue({ maxDepth: 4 }),
      fc.record({ pack: fc.record({ pack_format: field, supported_formats: field, min_format: field, max_format: field }, { requiredKeys: [] }) }),
    )
    fc.assert(fc.property(mcmeta, (value) => {
      const result = declaredRange(value)
      if (result === null) return
      const isFormat = (n: unknown): boolean => Number.isInteger(n) && (n as number) >= 0 && (n as number) <= 2 ** 31 - 1
      assert.equal(result.min.length, 2)
      assert.ok(result.max.length === 1 || result.max.length === 2)
      assert.ok([...result.min, ...result.max].every(isFormat), JSON.stringify(result))
      const [minMajor, minMinor] = result.min
      const [maxMajor, maxMinor] = result.max
      assert.ok(minMajor < maxMajor || (minMajor === maxMajor && (maxMinor === undefined || minMinor <= maxMinor)), JSON.stringify(result))
    }), { numRuns: 2000 })
  })
})

describe('declaredRangeOfText', () => {
  test('reads the text, byte-order mark and all', () => {
    assert.deepEqual(declaredRangeOfText('\uFEFF{"pack":{"pack_format":34,"supported_formats":[34,46],"description":"§aHi"}}'), range([34, 0], [46]))
  })

  test('text that is not JSON declares nothing', () => {
    for (const text of ['', '{ not json', '{"pack":{"pack_format":48,}}', '\u0000', '['.repeat(100_000)]) {
      assert.equal(declaredRangeOfText(text), null, JSON.stringify(text.slice(0, 20)))
    }
  })

  test('deep nesting within the 64 KiB a pack.mcmeta may have is read, not a crash', () => {
    const deep = `{"pack":{"pack_format":48,"description":${'['.repeat(30_000)}${']'.repeat(30_000)}}}`
    assert.deepEqual(declaredRangeOfText(deep), range([48, 0], [48]))
  })
})
