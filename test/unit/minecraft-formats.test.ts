// The table of pack formats per release (src/minecraft/formats.ts) and the
// names it gives a declared range (src/minecraft/releases.ts).
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { DATA_PACK_FORMATS, PACK_FORMATS, RELEASES, RESOURCE_PACK_FORMATS } from '../../src/minecraft/formats.js'
import { describeDeclaration, formatsText } from '../../src/minecraft/releases.js'
import type { FormatRange, PackDeclaration, PackKind } from '../../src/minecraft/declaration.js'

/** "1.21.10" → [1, 21, 10], "26.1" → [26, 1]: release names compare by their numbers. */
function versionNumbers(name: string): number[] {
  assert.match(name, /^\d+(\.\d+){1,2}$/, `a release name: ${name}`)
  return name.split('.').map(Number)
}

function compareVersions(a: string, b: string): number {
  const x = versionNumbers(a)
  const y = versionNumbers(b)
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const d = (x[i] ?? 0) - (y[i] ?? 0)
    if (d !== 0) return d
  }
  return 0
}

describe('the table', () => {
  for (const kind of ['resource', 'data'] as const) {
    test(`${kind} packs: formats rise with releases, each release once`, () => {
      const rows = PACK_FORMATS[kind]
      for (let i = 1; i < rows.length; i++) {
        const [a, b] = [rows[i - 1]!.format, rows[i]!.format]
        assert.ok(a[0] < b[0] || (a[0] === b[0] && a[1] < b[1]), `format ${b.join('.')} after ${a.join('.')}`)
      }
      const names = RELEASES[kind].map((r) => r.name)
      assert.equal(new Set(names).size, names.length, 'no release twice')
      for (let i = 1; i < names.length; i++) assert.ok(compareVersions(names[i - 1]!, names[i]!) < 0, `${names[i]} after ${names[i - 1]}`)
      for (const row of rows) {
        assert.ok(row.releases.length > 0)
        assert.ok(row.format.every((n) => Number.isInteger(n) && n >= 0))
        // Minor numbers began with 1.21.9 (25w31a).
        if (row.format[1] !== 0) assert.ok(compareVersions(row.releases[0]!, '1.21.9') >= 0, row.releases[0])
      }
    })
  }

  test('data packs exist from 1.13 on, for the same releases as resource packs', () => {
    const resource = RELEASES.resource.map((r) => r.name)
    const data = RELEASES.data.map((r) => r.name)
    assert.equal(data[0], '1.13')
    assert.deepEqual(resource.slice(resource.indexOf('1.13')), data)
  })

  test('known rows (the wiki and the games\' version.json)', () => {
    const formatOf = (rows: typeof RESOURCE_PACK_FORMATS, release: string) => rows.find((row) => row.releases.includes(release))?.format
    assert.deepEqual(formatOf(RESOURCE_PACK_FORMATS, '1.8.9'), [1, 0])
    assert.deepEqual(formatOf(RESOURCE_PACK_FORMATS, '1.21.4'), [46, 0])
    assert.deepEqual(formatOf(RESOURCE_PACK_FORMATS, '1.21.8'), [64, 0])
    assert.deepEqual(formatOf(RESOURCE_PACK_FORMATS, '1.21.11'), [75, 0])
    assert.deepEqual(formatOf(DATA_PACK_FORMATS, '1.18.2'), [9, 0])
    assert.deepEqual(formatOf(DATA_PACK_FORMATS, '1.21'), [48, 0])
    assert.deepEqual(formatOf(DATA_PACK_FORMATS, '1.21.11'), [94, 1])
    assert.deepEqual(formatOf(DATA_PACK_FORMATS, '26.2'), [107, 1])
    // The newest release found, for both kinds.
    assert.equal(RELEASES.resource.at(-1)!.name, '26.3')
    assert.equal(RELEASES.data.at(-1)!.name, '26.3')
  })
})

const declared = (kind: PackKind | null, min: [number, number], max: [number] | [number, number]): PackDeclaration => ({ kind, range: { min, max } })

describe('describeDeclaration', () => {
  const cases: [string, PackDeclaration, number | null, string[], string][] = [
    ['resource 46', declared('resource', [46, 0], [46]), 46, ['1.21.4'], 'Minecraft 1.21.4'],
    ['resource 64: two releases', declared('resource', [64, 0], [64]), 64, ['1.21.7', '1.21.8'], 'Minecraft 1.21.7 – 1.21.8'],
    ['resource 34 – 46', declared('resource', [34, 0], [46]), 34, ['1.21', '1.21.1', '1.21.2', '1.21.3', '1.21.4'], 'Minecraft 1.21 – 1.21.4'],
    ['data [94, 1]', declared('data', [94, 1], [94, 1]), 94, ['1.21.11'], 'Minecraft 1.21.11'],
    ['data 94 – 94: a max without minor takes 94.1', declared('data', [94, 0], [94]), 94, ['1.21.11'], 'Minecraft 1.21.11'],
    ['data 88 – [101, 1]: across minors and the new numbering', declared('data', [88, 0], [101, 1]), 101,
      ['1.21.9', '1.21.10', '1.21.11', '26.1', '26.1.1', '26.1.2'], 'Minecraft 1.21.9 – 26.1.2'],
    ['data 88 – [101, 0]: 26.1 is 101.1, past the max', declared('data', [88, 0], [101, 0]), 101,
      ['1.21.9', '1.21.10', '1.21.11'], 'Minecraft 1.21.9 – 1.21.11'],
    ['data [94, 2] – 94: no release has 94.2 or later', declared('data', [94, 2], [94]), 94, [], 'pack formats 94.2 – 94.* (unknown Minecraft version)'],
    ['resource 99: unknown', declared('resource', [99, 0], [99]), 99, [], 'pack format 99 (unknown Minecraft version)'],
    ['data 99 – 100: unknown', declared('data', [99, 0], [100]), 100, [], 'pack formats 99 – 100 (unknown Minecraft version)'],
    ['resource 26.3', declared('resource', [97, 1], [97, 1]), null, ['26.3'], 'Minecraft 26.3'],
    // Releases before 1.20.2 read pack_format alone, exactly.
    ['resource 4 – 34 with pack_format 34: 1.13 – 1.20.1 call it too new', declared('resource', [4, 0], [34]), 34,
      ['1.20.2', '1.20.3', '1.20.4', '1.20.5', '1.20.6', '1.21', '1.21.1'], 'Minecraft 1.20.2 – 1.21.1'],
    ['resource 4 – 34 with pack_format 6: two runs', declared('resource', [4, 0], [34]), 6,
      ['1.16.2', '1.16.3', '1.16.4', '1.16.5', '1.20.2', '1.20.3', '1.20.4', '1.20.5', '1.20.6', '1.21', '1.21.1'],
      'Minecraft 1.16.2 – 1.16.5, 1.20.2 – 1.21.1'],
    ['data 15 – 18 with pack_format 15', declared('data', [15, 0], [18]), 15, ['1.20', '1.20.1', '1.20.2'], 'Minecraft 1.20 – 1.20.2'],
    // No kind (both folders, or neither): named only when both kinds agree.
    ['no kind, 15: both kinds say 1.20 – 1.20.1', declared(null, [15, 0], [15]), 15, ['1.20', '1.20.1'], 'Minecraft 1.20 – 1.20.1'],
    ['no kind, 61: only data packs have it', declared(null, [61, 0], [61]), 61, [], 'pack format 61'],
    ['no kind, 99: neither kind knows it', declared(null, [99, 0], [99]), 99, [], 'pack format 99 (unknown Minecraft version)'],
    ['no kind, 34 – 46: the kinds disagree', declared(null, [34, 0], [46]), 34, [], 'pack formats 34 – 46'],
    // Rows from before declarations were kept: the pack_format alone.
    ['no declaration, no pack_format', { kind: null, range: null }, null, [], 'pack format unknown'],
    ['no declaration, pack_format 61', { kind: null, range: null }, 61, [], 'pack format 61'],
    ['no declaration, pack_format 15', { kind: null, range: null }, 15, ['1.20', '1.20.1'], 'Minecraft 1.20 – 1.20.1'],
    ['no declaration, pack_format 99', { kind: null, range: null }, 99, [], 'pack format 99 (unknown Minecraft version)'],
    ['a kind but no range, pack_format 61', { kind: 'data', range: null }, 61, ['1.21.4'], 'Minecraft 1.21.4'],
    ['a pack_format that is no format', { kind: 'data', range: null }, -3, [], 'pack format -3'],
  ]
  for (const [name, declaration, packFormat, releases, label] of cases) {
    test(name, () => assert.deepEqual(describeDeclaration(declaration, packFormat), { releases, label }))
  }

  test('every release of the table is found by its own format, and only the releases of that format', () => {
    for (const kind of ['resource', 'data'] as const) {
      for (const row of PACK_FORMATS[kind]) {
        const { releases } = describeDeclaration(declared(kind, [...row.format], [...row.format]), row.format[0])
        assert.deepEqual(releases, row.releases, `${kind} ${row.format.join('.')}`)
      }
    }
  })
})

describe('formatsText', () => {
  const cases: [FormatRange, string][] = [
    [{ min: [99, 0], max: [99] }, 'pack format 99'],
    [{ min: [99, 0], max: [99, 0] }, 'pack format 99'],
    [{ min: [99, 1], max: [99, 1] }, 'pack format 99.1'],
    [{ min: [99, 1], max: [99] }, 'pack formats 99.1 – 99.*'],
    [{ min: [90, 0], max: [99, 2] }, 'pack formats 90 – 99.2'],
    [{ min: [90, 3], max: [99] }, 'pack formats 90.3 – 99'],
  ]
  for (const [range, text] of cases) test(text, () => assert.equal(formatsText(range), text))
})
