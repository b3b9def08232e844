import assert from 'node:assert/strict'
import { test } from 'node:test'
import { MAX_SLUG_LENGTH, SLUG_PATTERN, slugify } from '../../src/packs/slugs.js'

test('lower-cases and joins words with single dashes', () => {
  assert.equal(slugify('My Cool Pack'), 'my-cool-pack')
  assert.equal(slugify('  Hello,   World!!  '), 'hello-world')
  assert.equal(slugify('a -- b'), 'a-b')
  assert.equal(slugify('---edge---'), 'edge')
})

test('keeps digits and underscores', () => {
  assert.equal(slugify('Pack_v2 2024'), 'pack_v2-2024')
})

test('drops diacritics instead of the letters that carry them', () => {
  assert.equal(slugify('Café Ünïcode Ñandú'), 'cafe-unicode-nandu')
  assert.equal(slugify('Straße Ærø Łódź'), 'strasse-aero-lodz')
  // Full-width forms fold to ASCII under NFKD.
  assert.equal(slugify('ＡＢＣ１２３'), 'abc123')
})

test('characters without a Latin form become separators', () => {
  assert.equal(slugify('Minecraft 日本語 Pack'), 'minecraft-pack')
  assert.equal(slugify('emoji 🎮 pack'), 'emoji-pack')
})

test('a title with no letter or digit gives an empty slug', () => {
  assert.equal(slugify(''), '')
  assert.equal(slugify('!!! ???'), '')
  assert.equal(slugify('日本語'), '')
  assert.equal(slugify('___'), '')
})

test('is at most 64 characters and never ends with a dash after cutting', () => {
  const long = slugify('word '.repeat(40))
  assert.ok(long.length <= MAX_SLUG_LENGTH)
  assert.ok(!long.endsWith('-'))
  assert.equal(slugify('x'.repeat(100)), 'x'.repeat(64))
  // 63 characters then a separator: the cut lands right after the dash.
  assert.equal(slugify(`${'a'.repeat(63)} bcd`), 'a'.repeat(63))
})

test('every result matches the pack_id pattern', () => {
  for (const title of ['Ünïcödé', 'a/b\\c', 'tab\there', 'new\nline', 'dots.and.more', '<script>alert(1)</script>']) {
    const slug = slugify(title)
    assert.match(slug, SLUG_PATTERN, title)
  }
  assert.equal(slugify('a/b\\c'), 'a-b-c')
  assert.equal(slugify('<script>alert(1)</script>'), 'script-alert-1-script')
})
