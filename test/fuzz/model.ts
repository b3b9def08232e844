// What one fuzz case is (a plain value fast-check can generate, shrink and
// print), the arbitraries that make them, and render(), which turns a case
// into a request against the seeded site. Cases name the site's real ids,
// tokens and passwords symbolically ({ ref }) so they stay printable and
// the same case means the same thing on every backend.
import fc from 'fast-check'
import type { BodyKind, RouteInfo } from './routes.js'

export const REF_NAMES = [
  'fileThumb', 'fileVersion', 'fileVersionOld', 'fileMedia', 'fileVideo', 'fileBob', 'filePending', 'fileEtag', 'latestEtag',
  'namespace', 'namespaceUpper', 'packId', 'packIdUpper', 'galleryPackId', 'bobNamespace', 'bobPackId',
  'draftComplete', 'draftPartial', 'draftBob', 'uploadPending', 'uploadInDraft', 'uploadBob', 'tokenSpare', 'tokenBob',
  'aliceName', 'alicePassword', 'aliceToken', 'bobToken', 'staffName', 'staffToken', 'masterPassword', 'csrfAlice', 'gateCookie',
  'tagName', 'categoryKey', 'versionName', 'assetName',
] as const
export type RefName = (typeof REF_NAMES)[number]

export const BLOB_NAMES = [
  'png', 'jpeg', 'gif', 'webp', 'mp4', 'webm', 'zip', 'zipNoMeta', 'zipBadMeta', 'zipOddFormat', 'zipNested', 'zipManyEntries',
  'notZip', 'text', 'empty', 'big',
] as const
export type BlobName = (typeof BLOB_NAMES)[number]

/**
 * A piece of text: one of the site's values, any JS string (lone surrogates
 * and NUL included; percent-encoded as WTF-8 in a URL), or raw characters
 * pasted into a URL or form as they are (%ff, %00, .., an encoded slash).
 */
export type Text = { ref: RefName } | { text: string } | { raw: string }

type Json = null | boolean | number | string | Json[] | { [key: string]: Json } | { $ref: RefName }

export type JsonText =
  | { kind: 'deep'; depth: number; open: '[' | '{"a":'; inside: 'data' | 'root' | 'name' }
  | { kind: 'proto'; key: '__proto__' | 'constructor'; inside: 'data' | 'root' }
  | { kind: 'literal'; text: string }
  | { kind: 'bytes'; bytes: number[] }

export interface PartSpec {
  name: Text
  filename?: Text
  contentType?: string
  disposition: 'normal' | 'missing' | 'no-name' | 'star' | 'unquoted' | 'folded'
  value: { blob: BlobName } | { text: Text }
}

export interface MultipartSpec {
  boundary: string
  declared: 'same' | 'quoted' | 'missing' | 'other' | 'twice'
  eol: '\r\n' | '\n'
  preamble: boolean
  parts: PartSpec[]
  ending: 'close' | 'none' | 'garbage' | 'early'
  /** Keep only this fraction of the bytes: a body cut off on the way. */
  cut?: number
}

export type Body =
  | { kind: 'none' }
  | { kind: 'json'; value: Json }
  | { kind: 'jsonText'; text: JsonText }
  | { kind: 'form'; pairs: [Text, Text][] }
  | { kind: 'multipart'; spec: MultipartSpec }
  | { kind: 'bytes'; bytes: number[]; contentType: string }

export interface Creds {
  gate: 'none' | 'header' | 'wrong' | 'empty' | 'cookie' | 'bad-cookie' | 'both'
  user: 'none' | 'alice' | 'bob' | 'staff' | 'alice-session' | 'staff-session' | 'stale-session' | 'bad-token' | 'unknown-user'
  /** Replaces the Authorization header the user choice would send. */
  authorization?: Text[]
  csrf: 'right' | 'none' | 'wrong' | 'staff'
}

export interface Headers {
  cookie?: { mode: 'append' | 'replace' | 'duplicate'; value: Text[] }
  range?: string
  ifRange?: string
  ifNoneMatch?: Text[]
  host?: string
  contentType?: string
  contentLength?: string
  accept?: string
  forwardedFor?: string
  other?: [string, string][]
}

export type PathShape = 'template' | 'double-slash' | 'extra-segment' | 'no-last' | 'upper' | 'dot-segment' | 'random'

export interface FuzzCase {
  route: number
  method: string
  params: Text[][]
  slash: boolean
  shape: PathShape
  random: Text[]
  query: [Text, Text | null][]
  rawQuery?: string
  creds: Creds
  headers: Headers
  body: Body
  address: string
}

// ---------------------------------------------------------------------------
// Arbitraries

const w = <T>(weight: number, arbitrary: fc.Arbitrary<T>) => ({ weight, arbitrary })
/**
 * Builds an arbitrary once per key and hands the same one out after: building
 * one (a string arbitrary's tables, a record of dozens) costs far more than a
 * draw from it, and an arbitrary keeps nothing between draws, so the cases a
 * seed gives are the same either way.
 */
function cached<T>(cache: Map<string, fc.Arbitrary<T>>, key: string, build: () => fc.Arbitrary<T>): fc.Arbitrary<T> {
  let arbitrary = cache.get(key)
  if (arbitrary === undefined) cache.set(key, (arbitrary = build()))
  return arbitrary
}
/** Present now and then: most cases should be ordinary in most respects, so the odd part gets past the rest. */
const sometimes = <T>(percent: number, arbitrary: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> =>
  fc.oneof(w(100 - percent, fc.constant(undefined)), w(percent, arbitrary))

const ref = (...names: RefName[]): fc.Arbitrary<Text> => fc.constantFrom(...names).map((name) => ({ ref: name }))
const raw = (...values: string[]): fc.Arbitrary<Text> => fc.constantFrom(...values).map((value) => ({ raw: value }))
const text = (...values: string[]): fc.Arbitrary<Text> => fc.constantFrom(...values).map((value) => ({ text: value }))

const NUMBERS = ['1', '0', '-1', '2', '100', '101', '1e300', '-1e300', '1e-300', 'NaN', 'Infinity', '-Infinity', '-0', '1.5', '0x10',
  '9007199254740993', '99999999999999999999999', '18446744073709551616', ' 1', '1 ', '+1', '١', '1_000', '']
const ADVERSARIAL = ['', ' ', '\u0000', 'a\u0000b', '\uD800', '\uDFFF', 'x\uDBFF', '\uFFFE', '\uFEFF', '\u202E', 'e\u0301', '😀',
  '..', '.', '/', '\\', '%', '__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', '<script>alert(1)</script>',
  "'", '"', '\r\n', '\n', '\t', 'null', 'undefined', 'true', '[]', '{}', '$ne', 'SELECT 1', "'; drop table packs; --", 'a'.repeat(65)]
const RAW_PIECES = ['%00', '%ff', '%FF', '%ED%A0%80', '%ED%BF%BF', '%C0%AF', '%C0%80', '%F4%90%80%80', '%E2%82', '%2F', '%2f', '%5C',
  '%2e%2e', '..', '.', '%', '%%', '%zz', '%0', '%F0%9F%98%80', '+', '%20', ';', '%3B', '%0a', '%0d%0a', '%09', '%25', '%u0041', '%23',
  '%3F', '&', '=', '~', '!', "'", '(', ')', '*', '%7F', '%C3%A9']

const huge = (context: 'header' | 'body'): fc.Arbitrary<Text> =>
  fc.tuple(fc.constantFrom(...(context === 'header' ? [256, 1000, 4000, 12_000] : [256, 1000, 4000, 65_000, 300_000])), fc.constantFrom('a', 'é', '\u0000', '😀', '%'))
    .map(([length, unit]) => ({ text: unit.repeat(Math.max(1, Math.floor(length / unit.length))) }))

const uuidish: fc.Arbitrary<Text> = fc.oneof(
  fc.uuid().map((u) => ({ text: u })),
  fc.uuid().map((u) => ({ text: u.toUpperCase() })),
  fc.tuple(fc.uuid(), fc.nat(35), fc.constantFrom('g', 'z', '-', '', '00', '\u0000', 'é')).map(([u, at, c]) => ({ text: u.slice(0, at) + c + u.slice(at + 1) })),
  fc.uuid().map((u) => ({ text: u.replace(/-/g, '') })),
  fc.uuid().map((u) => ({ text: `{${u}}` })),
  fc.uuid().map((u) => ({ text: `${u}0` })),
  text('00000000-0000-0000-0000-000000000000', 'ffffffff-ffff-ffff-ffff-ffffffffffff'),
)

/**
 * fast-check's 'binary' string unit (any code point but a surrogate): the
 * same characters from the same random numbers, but a cheaper test of what it
 * can make. fc.string() runs that test over its sample strings when it is
 * built, and the library's own first maps all 1.1 million code points (1 to 2
 * CPU-seconds, in every run).
 */
class BinaryUnit extends fc.Arbitrary<string> {
  private readonly unit = fc.mapToConstant(
    { num: 0xd800, build: (i) => String.fromCodePoint(i) },
    { num: 0x110000 - 0xe000, build: (i) => String.fromCodePoint(0xe000 + i) },
  )

  generate(mrng: fc.Random, biasFactor: number | undefined): fc.Value<string> {
    return this.unit.generate(mrng, biasFactor)
  }

  canShrinkWithoutContext(value: unknown): value is string {
    if (typeof value !== 'string' || value.length === 0) return false
    const cp = value.codePointAt(0)!
    return String.fromCodePoint(cp) === value && (cp < 0xd800 || cp > 0xdfff)
  }

  shrink(value: string, context: unknown): fc.Stream<fc.Value<string>> {
    return this.unit.shrink(value, context)
  }
}
const binaryText = fc.string({ unit: new BinaryUnit(), maxLength: 24 }).map((s): Text => ({ text: s }))

const anyTexts = new Map<string, fc.Arbitrary<Text>>()
/** Any text at all, weighted toward the site's own values and known troublemakers. */
function anyText(context: 'header' | 'body'): fc.Arbitrary<Text> {
  return cached(anyTexts, context, () => fc.oneof(
    w(4, ref(...REF_NAMES)),
    w(2, uuidish),
    w(2, text(...NUMBERS)),
    w(3, text(...ADVERSARIAL)),
    w(2, raw(...RAW_PIECES)),
    w(2, fc.oneof(text('\u0000', 'a\u0000b', '\uD800', 'a\uDC00b', '\u0000\uD800'), raw('%00', 'a%00b', '%ED%A0%80', '%ff', '%C0%80'))),
    w(3, binaryText),
    w(2, fc.string({ unit: 'grapheme-ascii', maxLength: 24 }).map((s) => ({ text: s }))),
    w(1, huge(context)),
  ))
}

/** Values a field of this name is likely to hold (right, nearly right and wrong), before any text at all. */
// The value that gets a form past its first check, so what comes next is reached.
const RIGHT: Record<string, fc.Arbitrary<Text>> = {
  'POST /gate password': ref('masterPassword'),
  'POST /login password': ref('alicePassword'),
  'POST /login username': ref('aliceName'),
  'POST /settings/password current_password': ref('alicePassword'),
}

const values = new Map<string, fc.Arbitrary<Text>>()
function valueFor(name: string, context: 'header' | 'body', route?: RouteInfo): fc.Arbitrary<Text> {
  const rightKey = route && Object.hasOwn(RIGHT, `${route.method} ${route.path} ${name}`) ? `${route.method} ${route.path} ${name}` : ''
  return cached(values, `${context}\u0000${name}\u0000${rightKey}`, () => buildValueFor(name, context, rightKey))
}

function buildValueFor(name: string, context: 'header' | 'body', rightKey: string): fc.Arbitrary<Text> {
  if (rightKey) return fc.oneof(w(3, RIGHT[rightKey]!), w(1, valueFor(name, context)))
  const likely = ({
    draft: fc.oneof(ref('draftComplete', 'draftPartial', 'draftBob'), uuidish),
    draft_uuid: fc.oneof(ref('draftComplete', 'draftPartial', 'draftBob'), uuidish),
    kind: text('thumbnail', 'media', 'version', 'THUMBNAIL', 'avatar', ''),
    password: ref('masterPassword', 'alicePassword'),
    current_password: ref('alicePassword', 'masterPassword'),
    new_password: text('new-password-1', 'short', 'new-password-1\u0000'),
    new_password_repeat: text('new-password-1', 'other-password'),
    password_repeat: text('new-password-1', 'other-password'),
    username: fc.oneof(ref('aliceName', 'staffName'), text('ALICE', 'carol', 'a b', '', 'x'.repeat(33), 'new.user-1')),
    next: raw('/', '/packs/', '/%0a/x', '/%0d%0aSet-Cookie:x=1', '//evil.example', '/%2F%2Fevil.example', '/\\evil.example',
      '/%5Cevil.example', 'https://evil.example/', '/%09/evil.example', 'javascript:alert(1)', '/..%2F..%2F', '%00', '/%ff', '?x'),
    q: fc.oneof(ref('tagName', 'aliceName'), text('a', 'Fuzz', '%', '_', '\\', '*')),
    tag: ref('tagName'),
    category: ref('categoryKey'),
    page: text(...NUMBERS),
    per_page: text(...NUMBERS),
    expires_in_days: text(...NUMBERS, '3650', '3651', '36500'),
    version_name: fc.oneof(ref('versionName'), text('2.0.0', ' 1.1.0 ', '')),
    csrf_token: ref('csrfAlice'),
    download: text('1', '0', 'true', ''),
    name: text('laptop', ' ', '\u0007bell', 'x'.repeat(64), 'x'.repeat(65)),
    changed: text('1'),
    revoked: text('1'),
  } as Record<string, fc.Arbitrary<Text>>)
  // Where to go next is the open-redirect and header-injection surface: mostly hostile values.
  if (name === 'next') return fc.oneof(w(4, likely.next!), w(1, anyText(context)))
  // Own keys only: a generated field name may well be "constructor".
  return Object.hasOwn(likely, name) ? fc.oneof(w(3, likely[name]!), w(2, anyText(context))) : anyText(context)
}

function pathParam(name: string): fc.Arbitrary<Text[]> {
  const known = {
    file_id: ref('fileThumb', 'fileVersion', 'fileVersionOld', 'fileMedia', 'fileVideo', 'fileBob', 'filePending'),
    upload_uuid: ref('uploadPending', 'uploadInDraft', 'uploadBob'),
    token_id: ref('tokenSpare', 'tokenBob'),
    namespace: ref('namespace', 'namespaceUpper', 'bobNamespace'),
    pack_id: ref('packId', 'packIdUpper', 'galleryPackId', 'bobPackId'),
    draft: ref('draftComplete', 'draftPartial', 'draftBob'),
    name: ref('assetName'),
  } as Record<string, fc.Arbitrary<Text>>
  const likely = Object.hasOwn(known, name) ? known[name]! : anyText('header')
  return fc.oneof(
    w(6, likely.map((t) => [t])),
    w(2, uuidish.map((t) => [t])),
    w(4, fc.array(fc.oneof(likely, anyText('header'), raw(...RAW_PIECES)), { minLength: 1, maxLength: 3 })),
  )
}

// Up to the 1,500 of the issue's report (3 s there, cubic beyond): long enough to fail the time limit, short enough not to stall a run.
const RANGE_WS = fc.tuple(fc.constantFrom(' ', '\t'), fc.constantFrom(0, 1, 40, 300, 1500)).map(([c, n]) => c.repeat(n))
const rangeHeader: fc.Arbitrary<string> = fc.oneof(
  w(4, fc.tuple(fc.option(fc.nat(200)), fc.option(fc.nat(200))).map(([a, b]) => `bytes=${a ?? ''}-${b ?? ''}`)),
  w(3, fc.constantFrom('bytes=0-0', 'bytes=-1', 'bytes=-0', 'bytes=0-', 'bytes=1-0', 'bytes=0-1,2-3', 'bytes=-', 'bytes=--1',
    'bytes=1e3-', 'bytes=99999999999999999999999-', 'bytes=18446744073709551615-18446744073709551616', 'BYTES=0-0', 'bytes = 0-0',
    'bytes=0-0,', ',', 'items=0-1', 'bytes=0x10-', 'bytes=٠-١', 'bytes=\u00a00-1', 'bytes=0-0\u0000', 'bytes=-9007199254740993', '')),
  w(1, fc.nat({ max: 400 }).map((n) => `bytes=${Array.from({ length: n + 2 }, (_, i) => `${i}-${i}`).join(',')}`)),
  // Whitespace runs: backtracking regexes get slow on these.
  w(2, fc.tuple(RANGE_WS, RANGE_WS, RANGE_WS, RANGE_WS, fc.constantFrom('', 'x', '-', '1'))
    .map(([a, b, c, d, tail]) => `bytes=${a}0${b}-${c}1${d}${tail}`)),
  w(5, fc.tuple(RANGE_WS, RANGE_WS, fc.constantFrom('x', 'x', '', '9')).map(([a, b, tail]) => `bytes=${a}-${b}${tail}`)),
)

const etagList: fc.Arbitrary<Text[]> = fc.oneof(
  w(4, ref('latestEtag', 'fileEtag').map((t) => [t])),
  w(1, ref('latestEtag', 'fileEtag').map((t) => [{ raw: 'W/' }, t])),
  w(2, fc.constantFrom('*', '"', '""', '"""', 'W/', ',,,', '"a", *', 'W/"x",W/"y"', '"\u0000"', ' * ', 'W/W/"x"').map((s) => [{ raw: s }])),
  w(1, fc.tuple(ref('latestEtag', 'fileEtag'), fc.nat(600)).map(([t, n]) => [{ raw: '"x",'.repeat(n) }, t])),
  w(1, fc.nat(4000).map((n) => [{ raw: '"'.repeat(n) + 'W/'.repeat(n) }])),
  w(1, anyText('header').map((t) => [t])),
)

const hostHeader: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('localhost', 'localhost:80', '127.0.0.1:8000', 'evil.example', '[::1]', '[::1', ':99999', 'host:-1', 'ho st',
    'user@host', 'host/path', 'localhost, other', 'é.example', 'xn--', '.', '', 'LOCALHOST', 'a..b', 'host:'),
  fc.constantFrom(300, 2000, 12_000).map((n) => 'a'.repeat(n)),
  fc.domain(),
)

const BOUNDARY_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'()+_,-./:=?"
const boundary: fc.Arbitrary<string> = fc.oneof(
  w(6, fc.string({ unit: fc.constantFrom(...'abcdef0123456789'), minLength: 8, maxLength: 30 }).map((s) => `----fuzz${s}`)),
  w(4, fc.constantFrom(1, 70, 71, 256, 257, 300, 1000, 5000).map((n) => 'b'.repeat(n))),
  w(1, fc.string({ unit: fc.constantFrom(...BOUNDARY_CHARS), minLength: 1, maxLength: 70 })),
  w(1, fc.constantFrom('a b', '-', '--', '"', 'é', '\u0000x')),
)

const contentTypeHeader: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('application/json', 'application/json; charset=utf-8', 'application/json; charset=latin1', 'application/json; charset=utf-16',
    'APPLICATION/JSON', 'application/json;;;', 'application/vnd.api+json', 'text/plain', 'text/html', 'application/x-www-form-urlencoded',
    'multipart/form-data', 'multipart/form-data; boundary=', 'multipart/form-data; boundary=""', 'multipart/mixed; boundary=x',
    'application/octet-stream', '', ';', '*/*', 'application/x-www-form-urlencoded; charset=iso-8859-1'),
  boundary.map((b) => `multipart/form-data; boundary=${b}`),
  fc.nat(3000).map((n) => `application/json; ${'x=y;'.repeat(n)}`),
)

const cookieValue: fc.Arbitrary<Text[]> = fc.oneof(
  fc.constantFrom('packs_session', 'packs_session=', '=;=;', '%', 'packs_session=%ff', 'packs_gate="unterminated', 'packs_gate=\u00ff',
    'packs_session=packs_x; packs_session=packs_y', ';;;', 'a=b; a=c').map((s) => [{ raw: s }]),
  ref('gateCookie').map((t) => [{ raw: 'packs_gate=' }, t]),
  ref('gateCookie').map((t) => [{ raw: 'packs_gate=' }, t, { raw: 'x' }]),
  fc.nat(500).map((n) => [{ raw: Array.from({ length: n }, (_, i) => `c${i}=v`).join('; ') }]),
  fc.constantFrom(4000, 12_000).map((n) => [{ raw: `packs_session=${'s'.repeat(n)}` }]),
  anyText('header').map((t) => [{ raw: 'packs_session=' }, t]),
)

const authorization: fc.Arbitrary<Text[]> = fc.oneof(
  fc.constantFrom('Bearer a b c', 'Bearer', 'Bearer ', 'Basic YWxpY2U6cGFzc3dvcmQ=', 'bearer', 'Token abc', '', ' ', 'Bearer  ',
    'Bearer %00 %00', 'Bearer \u00e9 \u00e9').map((s) => [{ raw: s }]),
  ref('aliceToken', 'staffToken').map((t) => [{ raw: 'Bearer alice ' }, t]),
  ref('aliceToken').map((t) => [{ raw: 'bearer alice ' }, t]),
  ref('aliceToken').map((t) => [{ raw: 'Bearer ALICE ' }, t]),
  ref('aliceToken').map((t) => [{ raw: 'Bearer alice ' }, t, { raw: ' ' }]),
  ref('aliceToken').map((t) => [{ raw: 'Bearer  alice\t' }, t]),
  ref('aliceToken').map((t) => [{ raw: 'Bearer alice ' }, t, { raw: 'x' }]),
  ref('bobToken').map((t) => [{ raw: 'Bearer alice ' }, t]),
  fc.constantFrom(1000, 12_000).map((n) => [{ raw: `Bearer alice ${'t'.repeat(n)}` }]),
  fc.tuple(anyText('header'), anyText('header')).map(([a, b]) => [{ raw: 'Bearer ' }, a, { raw: ' ' }, b]),
  anyText('header').map((t) => [t]),
)

const creds: fc.Arbitrary<Creds> = fc.record({
  gate: fc.oneof(w(55, fc.constant('header' as const)), w(10, fc.constant('cookie' as const)), w(15, fc.constant('none' as const)),
    w(8, fc.constant('wrong' as const)), w(2, fc.constant('empty' as const)), w(5, fc.constant('bad-cookie' as const)), w(5, fc.constant('both' as const))),
  user: fc.oneof(w(30, fc.constant('none' as const)), w(28, fc.constant('alice' as const)), w(8, fc.constant('staff' as const)),
    w(7, fc.constant('bob' as const)), w(12, fc.constant('alice-session' as const)), w(4, fc.constant('staff-session' as const)),
    w(3, fc.constant('stale-session' as const)), w(5, fc.constant('bad-token' as const)), w(3, fc.constant('unknown-user' as const))),
  authorization: sometimes(12, authorization),
  csrf: fc.oneof(w(8, fc.constant('right' as const)), w(1, fc.constant('none' as const)), w(1, fc.constant('wrong' as const)), w(1, fc.constant('staff' as const))),
}, { requiredKeys: ['gate', 'user', 'csrf'] })

/** Conditional and range headers mostly where they mean something: files and the update-check. */
const headersFor = (route: RouteInfo): fc.Arbitrary<Headers> => fc.record({
  cookie: sometimes(10, fc.record({ mode: fc.constantFrom('append', 'replace', 'duplicate'), value: cookieValue })),
  range: sometimes(route.path.startsWith('/api/files') ? 50 : 4, rangeHeader),
  ifRange: sometimes(route.path.startsWith('/api/files') ? 15 : 2, fc.oneof(ref('fileEtag').map((t) => ('ref' in t ? `{${t.ref}}` : '')),
    fc.constantFrom('"x"', 'W/"x"', 'Thu, 01 Jan 1970 00:00:00 GMT', 'not a date', '', 'Sun, 06 Nov 2994 08:49:37 GMT'))),
  ifNoneMatch: sometimes(route.path.startsWith('/api/files') || route.path.endsWith('/latest') ? 40 : 6, etagList),
  host: sometimes(6, hostHeader),
  contentType: sometimes(8, contentTypeHeader),
  contentLength: sometimes(2, fc.constantFrom('0', '1', '-1', '1e3', '99999999999999999999', 'abc', '')),
  accept: sometimes(20, fc.constantFrom('text/html', 'application/json', '*/*', 'text/html;q=0', 'image/png', '', 'text/html, application/json')),
  forwardedFor: sometimes(3, fc.oneof(fc.ipV4(), fc.constantFrom('unknown', '', '1.1.1.1, 2.2.2.2', '::1', 'a'.repeat(2000)))),
  other: sometimes(5, fc.array(fc.tuple(
    fc.constantFrom('x-csrf-token', 'x-master-password', 'origin', 'referer', 'user-agent', 'accept-encoding', 'accept-language',
      'if-modified-since', 'if-match', 'expect', 'x-http-method-override', 'content-encoding', 'connection'),
    fc.oneof(fc.constantFrom('', 'gzip', 'chunked', '100-continue', 'close', 'null', 'https://evil.example', 'x'.repeat(8000)), fc.string({ maxLength: 20 })),
  ), { minLength: 1, maxLength: 3 })),
}, { requiredKeys: [] })

const jsonLeaf = (name: string): fc.Arbitrary<Json> => fc.oneof(
  w(5, valueFor(name, 'body').map(textToJson)),
  w(2, fc.constantFrom<Json>(null, true, false, 0, -1, 1.5, 1e300, -1e300, 2 ** 53 + 2, 3650, 3651, 1)),
  w(1, fc.array(valueFor(name, 'body').map(textToJson), { maxLength: 3 })),
  w(1, fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<Json>),
)
// A JSON value holds text as is; a raw piece (%ff) is text in JSON too.
function textToJson(t: Text): Json {
  return 'ref' in t ? { $ref: t.ref } : 'text' in t ? t.text : t.raw
}

const DRAFT_FIELDS = ['title', 'summary', 'category', 'description', 'tags', 'version_name', 'changelog', 'revision']
const draftData: fc.Arbitrary<Json> = fc.oneof(
  w(6, fc.dictionary(fc.oneof(fc.constantFrom(...DRAFT_FIELDS), fc.string({ maxLength: 8 })), fc.oneof(
    jsonLeaf('title'),
    fc.array(fc.oneof(ref('tagName').map(textToJson), fc.string({ maxLength: 10 }), fc.constant(5)), { maxLength: 5 }) as fc.Arbitrary<Json>,
  ), { maxKeys: 8 })),
  w(1, fc.constantFrom<Json>(null, 5, 'text', [], [1, 2], true)),
)

function jsonBody(route: RouteInfo): fc.Arbitrary<Json> {
  const fields = route.fields.length ? route.fields : ['draft', 'data', 'name']
  const member = (name: string): fc.Arbitrary<Json> => (name === 'data' ? draftData : jsonLeaf(name))
  return fc.oneof(
    w(8, fc.tuple(...fields.map((f) => sometimes(80, member(f))), fc.dictionary(fc.string({ maxLength: 10 }), jsonLeaf('x'), { maxKeys: 2 }))
      .map((values) => {
        const extra = values.pop() as Record<string, Json>
        const object: Record<string, Json> = {}
        fields.forEach((f, i) => { if (values[i] !== undefined) object[f] = values[i] as Json })
        return { ...extra, ...object }
      })),
    w(1, fc.jsonValue({ maxDepth: 4 }) as fc.Arbitrary<Json>),
    w(1, fc.constantFrom<Json>(null, 0, 'x', [], true)),
  )
}

const jsonText: fc.Arbitrary<JsonText> = fc.oneof(
  w(3, fc.record({
    kind: fc.constant('deep' as const),
    depth: fc.constantFrom(100, 3000, 5000, 10_000, 60_000),
    open: fc.constantFrom('[' as const, '{"a":' as const),
    inside: fc.constantFrom('data' as const, 'data' as const, 'root' as const, 'name' as const),
  })),
  w(2, fc.record({ kind: fc.constant('proto' as const), key: fc.constantFrom('__proto__' as const, 'constructor' as const), inside: fc.constantFrom('data' as const, 'root' as const) })),
  w(3, fc.record({
    kind: fc.constant('literal' as const),
    text: fc.constantFrom('', ' ', '{', '{"draft":', '[', 'null', '"x"', '{"draft":"a","draft":"b"}', '\uFEFF{}', '{"data":{}}garbage', '{"a":1e400}',
      '{"a":-0}', '{"a":"\\ud800"}', '{"a":"\\u0000"}', '{"draft":"\\u0000"}', '{"a":"\\x41"}', "{'a':1}", '{"a":01}', '{"a":NaN}', '{"a":[1,]}',
      `{"data":{"title":"${'x'.repeat(300_000)}"}}`),
  })),
  w(1, fc.record({ kind: fc.constant('bytes' as const), bytes: fc.array(fc.integer({ min: 0, max: 255 }), { maxLength: 40 }) })),
)

const partSpec = (route: RouteInfo): fc.Arbitrary<PartSpec> => {
  const names = route.fields.length ? route.fields : ['file', 'kind', 'draft_uuid']
  const name = fc.oneof(w(8, fc.constantFrom(...names).map((n) => ({ text: n }) as Text)), w(2, anyText('body')))
  return fc.record({
    name,
    filename: sometimes(50, fc.oneof(w(4, text('pack.zip', 'icon.png', 'clip.webm', '', '../../etc/passwd', 'a\u0000b.png', 'CON', '.zip')), w(1, anyText('body')))),
    contentType: sometimes(30, fc.constantFrom('image/png', 'application/zip', 'text/plain', '', 'image/png; charset=x', 'x/y/z')),
    disposition: fc.oneof(w(20, fc.constant('normal' as const)), w(1, fc.constantFrom('missing' as const, 'no-name' as const, 'star' as const, 'unquoted' as const, 'folded' as const))),
    value: fc.oneof(
      w(3, fc.oneof(w(30, fc.constantFrom(...BLOB_NAMES.filter((b) => b !== 'big'))), w(3, fc.constant('big' as const))).map((blob) => ({ blob }))),
      w(3, name.chain((n) => valueFor('text' in n ? n.text : 'x', 'body')).map((t) => ({ text: t }))),
    ),
  }, { requiredKeys: ['name', 'disposition', 'value'] })
}

/** A multipart body that is mostly right: the fields the route wants, usually with a file, then something off. */
const multipartSpec = (route: RouteInfo): fc.Arbitrary<MultipartSpec> => fc.record({
  boundary,
  declared: fc.oneof(w(20, fc.constant('same' as const)), w(1, fc.constantFrom('quoted' as const, 'missing' as const, 'other' as const, 'twice' as const))),
  eol: fc.oneof(w(20, fc.constant('\r\n' as const)), w(1, fc.constant('\n' as const))),
  preamble: fc.boolean(),
  parts: fc.oneof(w(12, fc.array(partSpec(route), { maxLength: 5 })), w(1, fc.array(partSpec(route), { minLength: 10, maxLength: 60 }))),
  ending: fc.oneof(w(15, fc.constant('close' as const)), w(1, fc.constantFrom('none' as const, 'garbage' as const, 'early' as const))),
  cut: sometimes(8, fc.double({ min: 0, max: 1, noNaN: true })),
}, { requiredKeys: ['boundary', 'declared', 'eol', 'preamble', 'parts', 'ending'] })

function bodyFor(route: RouteInfo): fc.Arbitrary<Body> {
  const none = fc.constant<Body>({ kind: 'none' })
  const json = jsonBody(route).map((value): Body => ({ kind: 'json', value }))
  const jsonRaw = jsonText.map((t): Body => ({ kind: 'jsonText', text: t }))
  const formFields = route.fields.length ? route.fields : ['password', 'next', 'csrf_token', 'name']
  const form = fc.tuple(
    fc.tuple(...formFields.map((n) => sometimes(85, valueFor(n, 'body', route).map((v): [Text, Text] => [{ text: n }, v])))),
    // Now and then a stray: a field given twice, or one nobody asked for.
    fc.oneof(w(4, fc.constant([])), w(1, fc.array(fc.oneof(
      fc.constantFrom(...formFields).chain((n) => valueFor(n, 'body').map((v): [Text, Text] => [{ text: n }, v])),
      fc.tuple(anyText('body'), anyText('body')),
    ), { minLength: 1, maxLength: 2 }))),
  ).map(([fields, strays]): Body => ({ kind: 'form', pairs: [...fields.filter((f) => f !== undefined), ...strays] }))
  const multi = multipartSpec(route).map((spec): Body => ({ kind: 'multipart', spec }))
  const bytes = fc.record({ bytes: fc.array(fc.integer({ min: 0, max: 255 }), { maxLength: 64 }), contentType: contentTypeHeader })
    .map(({ bytes, contentType }): Body => ({ kind: 'bytes', bytes, contentType }))
  const weights: Record<BodyKind, [number, number, number, number, number, number]> = {
    // none, json, jsonText, form, multipart, bytes
    none: [80, 5, 3, 4, 4, 4],
    json: [8, 50, 30, 4, 4, 4],
    form: [13, 12, 5, 60, 5, 5],
    multipart: [8, 5, 4, 5, 73, 5],
  }
  const [a, b, c, d, e, f] = weights[route.body]
  return fc.oneof(w(a, none), w(b, json), w(c, jsonRaw), w(d, form), w(e, multi), w(f, bytes))
}

const OTHER_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']
const QUERY_NAMES = ['next', 'page', 'per_page', 'q', 'tag', 'category', 'draft', 'download']

const cases = new WeakMap<RouteInfo[], Map<string, fc.Arbitrary<FuzzCase>>>()
function caseFor(routes: RouteInfo[], index: number): fc.Arbitrary<FuzzCase> {
  let byIndex = cases.get(routes)
  if (byIndex === undefined) cases.set(routes, (byIndex = new Map()))
  return cached(byIndex, String(index), () => buildCaseFor(routes, index))
}

function buildCaseFor(routes: RouteInfo[], index: number): fc.Arbitrary<FuzzCase> {
  const route = routes[index]!
  return fc.record({
    route: fc.constant(index),
    method: fc.oneof(w(9, fc.constant(route.method)), w(1, fc.constantFrom(...OTHER_METHODS))),
    params: route.params.join() === 'namespace,pack_id'
      ? fc.oneof(w(3, fc.constantFrom<[RefName, RefName]>(['namespace', 'packId'], ['namespaceUpper', 'packIdUpper'], ['namespace', 'galleryPackId'], ['bobNamespace', 'bobPackId'])
        .map(([namespace, pack]) => [[{ ref: namespace }], [{ ref: pack }]] as Text[][])), w(2, fc.tuple(...route.params.map(pathParam))))
      : fc.tuple(...route.params.map(pathParam)),
    slash: fc.boolean(),
    shape: fc.oneof(w(40, fc.constant('template' as const)),
      w(1, fc.constantFrom('double-slash' as const, 'extra-segment' as const, 'no-last' as const, 'upper' as const, 'dot-segment' as const)),
      w(2, fc.constant('random' as const))),
    random: fc.array(fc.oneof(text('api', 'packs', 'files', 'draft', 'uploads', 'tokens', 'assets', 'gate'), anyText('header')), { minLength: 1, maxLength: 5 }),
    query: fc.array(fc.oneof(
      w(6, fc.constantFrom(...(route.query.length ? route.query : QUERY_NAMES)).chain((q) =>
        fc.option(valueFor(q, 'header'), { freq: 12 }).map((v): [Text, Text | null] => [{ text: q }, v]))),
      w(2, fc.constantFrom(...QUERY_NAMES, '__proto__', 'a[b]', 'a[]', 'constructor').chain((q) =>
        valueFor(q, 'header').map((v): [Text, Text | null] => [{ text: q }, v]))),
      w(1, fc.tuple(anyText('header'), fc.option(anyText('header'), { freq: 12 }))),
    ), { maxLength: 4 }),
    rawQuery: sometimes(3, fc.constantFrom('?', '??', '?&&&=', '?=', '?%', '?a=%zz', '?a=%00', '?a=%ff', '?a=1&a=2&a=3', '?#', `?${'a=1&'.repeat(2000)}`)),
    creds,
    headers: headersFor(route),
    body: bodyFor(route),
    address: fc.oneof(w(8, fc.ipV4()), w(2, fc.constantFrom('127.0.0.1', '10.0.0.1', '::1', '::ffff:10.0.0.2'))),
  }, { requiredKeys: ['route', 'method', 'params', 'slash', 'shape', 'random', 'query', 'creds', 'headers', 'body', 'address'] })
}

/** How often a route is picked: routes that take a body or an id get most cases; HEAD twins and static files fewer. */
export function routeWeight(route: RouteInfo): number {
  if (route.method === 'HEAD' || route.path.startsWith('/api/docs') || route.path.startsWith('/assets')) return 1
  if (route.method !== 'GET') return route.api ? 8 : 5
  return route.api ? 4 : 2
}

export function fuzzCase(routes: RouteInfo[]): fc.Arbitrary<FuzzCase> {
  return fc.oneof(...routes.map((route, index) => w(routeWeight(route), fc.constant(index)))).chain((index) => caseFor(routes, index))
}

// ---------------------------------------------------------------------------
// Rendering

export interface RenderContext {
  routes: RouteInfo[]
  refs: Record<RefName, string>
  blobs: Record<BlobName, Buffer>
  sessions: { alice: { token: string; csrf: string }; staff: { token: string; csrf: string } }
}

export interface RenderedRequest {
  method: string
  url: string
  headers: Record<string, string | string[]>
  payload?: Buffer
  remoteAddress: string
}

/** A UTF-16 surrogate without its other half: where WTF-8 and the encoders of the platform part ways. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/** UTF-8, except that a lone surrogate is encoded as its three bytes (WTF-8), as a careless client would. */
export function wtf8(s: string): Buffer {
  // Without a lone surrogate WTF-8 is UTF-8: the platform's encoder, not a byte at a time (texts run to 300,000 characters).
  if (!LONE_SURROGATE.test(s)) return Buffer.from(s, 'utf8')
  const bytes: number[] = []
  for (let i = 0; i < s.length; i++) {
    let cp = s.charCodeAt(i)
    if (cp >= 0xd800 && cp <= 0xdbff && i + 1 < s.length) {
      const low = s.charCodeAt(i + 1)
      if (low >= 0xdc00 && low <= 0xdfff) {
        cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00)
        i++
      }
    }
    if (cp < 0x80) bytes.push(cp)
    else if (cp < 0x800) bytes.push(0xc0 | (cp >> 6), 0x80 | (cp & 63))
    else if (cp < 0x10000) bytes.push(0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 63), 0x80 | (cp & 63))
    else bytes.push(0xf0 | (cp >> 18), 0x80 | ((cp >> 12) & 63), 0x80 | ((cp >> 6) & 63), 0x80 | (cp & 63))
  }
  return Buffer.from(bytes)
}

/** Each byte as it goes in a URL: the unreserved characters of RFC 3986 as they are, any other as %XX. */
const PERCENT = Array.from({ length: 256 }, (_, byte) => {
  const c = String.fromCharCode(byte)
  return /[A-Za-z0-9\-._~]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`
})

function percentEncode(s: string): string {
  // encodeURIComponent escapes the same bytes the same way, but for !'()* (and throws on a lone surrogate).
  if (!LONE_SURROGATE.test(s)) return encodeURIComponent(s).replace(/[!'()*]/g, (c) => PERCENT[c.charCodeAt(0)]!)
  let out = ''
  for (const byte of wtf8(s)) out += PERCENT[byte]!
  return out
}

/** What a header can carry on the wire: bytes as Latin-1, without NUL, CR or LF (the raw-socket pass sends those). */
function headerSafe(s: string): string {
  return wtf8(s).toString('latin1').replace(/[\u0000\r\n]/g, '')
}

function resolve(t: Text, ctx: RenderContext, context: 'url' | 'plain'): string {
  if ('ref' in t) return context === 'url' ? percentEncode(ctx.refs[t.ref]) : ctx.refs[t.ref]
  if ('raw' in t) return t.raw
  return context === 'url' ? percentEncode(t.text) : t.text
}
const joinUrl = (pieces: Text[], ctx: RenderContext) => pieces.map((p) => resolve(p, ctx, 'url')).join('')
const joinPlain = (pieces: Text[], ctx: RenderContext) => pieces.map((p) => resolve(p, ctx, 'plain')).join('')

function renderPath(c: FuzzCase, ctx: RenderContext): string {
  const route = ctx.routes[c.route]!
  if (c.shape === 'random') return `/${c.random.map((t) => resolve(t, ctx, 'url')).join('/')}${c.slash ? '/' : ''}`
  let i = 0
  let path = route.path.split('/').map((segment) => (segment.startsWith(':') || segment === '*' ? joinUrl(c.params[i++] ?? [], ctx) : segment)).join('/')
  if (c.slash && !path.endsWith('/')) path += '/'
  switch (c.shape) {
    case 'double-slash': return path.replace(/\//g, '//')
    case 'extra-segment': return `${path.replace(/\/$/, '')}/extra/`
    case 'no-last': return path.replace(/\/[^/]*\/?$/, '/')
    case 'upper': return path.toUpperCase()
    case 'dot-segment': return path.replace(/^\/([^/]*)/, '/$1/x/..')
    default: return path
  }
}

function renderQuery(c: FuzzCase, ctx: RenderContext): string {
  const pairs = c.query.map(([k, v]) => (v === null ? joinUrl([k], ctx) : `${joinUrl([k], ctx)}=${joinUrl([v], ctx)}`))
  const query = pairs.length ? `?${pairs.join('&')}` : ''
  return c.rawQuery === undefined ? query : query ? `${query}&${c.rawQuery.slice(1)}` : c.rawQuery
}

function resolveJson(value: Json, ctx: RenderContext): unknown {
  if (Array.isArray(value)) return value.map((v) => resolveJson(v, ctx))
  if (value !== null && typeof value === 'object') {
    if ('$ref' in value && typeof value.$ref === 'string' && (REF_NAMES as readonly string[]).includes(value.$ref)) return ctx.refs[value.$ref as RefName]
    // defineProperty, so a "__proto__" member generated by fc.jsonValue stays a member.
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(value)) Object.defineProperty(out, k, { value: resolveJson(v as Json, ctx), enumerable: true, writable: true, configurable: true })
    return out
  }
  return value
}

function renderJsonText(t: JsonText, ctx: RenderContext): Buffer {
  const draft = JSON.stringify(ctx.refs.draftPartial)
  switch (t.kind) {
    case 'deep': {
      const close = t.open === '[' ? ']' : '}'
      const nested = `${t.open.repeat(t.depth)}1${close.repeat(t.depth)}`
      const text = t.inside === 'root' ? nested : t.inside === 'name' ? `{"name":${nested}}` : `{"draft":${draft},"data":{"title":"Deep","x":${nested}}}`
      return Buffer.from(text)
    }
    case 'proto': {
      const evil = `{"${t.key}":{"polluted":true,"prototype":{"polluted":true}},"title":"Proto"}`
      return Buffer.from(t.inside === 'root' ? evil : `{"draft":${draft},"data":${evil}}`)
    }
    case 'literal': return Buffer.from(t.text)
    case 'bytes': return Buffer.from(t.bytes)
  }
}

function renderMultipart(spec: MultipartSpec, ctx: RenderContext): { payload: Buffer; contentType: string } {
  const { eol, boundary } = spec
  const chunks: Buffer[] = []
  if (spec.preamble) chunks.push(Buffer.from(`this is a preamble${eol}`))
  for (const part of spec.parts) {
    const name = joinPlain([part.name], ctx).replace(/"/g, '%22')
    const filename = part.filename === undefined ? '' : `; filename="${joinPlain([part.filename], ctx).replace(/"/g, '%22')}"`
    const disposition = {
      normal: `Content-Disposition: form-data; name="${name}"${filename}`,
      missing: 'X-Nothing: here',
      'no-name': `Content-Disposition: form-data${filename}`,
      star: `Content-Disposition: form-data; name*=UTF-8''${percentEncode(name)}${filename}`,
      unquoted: `Content-Disposition: form-data; name=${name}${filename}`,
      folded: `Content-Disposition: form-data;${eol} name="${name}"${filename}`,
    }[part.disposition]
    const type = part.contentType === undefined ? '' : `${eol}Content-Type: ${part.contentType}`
    chunks.push(Buffer.from(`--${boundary}${eol}`), wtf8(`${disposition}${type}${eol}${eol}`))
    chunks.push('blob' in part.value ? ctx.blobs[part.value.blob] : wtf8(joinPlain([part.value.text], ctx)))
    chunks.push(Buffer.from(eol))
  }
  if (spec.ending === 'close') chunks.push(Buffer.from(`--${boundary}--${eol}`))
  if (spec.ending === 'garbage') chunks.push(Buffer.from(`--${boundary}-${eol}trailing`))
  if (spec.ending === 'early') chunks.unshift(Buffer.from(`--${boundary}--${eol}`))
  // A cut body is copied only as far as it goes (the 6 MiB blob need not be copied whole to send a tenth of it).
  const length = chunks.reduce((sum, chunk) => sum + chunk.length, 0)
  const payload = Buffer.concat(chunks, spec.cut === undefined ? length : Math.floor(length * spec.cut))
  const contentType = {
    same: `multipart/form-data; boundary=${boundary}`,
    quoted: `multipart/form-data; boundary="${boundary}"`,
    missing: 'multipart/form-data',
    other: 'multipart/form-data; boundary=not-the-one',
    twice: `multipart/form-data; boundary=${boundary}; boundary=other`,
  }[spec.declared]
  return { payload, contentType }
}

function renderBody(body: Body, ctx: RenderContext): { payload?: Buffer; contentType?: string } {
  switch (body.kind) {
    case 'none': return {}
    case 'json': return { payload: Buffer.from(JSON.stringify(resolveJson(body.value, ctx)) ?? 'null'), contentType: 'application/json' }
    case 'jsonText': return { payload: renderJsonText(body.text, ctx), contentType: 'application/json' }
    case 'form': return {
      payload: Buffer.from(body.pairs.map(([k, v]) => `${joinUrl([k], ctx)}=${joinUrl([v], ctx)}`).join('&')),
      contentType: 'application/x-www-form-urlencoded',
    }
    case 'multipart': return renderMultipart(body.spec, ctx)
    case 'bytes': return { payload: Buffer.from(body.bytes), contentType: body.contentType }
  }
}

export function render(c: FuzzCase, ctx: RenderContext): RenderedRequest {
  const headers: Record<string, string | string[]> = {}
  const cookies: string[] = []
  const { creds: cr } = c
  if (cr.gate === 'header' || cr.gate === 'both') headers['x-master-password'] = ctx.refs.masterPassword
  if (cr.gate === 'wrong') headers['x-master-password'] = 'not-the-password'
  if (cr.gate === 'empty') headers['x-master-password'] = ''
  if (cr.gate === 'cookie' || cr.gate === 'both') cookies.push(`packs_gate=${ctx.refs.gateCookie}`)
  if (cr.gate === 'bad-cookie') cookies.push(`packs_gate=${ctx.refs.gateCookie.slice(1)}0`)
  const bearer = (user: string, token: string) => `Bearer ${user} ${token}`
  let session: { token: string; csrf: string } | undefined
  switch (cr.user) {
    case 'alice': headers.authorization = bearer('alice', ctx.refs.aliceToken); break
    case 'bob': headers.authorization = bearer('bob', ctx.refs.bobToken); break
    case 'staff': headers.authorization = bearer(ctx.refs.staffName, ctx.refs.staffToken); break
    case 'bad-token': headers.authorization = bearer('alice', 'packs_not-a-real-token'); break
    case 'unknown-user': headers.authorization = bearer('nobody', ctx.refs.aliceToken); break
    case 'alice-session': session = ctx.sessions.alice; break
    case 'staff-session': session = ctx.sessions.staff; break
    case 'stale-session': cookies.push('packs_session=packs_expired-or-never-was'); break
    case 'none': break
  }
  if (session) {
    cookies.push(`packs_session=${session.token}`)
    if (cr.csrf === 'right') headers['x-csrf-token'] = session.csrf
    if (cr.csrf === 'wrong') headers['x-csrf-token'] = 'wrong-csrf-token'
    if (cr.csrf === 'staff') headers['x-csrf-token'] = ctx.sessions.staff.csrf
  }
  if (cr.authorization) headers.authorization = headerSafe(joinPlain(cr.authorization, ctx))

  const h = c.headers
  if (h.cookie) {
    const extra = headerSafe(joinPlain(h.cookie.value, ctx))
    if (h.cookie.mode === 'replace') cookies.splice(0, cookies.length, extra)
    else cookies.push(extra)
  }
  if (cookies.length) headers.cookie = h.cookie?.mode === 'duplicate' ? cookies : cookies.join('; ')
  if (h.range !== undefined) headers.range = headerSafe(h.range)
  if (h.ifRange !== undefined) headers['if-range'] = h.ifRange === '{fileEtag}' ? ctx.refs.fileEtag : h.ifRange
  if (h.ifNoneMatch) headers['if-none-match'] = headerSafe(joinPlain(h.ifNoneMatch, ctx))
  if (h.host !== undefined) headers.host = headerSafe(h.host)
  if (h.accept !== undefined) headers.accept = h.accept
  if (h.forwardedFor !== undefined) headers['x-forwarded-for'] = h.forwardedFor
  for (const [name, value] of h.other ?? []) headers[name] = headerSafe(value)

  const { payload, contentType } = renderBody(c.body, ctx)
  if (contentType !== undefined) headers['content-type'] = contentType
  if (h.contentType !== undefined) headers['content-type'] = headerSafe(h.contentType)
  if (h.contentLength !== undefined) headers['content-length'] = h.contentLength

  return {
    method: c.method,
    url: renderPath(c, ctx) + renderQuery(c, ctx),
    headers,
    ...(payload !== undefined ? { payload } : {}),
    remoteAddress: c.address,
  }
}

/** The route a case was aimed at, for grouping failures. */
export function routeLabel(c: FuzzCase, routes: RouteInfo[]): string {
  const route = routes[c.route]!
  return c.shape === 'random' ? `${c.method} (random path)` : `${c.method} ${route.path}${c.shape === 'template' ? '' : ` (${c.shape})`}`
}
