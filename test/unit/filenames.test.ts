import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { contentDisposition, sanitizeFilename } from '../../src/files/filenames.js'

describe('sanitizeFilename', () => {
  const cases: [string | undefined, string][] = [
    ['pack.zip', 'pack.zip'],
    ['../../evil\u0007.png', 'evil.png'],
    ['/etc/passwd', 'passwd'],
    ['C:\\Users\\me\\Desktop\\shot.png', 'shot.png'],
    ['a/b\\c.txt', 'c.txt'],
    ['line\r\nbreak.png', 'linebreak.png'],
    ['tab\there.png', 'tabhere.png'],
    ['nul\u0000byte.png', 'nulbyte.png'],
    ['c1\u0085control.png', 'c1control.png'],
    // A right-to-left override makes "photo\u202Egnp.exe" display as "photoexe.png".
    ['photo\u202egnp.exe', 'photognp.exe'],
    ['\u2066isolate\u2069.png', 'isolate.png'],
    ['  spaced.png  ', 'spaced.png'],
    ['Grüße ✓.png', 'Grüße ✓.png'],
    ['..', 'file'],
    ['.', 'file'],
    ['dir/', 'dir'],
    ['', 'file'],
    [undefined, 'file'],
    ['\u0001\u0002', 'file'],
  ]
  for (const [raw, expected] of cases) {
    test(`${JSON.stringify(raw)} -> ${JSON.stringify(expected)}`, () => {
      assert.equal(sanitizeFilename(raw), expected)
    })
  }

  test('the fallback can be chosen', () => {
    assert.equal(sanitizeFilename('../', 'upload'), 'upload')
  })

  test('long names are cut to 200 characters', () => {
    const name = sanitizeFilename(`${'a'.repeat(300)}.png`)
    assert.equal(name.length, 200)
  })
})

describe('contentDisposition', () => {
  test('ASCII names: both parameters carry the name', () => {
    assert.equal(contentDisposition('attachment', 'pack-1.2.zip'), `attachment; filename="pack-1.2.zip"; filename*=UTF-8''pack-1.2.zip`)
    assert.equal(contentDisposition('inline', 'a.png'), `inline; filename="a.png"; filename*=UTF-8''a.png`)
  })

  test('non-ASCII names: RFC 5987 UTF-8 percent-encoding and an ASCII fallback', () => {
    const value = contentDisposition('attachment', 'Grüße ✓.zip')
    assert.ok(value.includes(`filename*=UTF-8''Gr%C3%BC%C3%9Fe%20%E2%9C%93.zip`), value)
    // Accents are dropped rather than replaced; what has no ASCII form becomes "_".
    assert.ok(value.includes('filename="Gru_e _.zip"'), value)
    assert.equal(decodeURIComponent(/filename\*=UTF-8''(.*)$/.exec(value)![1]!), 'Grüße ✓.zip')
  })

  test('quotes and backslashes cannot break out of the quoted fallback', () => {
    const value = contentDisposition('attachment', 'a"b\\c.png')
    assert.ok(value.includes('filename="a_b_c.png"'), value)
    assert.ok(value.includes(`filename*=UTF-8''a%22b%5Cc.png`), value)
  })

  test("characters RFC 5987 does not allow unencoded are encoded: ' ( ) *", () => {
    const value = contentDisposition('attachment', "it's (a) *pack*.zip")
    assert.ok(value.endsWith(`filename*=UTF-8''it%27s%20%28a%29%20%2Apack%2A.zip`), value)
  })

  test('the result is a valid header value (no CR, LF or non-Latin-1)', () => {
    for (const name of ['x\r\ny.png', '日本語.zip', 'emoji 😀.png']) {
      const value = contentDisposition('inline', name)
      assert.ok(/^[\x20-\x7e]+$/.test(value), value)
    }
  })
})
