import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { packFormatOf, packFormatOfText } from '../../src/uploads/packmeta.js'

describe('packFormatOf', () => {
  const cases: [string, unknown, number | null][] = [
    ['integer pack_format', { pack: { pack_format: 48, description: 'x' } }, 48],
    ['pack_format wins over max_format', { pack: { pack_format: 34, max_format: 99 } }, 34],
    ['newer style, integer max_format', { pack: { min_format: 88, max_format: 94 } }, 94],
    ['newer style, [major, minor] max_format', { pack: { min_format: [88, 0], max_format: [94, 1] } }, 94],
    ['newer style, [major] max_format', { pack: { max_format: [90] } }, 90],
    ['non-integer pack_format falls to max_format', { pack: { pack_format: 48.5, max_format: 61 } }, 61],
    ['string pack_format falls to max_format', { pack: { pack_format: '48', max_format: [61, 2] } }, 61],
    ['non-integer pack_format and no max_format', { pack: { pack_format: 'new' } }, null],
    ['min_format alone is not enough', { pack: { min_format: 88 } }, null],
    ['max_format of the wrong shape', { pack: { max_format: ['94', 1] } }, null],
    ['empty max_format array', { pack: { max_format: [] } }, null],
    ['max_format as an object', { pack: { max_format: { major: 94 } } }, null],
    ['no pack key', { meta: { pack_format: 48 } }, null],
    ['pack is not an object', { pack: 48 }, null],
    ['pack is an array', { pack: [48] }, null],
    ['null', null, null],
    ['an array at the top', [{ pack: { pack_format: 48 } }], null],
    ['a number at the top', 48, null],
    ['pack_format past a 32-bit integer falls to max_format', { pack: { pack_format: 1e300, max_format: [94, 1] } }, 94],
    ['pack_format and max_format past a 32-bit integer', { pack: { pack_format: 2 ** 31, max_format: [-(2 ** 31) - 1] } }, null],
    ['the 32-bit bounds themselves', { pack: { pack_format: -(2 ** 31), max_format: 2 ** 31 - 1 } }, -(2 ** 31)],
    ['the largest 32-bit max_format', { pack: { max_format: 2 ** 31 - 1 } }, 2 ** 31 - 1],
  ]
  for (const [name, mcmeta, expected] of cases) {
    test(name, () => assert.equal(packFormatOf(mcmeta), expected))
  }
})

describe('packFormatOfText', () => {
  test('parses JSON text', () => {
    assert.equal(packFormatOfText('{"pack":{"pack_format":15,"description":"§aHi"}}'), 15)
  })

  test('tolerates a UTF-8 byte-order mark', () => {
    const withBom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"pack":{"pack_format":26}}')]).toString('utf8')
    assert.equal(packFormatOfText(withBom), 26)
  })

  test('invalid JSON is null, never an error', () => {
    for (const text of ['{ not json', '', '{"pack":{"pack_format":48,}}', 'null', '\u0000\u0001']) {
      assert.equal(packFormatOfText(text), null, JSON.stringify(text))
    }
  })

  test('newer-style text', () => {
    assert.equal(packFormatOfText(JSON.stringify({ pack: { description: 'd', min_format: [88, 0], max_format: [94, 1] } })), 94)
  })
})
