// Every regular expression and hand parser that reads request input, fed
// adversarial text: long whitespace runs, near-misses that
// fail only at the last character, repeated separators, quotes, escapes and
// digits. A backtracking pattern costs quadratic or worse time in such input
// (the old Range pattern: seconds at 3,000 characters, minutes at 8,000), so
// each call must finish within BOUND_MS, first at 1 KiB (a cubic pattern fails
// here already, in a second rather than minutes) and then at 16 KiB, about
// the most one request header can hold. The bounds are denial-of-service
// bounds, not performance claims: a linear scan of 16 KiB takes microseconds.
//
// The same input sent through the app, as headers, query strings and bodies,
// is test/http/regex-redos.test.ts.
//
// Audited and left out: src/config/index.ts (environment, not requests); the
// markdown renderer (markdown-it, not a pattern of ours: its cost on long
// descriptions is measured in test/http/pack-description.test.ts).
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { ifRangeHolds, parseRange } from '../../src/files/ranges.js'
import { noneMatch } from '../../src/http/conditional.js'
import { multipartBoundary } from '../../src/http/multipart.js'
import { safeNext } from '../../src/http/urls.js'
import { jsonDeeperThan } from '../../src/http/json-body.js'
import { textFault } from '../../src/http/text-input.js'
import { isUuid } from '../../src/api/constants.js'
import { validateUsername } from '../../src/accounts/usernames.js'
import { slugify } from '../../src/packs/slugs.js'
import { contentDisposition, sanitizeFilename } from '../../src/files/filenames.js'
import { isAllowedLink, isSameOriginImage } from '../../src/web/markdown.js'
import { escapeHtml } from '../../src/web/html.js'
import { escapeLike } from '../../src/packs/tags-repository.js'
import { redactUrl } from '../../src/http/access-log.js'
import { isFeedTokenShaped } from '../../src/auth/feed-tokens.js'
import { scrapeTokenOf } from '../../src/stats/metrics-routes.js'
import { adversarial } from '../helpers/adversarial.js'

const BOUND_MS = 50
const SIZES = [1024, 16 * 1024]

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
  'parseRange (files/ranges.ts, Range)': { call: (s) => parseRange(s, 1_000_000), prefixes: ['', 'bytes=', 'bytes=0-', 'bytes=-', ' bytes = '] },
  'ifRangeHolds (files/ranges.ts, If-Range)': { call: (s) => ifRangeHolds(s, '"abc"', 'Mon, 23 Nov 2026 10:00:00 GMT'), prefixes: ['', '"', 'W/'] },
  'noneMatch (http/conditional.ts, ENTITY_TAG, If-None-Match)': { call: (s) => noneMatch(s, '"abc"'), prefixes: ['', '"', 'W/"', '"a", '] },
  'multipartBoundary (http/multipart.ts, Content-Type)': {
    call: (s) => multipartBoundary(s),
    prefixes: ['multipart/form-data;', 'multipart/form-data; boundary=', 'multipart/form-data; boundary="', 'multipart/form-data; a="b";'],
  },
  'safeNext (http/urls.ts, next)': { call: (s) => safeNext(s), prefixes: ['/', '//', '/\\', '/%2e'] },
  'jsonDeeperThan (http/json-body.ts, JSON bodies)': { call: (s) => jsonDeeperThan(s, 64), prefixes: ['', '"', '{"a":', '['] },
  'textFault (http/text-input.ts, every text input)': { call: (s) => textFault(s), prefixes: [''] },
  'isUuid (api/constants.ts, UUID_PATTERN, path parameters)': { call: (s) => isUuid(s), prefixes: ['', '00000000-0000-0000-0000-'] },
  'validateUsername (accounts/usernames.ts, USERNAME_PATTERN, sign-in and sign-up)': { call: (s) => validateUsername(s), prefixes: ['', 'alice'] },
  'slugify (packs/slugs.ts, a draft title)': { call: (s) => slugify(s), prefixes: ['', 'a', '-'] },
  'sanitizeFilename (files/filenames.ts, upload filenames)': { call: (s) => sanitizeFilename(s), prefixes: ['', 'a/', 'C:\\'] },
  'contentDisposition (files/filenames.ts, stored filenames)': { call: (s) => contentDisposition('attachment', s), prefixes: [''] },
  'isAllowedLink (web/markdown.ts, SCHEME, IGNORED_IN_SCHEME)': { call: (s) => isAllowedLink(s), prefixes: ['', 'a', 'java'] },
  'isSameOriginImage (web/markdown.ts)': { call: (s) => isSameOriginImage(s), prefixes: ['', '/', '//'] },
  'escapeHtml (web/html.ts, everything a page shows)': { call: (s) => escapeHtml(s), prefixes: [''] },
  'escapeLike (packs/tags-repository.ts, pack search and autocomplete)': { call: (s) => escapeLike(s), prefixes: [''] },
  'redactUrl (http/access-log.ts, every logged URL)': {
    call: (s) => redactUrl(s), prefixes: ['/', '/?signature=', '/?feed_token=', '/?next=%2F%3Ffeed_token%3D', '/?feed%5Ftoken%253D'],
  },
  'isFeedTokenShaped (auth/feed-tokens.ts, ?feed_token=)': { call: (s) => isFeedTokenShaped(s), prefixes: ['', 'pkf_'] },
  'scrapeTokenOf (stats/metrics-routes.ts, Authorization on /metrics)': { call: (s) => scrapeTokenOf(s), prefixes: ['', 'Bearer ', 'bearer  x'] },
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
    assert.equal(redactUrl('/feeds/new/?a=1&feed_token=pkf_x&b=2'), '/feeds/new/?a=1&feed_token=[redacted]&b=2')
    assert.equal(redactUrl('/gate/?next=%2Ffeeds%2Fnew%2F%3Ffeed_token%3Dpkf_x%26b%3D2'), '/gate/?next=%2Ffeeds%2Fnew%2F%3Ffeed_token%3D[redacted]%26b%3D2')
    assert.equal(redactUrl('/api/files/x?signature=s&download=1'), '/api/files/x?signature=[redacted]&download=1')
    assert.equal(isFeedTokenShaped(`pkf_${'a'.repeat(43)}`), true)
    assert.equal(scrapeTokenOf(`Bearer ${'a'.repeat(64)}`), 'a'.repeat(64))
    assert.equal(scrapeTokenOf('Bearer alice packs_x'), undefined)
  })
})
