// Adversarial text (test/helpers/adversarial.ts) sent through
// the app, as headers, query strings and bodies, for what runs inside Fastify
// and its plugins (content type and cookie parsing, the query-string parser,
// schema formats) and for the Bearer pattern of src/auth/plugin.ts, which is
// not exported: each must answer about as fast as an ordinary request. The
// patterns called directly are test/unit/regex-redos.test.ts. The bound is a
// denial-of-service bound, not a performance claim.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import type { InjectOptions } from 'fastify'
import { siteWith, type TestSite, type TestUser } from '../helpers/app.js'
import { adversarial } from '../helpers/adversarial.js'

const BOUND_MS = 50

describe('adversarial headers and parameters through the app answer as fast as ordinary ones', { timeout: 120_000 }, () => {
  let site: TestSite
  let user: TestUser
  before(async () => ({ site, redos: user } = await siteWith({ users: ['redos'] })))
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
    'Authorization (BEARER in auth/plugin.ts)': (t) => ({ url: '/api/drafts/', headers: { ...site.gate, authorization: `Bearer ${t}` } }),
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
        // A slow answer is timed again, beside a new baseline, up to three times: a machine busy with other
        // test files slows one round, a pattern that backtracks is slow in every round.
        let ordinary = baseline
        for (let round = 0; round < 3 && result.ms >= ordinary.ms + BOUND_MS; round++) {
          ordinary = await timed(build('x'))
          result = await timed(build(safe))
        }
        assert.ok(result.ms < ordinary.ms + BOUND_MS, `${name}: ${shape} took ${result.ms.toFixed(1)} ms (an ordinary request ${ordinary.ms.toFixed(1)} ms)`)
      }
    })
  }
})
