// Every regular expression and hand parser that reads request input, fed
// adversarial text (issue 8, item 1): long whitespace runs, near-misses that
// fail only at the last character, repeated separators, quotes, escapes and
// digits. A backtracking pattern costs quadratic or worse time in such input
// (the old Range pattern: seconds at 3,000 characters, minutes at 8,000), so
// each call must finish within BOUND_MS, first at 1 KiB (a cubic pattern fails
// here already, in a second rather than minutes) and then at 16 KiB, about
// the most one request header can hold. The bounds are denial-of-service
// bounds, not performance claims: a linear scan of 16 KiB takes microseconds.
//
// The second part sends the same input through the app, as headers, query
// strings and bodies, for what runs inside Fastify and its plugins (content
// type and cookie parsing, the query-string parser, schema formats) and for
// the Bearer pattern of src/accounts/auth.ts, which is not exported.
//
// Audited and left out: src/config/index.ts (environment, not requests); the
// markdown renderer (markdown-it, not a pattern of ours: its cost on long
// descriptions is issue 8, item 10).
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import type { InjectOptions } from 'fastify'
import { ifRangeHolds, parseRange } from '../../src/files/routes.js'
import { noneMatch } from '../../src/http/conditional.js'
import { multipartBoundary } from '../../src/http/multipart.js'
import { safeNext } from '../../src/http/urls.js'
import { jsonDeeperThan } from '../../src/http/json-body.js'
import { textFault } from '../../src/http/text-input.js'
import { isUuid } from '../../src/api/common.js'
import { validateUsername } from '../../src/accounts/usernames.js'
import { slugify } from '../../src/packs/slugs.js'
import { contentDisposition, sanitizeFilename } from '../../src/files/filenames.js'
import { isAllowedLink, isSameOriginImage } from '../../src/web/markdown.js'
import { escapeHtml } from '../../src/web/html.js'
import { likeContains } from '../../src/packs/repository.js'
import { escapeLike } from '../../src/packs/tags-repository.js'
import { makeSite, type TestSite, type TestUser } from '../helpers/app.js'

const BOUND_MS = 50
const SIZES = [1024, 16 * 1024]

/** Text of about `size` characters built to make a backtracking matcher try every split. */
function adversarial(size: number): Record<string, string> {
  const fill = (unit: string) => unit.repeat(Math.ceil(size / unit.length)).slice(0, size)
  const half = Math.floor(size / 2)
  return {
    spaces: fill(' '),
    tabs: fill('\t'),
    'tabs, dash, tabs, x': `${'\t'.repeat(half)}-${'\t'.repeat(half)}x`,
    'spaces, equals, spaces, x': `${' '.repeat(half)}=${' '.repeat(half)}x`,
    digits: fill('9'),
    'digits then x': `${fill('9')}x`,
    'digit-dash pairs': fill('1-'),
    dashes: fill('-'),
    'dashes then x': `${fill('-')}x`,
    semicolons: fill(';'),
    'semicolon-space pairs': fill('; '),
    'repeated boundary=': fill('; boundary='),
    'unclosed quote': `"${fill('a')}`,
    quotes: fill('"'),
    'escaped quotes': fill('\\"'),
    backslashes: fill('\\'),
    slashes: fill('/'),
    'W/ prefixes': fill('W/'),
    'W/" pieces': fill('W/"'),
    'comma-space lists': fill(', '),
    'percent escapes': fill('%2e'),
    'dot-slash': fill('./'),
    brackets: fill('['),
    braces: fill('{'),
    'open-close pairs': fill('[]'),
    'quoted brackets': `"${fill('[')}"`,
    'letters then !': `${fill('a')}!`,
    'a- then !': `${fill('a-')}!`,
    'hex runs': fill('0123456789abcdef'),
    'uuid-like': fill('00000000-0000-'),
    controls: fill('\u0000\u0001\u001f'),
    'lone surrogates': fill('\ud800'),
    'accented letters': fill('é'),
    'combining marks': fill('e\u0301'),
    'scheme-like': fill('a:'),
    'control-space runs': fill('\u0000 \t'),
  }
}

/** The smallest of three timings, so a garbage collection or a busy neighbour does not fail the test. */
function fastest(call: () => unknown): number {
  let best = Infinity
  for (let i = 0; i < 3; i++) {
    const started = performance.now()
    try {
      call()
    } catch {
      // Refusing the input is a fine answer; only the time matters here.
    }
    best = Math.min(best, performance.now() - started)
  }
  return best
}

/** Each request-facing function, with prefixes that put the adversarial text where its pattern looks. */
const FUNCTIONS: Record<string, { call: (input: string) => unknown; prefixes: string[] }> = {
  'parseRange (files/routes.ts, Range)': { call: (s) => parseRange(s, 1_000_000), prefixes: ['', 'bytes=', 'bytes=0-', 'bytes=-', ' bytes = '] },
  'ifRangeHolds (files/routes.ts, If-Range)': { call: (s) => ifRangeHolds(s, '"abc"', 'Mon, 23 Nov 2026 10:00:00 GMT'), prefixes: ['', '"', 'W/'] },
  'noneMatch (http/conditional.ts, ENTITY_TAG, If-None-Match)': { call: (s) => noneMatch(s, '"abc"'), prefixes: ['', '"', 'W/"', '"a", '] },
  'multipartBoundary (http/multipart.ts, Content-Type)': {
    call: (s) => multipartBoundary(s),
    prefixes: ['multipart/form-data;', 'multipart/form-data; boundary=', 'multipart/form-data; boundary="', 'multipart/form-data; a="b";'],
  },
  'safeNext (http/urls.ts, next)': { call: (s) => safeNext(s), prefixes: ['/', '//', '/\\', '/%2e'] },
  'jsonDeeperThan (http/json-body.ts, JSON bodies)': { call: (s) => jsonDeeperThan(s, 64), prefixes: ['', '"', '{"a":', '['] },
  'textFault (http/text-input.ts, every text input)': { call: (s) => textFault(s), prefixes: [''] },
  'isUuid (api/common.ts, UUID_PATTERN, path parameters)': { call: (s) => isUuid(s), prefixes: ['', '00000000-0000-0000-0000-'] },
  'validateUsername (accounts/usernames.ts, USERNAME_PATTERN, sign-in and sign-up)': { call: (s) => validateUsername(s), prefixes: ['', 'alice'] },
  'slugify (packs/slugs.ts, a draft title)': { call: (s) => slugify(s), prefixes: ['', 'a', '-'] },
  'sanitizeFilename (files/filenames.ts, upload filenames)': { call: (s) => sanitizeFilename(s), prefixes: ['', 'a/', 'C:\\'] },
  'contentDisposition (files/filenames.ts, stored filenames)': { call: (s) => contentDisposition('attachment', s), prefixes: [''] },
  'isAllowedLink (web/markdown.ts, SCHEME, IGNORED_IN_SCHEME)': { call: (s) => isAllowedLink(s), prefixes: ['', 'a', 'java'] },
  'isSameOriginImage (web/markdown.ts)': { call: (s) => isSameOriginImage(s), prefixes: ['', '/', '//'] },
  'escapeHtml (web/html.ts, everything a page shows)': { call: (s) => escapeHtml(s), prefixes: [''] },
  'likeContains (packs/repository.ts, pack search)': { call: (s) => likeContains(s), prefixes: [''] },
  'escapeLike (packs/tags-repository.ts, autocomplete)': { call: (s) => escapeLike(s), prefixes: [''] },
}

describe('request-facing patterns and parsers run in linear time', () => {
  for (const [name, { call, prefixes }] of Object.entries(FUNCTIONS)) {
    test(name, () => {
      for (const size of SIZES) {
        for (const [shape, body] of Object.entries(adversarial(size))) {
          for (const prefix of prefixes) {
            const ms = fastest(() => call(prefix + body))
            assert.ok(ms < BOUND_MS, `${name}: ${JSON.stringify(prefix)} + ${shape} (${size} chars) took ${ms.toFixed(1)} ms`)
          }
        }
      }
    })
  }

  test('the parsers still answer right on ordinary input', () => {
    assert.deepEqual(parseRange('bytes=0-9', 100), { start: 0, end: 9 })
    assert.deepEqual(parseRange(' bytes=90- ', 100), { start: 90, end: 99 })
    assert.deepEqual(parseRange('BYTES=-5', 100), { start: 95, end: 99 })
    assert.equal(parseRange('bytes=100-', 100), 'unsatisfiable')
    assert.equal(parseRange('bytes=0-1,3-4', 100), null)
    assert.equal(parseRange('bytes = 0 - 9', 100), null, 'no whitespace inside a range (RFC 9110 §14.1.2)')
    assert.equal(parseRange(`bytes=0-${'9'.repeat(300)}`, 100), null, 'over 256 characters: ignored, not parsed')
    assert.equal(noneMatch('W/"abc", "def"', '"abc"'), true)
    assert.equal(multipartBoundary('multipart/form-data; boundary=----abc'), '----abc')
    assert.equal(multipartBoundary('multipart/form-data; charset=utf-8; boundary="a b:c"'), 'a b:c')
    assert.equal(jsonDeeperThan('[[["]]]]]][[[["]]]', 3), false)
    assert.equal(jsonDeeperThan('[[[[', 3), true)
  })
})

describe('adversarial headers and parameters through the app answer as fast as ordinary ones', { timeout: 120_000 }, () => {
  let site: TestSite
  let user: TestUser
  before(async () => {
    site = await makeSite()
    user = await site.user('redos')
  })
  after(() => site?.close())

  const hostile = adversarial(8 * 1024) // Node's default header limit is 16 KiB for all headers together.

  async function timed(request: InjectOptions): Promise<{ ms: number; status: number }> {
    let best = Infinity
    let status = 0
    for (let i = 0; i < 3; i++) {
      const started = performance.now()
      const res = await site.app.inject(request)
      best = Math.min(best, performance.now() - started)
      status = res.statusCode
    }
    return { ms: best, status }
  }

  /** Like encodeURIComponent, but a lone surrogate goes out as the bytes of one (ED A0 80), not as an exception. */
  const encodeQuery = (text: string) => encodeURIComponent(text.replaceAll('\ud800', '\ue000')).replaceAll('%EE%80%80', '%ED%A0%80')

  /** Each probe: how to put the text into a request; its cost is compared with the same request carrying "x". */
  const PROBES: Record<string, (text: string) => InjectOptions> = {
    'Authorization (BEARER in accounts/auth.ts)': (t) => ({ url: '/api/drafts/', headers: { ...site.gate, authorization: `Bearer ${t}` } }),
    'Authorization, user then hostile token': (t) => ({ url: '/api/drafts/', headers: { ...site.gate, authorization: `Bearer redos ${t}` } }),
    'Cookie (@fastify/cookie)': (t) => ({ url: '/api/tags/autocomplete/', headers: { ...site.gate, cookie: `packs_session=${encodeQuery(t)}; a=${t.replace(/[;\s]/g, 'x')}` } }),
    'Content-Type (Fastify, then multipartBoundary)': (t) => ({
      method: 'POST',
      url: '/api/uploads/',
      headers: { ...user.headers, 'content-type': `multipart/form-data; boundary=${t.replace(/[\r\n]/g, 'x')}` },
      payload: 'x',
    }),
    'Content-Type parameters (Fastify content-type parsing, JSON route)': (t) => ({
      method: 'POST',
      url: '/api/draft/',
      headers: { ...user.headers, 'content-type': `application/json; a=${t.replace(/[\r\n]/g, 'x')}` },
      payload: '{}',
    }),
    'If-None-Match on the update-check': (t) => ({ url: '/api/packs/a/b/latest', headers: { ...site.gate, 'if-none-match': t } }),
    'Accept (wantsPage)': (t) => ({ url: '/nowhere/', headers: { ...site.gate, accept: t } }),
    'query string q (fast-querystring, autocomplete)': (t) => ({ url: `/api/users/autocomplete/?q=${encodeQuery(t)}`, headers: site.gate }),
    'query string draft (ajv uuid format)': (t) => ({ url: `/api/draft/?draft=${encodeQuery(t)}`, headers: user.headers }),
    'query string page (browse page, PAGE_PATTERN)': (t) => ({ url: `/?page=${encodeQuery(t)}`, headers: site.gate }),
    'query string next (gate page, safeNext)': (t) => ({ url: `/gate/?next=/${encodeQuery(t)}` }),
    'form body next and username (sign-in)': (t) => ({
      method: 'POST',
      url: '/login/',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `username=${encodeQuery(t)}&password=x&next=${encodeQuery(`/${t}`)}`,
    }),
    'JSON body (json-body.ts, text-input.ts)': (t) => ({ method: 'POST', url: '/api/draft/', headers: user.headers, payload: { draft: t, data: { title: t } } }),
  }

  for (const [name, build] of Object.entries(PROBES)) {
    test(name, async () => {
      const baseline = await timed(build('x'))
      for (const [shape, text] of Object.entries(hostile)) {
        // Headers cannot carry NUL or other controls (Node refuses them on the wire, and inject too).
        const safe = name.includes('query') || name.includes('body') ? text : text.replace(/[\u0000-\u001f\u007f]/g, 'x')
        let result: { ms: number; status: number }
        try {
          result = await timed(build(safe))
        } catch (error) {
          // inject refuses some header values outright (lone surrogates): nothing reached the app.
          if ((error as NodeJS.ErrnoException).code === 'ERR_INVALID_CHAR') continue
          throw error
        }
        assert.ok(result.status < 500, `${name}: ${shape} answered ${result.status}`)
        assert.ok(result.ms < baseline.ms + BOUND_MS, `${name}: ${shape} took ${result.ms.toFixed(1)} ms (an ordinary request ${baseline.ms.toFixed(1)} ms)`)
      }
    })
  }
})
