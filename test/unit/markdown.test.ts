// Descriptions: Markdown in, HTML that is safe to put into a page out.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { isAllowedLink, isSameOriginImage, renderMarkdown } from '../../src/domain/markdown.js'

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
