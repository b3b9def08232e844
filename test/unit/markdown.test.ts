// Descriptions: Markdown in, HTML that is safe to put into a page out.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { MarkdownCache, isAllowedLink, isSameOriginImage, renderMarkdown } from '../../src/web/markdown.js'

const REL = 'rel="nofollow ugc noopener noreferrer"'

/** Every tag name in the output: what an attacker would need to smuggle in. */
function tags(out: string): string[] {
  return [...out.matchAll(/<([a-z0-9]+)[\s>]/gi)].map((m) => m[1]!.toLowerCase())
}

describe('renderMarkdown', () => {
  test('renders the usual Markdown', () => {
    const out = renderMarkdown('Some **bold**, _em_ and `code`.\n\n- one\n- two\n\n> quoted\n\n```\nx < y\n```')
    assert.match(out, /<strong>bold<\/strong>/)
    assert.match(out, /<em>em<\/em>/)
    assert.match(out, /<code>code<\/code>/)
    assert.match(out, /<ul>\n<li>one<\/li>\n<li>two<\/li>\n<\/ul>/)
    assert.match(out, /<blockquote>/)
    assert.match(out, /<pre><code>x &lt; y\n<\/code><\/pre>/)
  })

  test('raw HTML is escaped, never passed through', () => {
    const cases: [string, RegExp][] = [
      ['<script>alert(1)</script>', /&lt;script&gt;alert\(1\)&lt;\/script&gt;/],
      ['<img src=x onerror=alert(1)>', /&lt;img src=x onerror=alert\(1\)&gt;/],
      ['<iframe src="/x"></iframe>', /&lt;iframe src=&quot;\/x&quot;&gt;&lt;\/iframe&gt;/],
      ['<a href="javascript:alert(1)">x</a>', /&lt;a href=&quot;javascript:alert\(1\)&quot;&gt;x&lt;\/a&gt;/],
      ['<svg onload=alert(1)>', /&lt;svg onload=alert\(1\)&gt;/],
      ['<div>\n\n*block*\n\n</div>', /&lt;div&gt;/],
      ['<!-- comment --><style>body{}</style>', /&lt;!-- comment --&gt;&lt;style&gt;/],
    ]
    for (const [source, expected] of cases) {
      const out = renderMarkdown(source)
      assert.match(out, expected, source)
      assert.deepEqual(tags(out).filter((t) => !['p', 'em'].includes(t)), [], `${source} -> ${out}`)
    }
  })

  test('javascript:, vbscript:, data: and file: links are not made into links, however they are spelled', () => {
    for (const href of [
      'javascript:alert(1)', 'JaVaScRiPt:alert(1)', '&#106;avascript:alert(1)', 'javascript&colon;alert(1)',
      'vbscript:msgbox(1)', 'data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==', 'data:image/png;base64,AAAA', 'file:///etc/passwd',
    ]) {
      const out = renderMarkdown(`[click](${href}) <${href}>`)
      assert.doesNotMatch(out, /<a /, `${href} -> ${out}`)
    }
    // Percent-encoding in a scheme is no scheme: the browser reads it as a path on this site.
    assert.match(renderMarkdown('[x](%6Aavascript:alert(1))'), /<a href="%6Aavascript:alert\(1\)"/)
    // A reference-style link is checked just the same.
    assert.doesNotMatch(renderMarkdown('[x][r]\n\n[r]: javascript:alert(1)'), /<a /)
  })

  test('http(s), mailto and relative links work, marked as user content', () => {
    assert.equal(renderMarkdown('[site](https://example.org/a?b=1&c=2)'), `<p><a href="https://example.org/a?b=1&amp;c=2" ${REL}>site</a></p>\n`)
    assert.match(renderMarkdown('[mail](mailto:me@example.org)'), new RegExp(`<a href="mailto:me@example.org" ${REL}>mail</a>`))
    assert.match(renderMarkdown('[other pack](/packs/bob/x/)'), new RegExp(`<a href="/packs/bob/x/" ${REL}>other pack</a>`))
    assert.match(renderMarkdown('[title](https://example.org "a \\"title\\"")'), /title="a &quot;title&quot;"/)
  })

  test('autolinks and bare URLs become links; a javascript: autolink stays text', () => {
    assert.match(renderMarkdown('<https://example.org>'), new RegExp(`<a href="https://example.org" ${REL}>https://example.org</a>`))
    assert.match(renderMarkdown('go to https://example.org/x now'), new RegExp(`<a href="https://example.org/x" ${REL}>https://example.org/x</a>`))
    assert.match(renderMarkdown('<me@example.org>'), new RegExp(`<a href="mailto:me@example.org" ${REL}>me@example.org</a>`))
    assert.equal(renderMarkdown('<javascript:alert(1)>'), '<p>&lt;javascript:alert(1)&gt;</p>\n')
  })

  test('images stay only when they are on our own origin; others leave their alt text', () => {
    assert.equal(renderMarkdown('![map](/api/files/1/)'), '<p><img src="/api/files/1/" alt="map" loading="lazy"></p>\n')
    for (const src of ['https://evil.example/x.png', '//evil.example/x.png', 'data:image/png;base64,AAAA', 'javascript:alert(1)']) {
      const out = renderMarkdown(`![the *map*](${src})`)
      assert.doesNotMatch(out, /<img/, `${src} -> ${out}`)
      assert.doesNotMatch(out, /evil/)
    }
    assert.equal(renderMarkdown('![the map](https://evil.example/x.png)'), '<p>the map</p>\n')
    // The alt text of a dropped image is escaped like any text.
    assert.equal(renderMarkdown('![<b>x</b>](https://evil.example/x.png)'), '<p>&lt;b&gt;x&lt;/b&gt;</p>\n')
  })

  test('headings start below the page\'s own h1 and h2; tables scroll in their own box', () => {
    assert.equal(renderMarkdown('# One\n## Two\n##### Five'), '<h3>One</h3>\n<h4>Two</h4>\n<h6>Five</h6>\n')
    assert.match(renderMarkdown('| a | b |\n|---|---|\n| 1 | 2 |'), /^<div class="table-scroll"><table>[\s\S]*<\/table>\n<\/div>$/)
  })

  test('attribute values are escaped', () => {
    const out = renderMarkdown('[x](https://example.org/"onmouseover="alert(1))')
    assert.doesNotMatch(out, /"onmouseover="/)
  })
})

describe('link and image rules', () => {
  test('isAllowedLink', () => {
    for (const ok of ['https://a.b', 'http://a.b', 'mailto:x@y.z', '/path', 'relative/path', '#top', '?q=1', '']) assert.ok(isAllowedLink(ok), ok)
    for (const bad of ['javascript:x', ' javascript:x', 'java\tscript:x', 'java\nscript:x', 'VBSCRIPT:x', 'data:x', 'file:x', 'ftp://a.b', 'chrome://settings']) {
      assert.ok(!isAllowedLink(bad), JSON.stringify(bad))
    }
  })

  test('isSameOriginImage', () => {
    for (const ok of ['/api/files/1/', 'img.png', '../x.png']) assert.ok(isSameOriginImage(ok), ok)
    for (const bad of ['', 'https://a.b/x.png', '//a.b/x.png', '/\\a.b/x.png', 'data:image/png;base64,AAAA', 'blob:x', 'java\tscript:x']) {
      assert.ok(!isSameOriginImage(bad), JSON.stringify(bad))
    }
  })
})

describe('MarkdownCache', () => {
  /** A cache whose renderer counts its calls and makes `size`-character HTML. */
  function counting(maxBytes: number, maxEntries: number, size = 100) {
    const calls: string[] = []
    const cache = new MarkdownCache(maxBytes, maxEntries, (source) => {
      calls.push(source)
      return `${source}:`.padEnd(size, '.')
    })
    return { cache, calls }
  }

  test('renders a source once; the same text again is a hit, whoever asks', () => {
    const { cache, calls } = counting(1024 * 1024, 100)
    assert.equal(cache.html('a'), cache.html('a'))
    assert.equal(cache.html('b'), 'b:'.padEnd(100, '.'))
    assert.deepEqual(calls, ['a', 'b'])
    assert.deepEqual([cache.hits, cache.misses], [1, 2])
  })

  test('the real renderer behind it gives exactly what renderMarkdown gives', () => {
    const cache = new MarkdownCache(1024 * 1024, 100)
    const source = '# Title\n\nSome **bold** and a [link](https://example.org).'
    assert.equal(cache.html(source), renderMarkdown(source))
    assert.equal(cache.html(source), renderMarkdown(source))
    assert.equal(cache.hits, 1)
  })

  test('sources that differ only by a lone surrogate have keys of their own', () => {
    const { cache, calls } = counting(1024 * 1024, 100)
    cache.html('x\uD800y')
    cache.html('x\uFFFDy')
    assert.equal(calls.length, 2)
  })

  test('bounded by bytes: the least recently used go first', () => {
    // Each entry counts 2 bytes a character plus 128: 328 bytes; four fit in 1400.
    const { cache, calls } = counting(1400, 100)
    for (const source of ['a', 'b', 'c', 'd']) cache.html(source)
    cache.html('a') // now the most recently used
    cache.html('e') // evicts b, the least recently used
    assert.ok(cache.bytes <= 1400, `${cache.bytes} bytes held`)
    assert.equal(cache.size, 4)
    calls.length = 0
    for (const source of ['a', 'c', 'd', 'e']) cache.html(source)
    assert.deepEqual(calls, [], 'a, c, d and e are still held')
    cache.html('b')
    assert.deepEqual(calls, ['b'], 'b was evicted')
  })

  test('bounded by entries; one huge rendering is returned but not kept (it would flush the rest)', () => {
    const { cache } = counting(1024 * 1024, 3)
    for (const source of ['a', 'b', 'c', 'd']) cache.html(source)
    assert.equal(cache.size, 3)
    const big = new MarkdownCache(4000, 100, () => 'y'.repeat(1500))
    assert.equal(big.html('one'), 'y'.repeat(1500))
    assert.equal(big.size, 0, 'a rendering over a quarter of the bound is not kept')
  })

  test('many distinct sources never hold more than the bound', () => {
    const cache = new MarkdownCache(64 * 1024, 1000)
    // About 130 of these fit in 64 KiB: 500 fill it almost four times over.
    for (let i = 0; i < 500; i++) cache.html(`pack ${i} `.repeat(20))
    assert.ok(cache.bytes <= 64 * 1024, `${cache.bytes} bytes held`)
    assert.ok(cache.size > 0 && cache.size <= 1000)
  })
})

describe('pathological descriptions', () => {
  // Half of what a draft may hold: enough to tell linear from quadratic, quick enough for every run.
  const LIMIT = 128 * 1024
  const realistic = (() => {
    const para = '## Features\n\nThis **pack** adds _many_ things: [link](https://example.org), `code`, and a list:\n\n'
      + '- one item with **bold** text\n- two https://example.com/auto\n- three ![img](/x.png)\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n> quote *em*\n\n'
    return para.repeat(Math.ceil(LIMIT / para.length)).slice(0, LIMIT)
  })()

  /** CPU milliseconds of one render (not wall time: the test machine may be shared). */
  function cpuMs(source: string): { ms: number; html: string } {
    const start = process.cpuUsage()
    const html = renderMarkdown(source)
    const used = process.cpuUsage(start)
    return { ms: (used.user + used.system) / 1000, html }
  }

  const fill = (unit: string) => unit.repeat(Math.floor(LIMIT / unit.length))

  test('deep nesting stops at 20 levels: 10,000 > or nested list markers render at once', () => {
    const quotes = cpuMs('>'.repeat(10_000) + ' deep')
    assert.equal(quotes.html.match(/<blockquote>/g)?.length, 20)
    assert.ok(quotes.ms < 500, `${quotes.ms} ms`)
    const lists = cpuMs(Array.from({ length: 2000 }, (_, i) => `${'  '.repeat(i)}- x`).join('\n'))
    assert.ok((lists.html.match(/<ul>/g)?.length ?? 0) <= 20)
    const inline = renderMarkdown('[a'.repeat(5000) + '](/x)')
    assert.ok((inline.match(/<a /g)?.length ?? 0) <= 20)
  })

  test('the worst inputs found cost no more than a few realistic descriptions of the same size', (t) => {
    renderMarkdown(realistic) // warm the JIT
    const baseline = cpuMs(realistic).ms
    t.diagnostic(`realistic ${LIMIT} characters: ${baseline.toFixed(0)} ms CPU`)
    // Each once found slow in markdown-it (link labels scanned from every [, emphasis runs, autolinks...).
    const cases = ['[', '![', '[x][', '[](', '*a**', '**a', '*_', '~~a', '\\', '&#', 'http://a.', '<', '` ', '> ', '- ', '1. ', '#']
    for (const unit of cases) {
      const { ms } = cpuMs(fill(unit))
      t.diagnostic(`${JSON.stringify(unit)} x ${Math.floor(LIMIT / unit.length)}: ${ms.toFixed(0)} ms CPU`)
      // Linear in the input like the realistic text; a quadratic rule would take tens of seconds at this size.
      assert.ok(ms < Math.max(2500, 6 * baseline), `${JSON.stringify(unit)} x ${LIMIT / unit.length}: ${ms.toFixed(0)} ms CPU (realistic: ${baseline.toFixed(0)} ms)`)
    }
  })
})
