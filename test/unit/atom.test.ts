// Atom feeds as readers see them: parsed by @rowanmanning/feed-parser (a
// feed reader's parser: titles, links, ids, dates, authors), and by saxes, a
// strict XML 1.0 parser that refuses what a lenient one would let through (an
// unescaped "&", a control character), for the exact text of each element.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { parseFeed } from '@rowanmanning/feed-parser'
import { SaxesParser } from 'saxes'
import { ATOM_MEDIA_TYPE, escapeXmlAttribute, escapeXmlText, renderAtom, xmlCharacters, type AtomFeed } from '../../src/web/atom.js'

interface XmlElement {
  name: string
  attributes: Record<string, string>
  text: string
  children: XmlElement[]
}

/** The document as a tree, through a strict parser: any well-formedness error throws. */
function parseStrict(xml: string): XmlElement {
  const parser = new SaxesParser({ xmlns: true })
  const stack: XmlElement[] = [{ name: '#document', attributes: {}, text: '', children: [] }]
  let failure: Error | null = null
  parser.on('error', (error) => {
    failure ??= error
  })
  parser.on('opentag', (tag) => {
    const attributes: Record<string, string> = {}
    for (const [name, attribute] of Object.entries(tag.attributes)) attributes[name] = attribute.value
    const element: XmlElement = { name: tag.local, attributes, text: '', children: [] }
    stack.at(-1)!.children.push(element)
    stack.push(element)
    if (tag.local === 'feed') assert.equal(tag.uri, 'http://www.w3.org/2005/Atom')
  })
  parser.on('text', (text) => {
    stack.at(-1)!.text += text
  })
  parser.on('closetag', () => {
    stack.pop()
  })
  parser.write(xml).close()
  if (failure) throw failure
  return stack[0]!.children[0]!
}

const child = (element: XmlElement, name: string): XmlElement => {
  const found = element.children.find((c) => c.name === name)
  assert.ok(found, `<${element.name}> has <${name}>`)
  return found
}

const feed: AtomFeed = {
  id: 'https://packs.example/packs/demo/faithful/',
  title: 'Faithful 32x — versions',
  subtitle: 'New versions of Faithful 32x',
  updated: '2026-11-24T12:00:00Z',
  selfUrl: 'https://packs.example/feeds/packs/demo/faithful.atom?token=abc&x=1',
  alternateUrl: 'https://packs.example/packs/demo/faithful/',
  author: { name: 'alice', uri: 'https://packs.example/users/alice/' },
  generator: { name: 'Packs', uri: 'https://packs.example/', version: '1' },
  entries: [
    {
      id: 'urn:packs:version:0123456789abcdef',
      title: 'Faithful 32x 1.2',
      updated: new Date('2026-11-24T12:00:00Z'),
      published: '2026-11-24T11:59:30.250Z',
      link: 'https://packs.example/packs/demo/faithful/versions/1.2/',
      content: { type: 'html', value: '<p>Shinier diamonds</p>' },
      summary: 'Shinier diamonds',
      categories: [{ term: 'textures', label: 'Textures' }],
    },
    {
      id: 'urn:packs:version:fedcba9876543210',
      title: 'Faithful 32x 1.1',
      updated: '2026-11-20T08:00:00+02:00',
      link: 'https://packs.example/packs/demo/faithful/versions/1.1/',
      author: [{ name: 'bob' }, { name: 'carol', email: 'carol@example.org' }],
      content: { type: 'text', value: 'First release' },
    },
  ],
}

test('a feed reader reads the feed: title, links, ids, dates, authors, entries', () => {
  const xml = renderAtom(feed)
  assert.ok(xml.startsWith('<?xml version="1.0" encoding="utf-8"?>\n<feed xmlns="http://www.w3.org/2005/Atom">'))
  assert.equal(ATOM_MEDIA_TYPE, 'application/atom+xml; charset=utf-8')
  const parsed = parseFeed(xml)
  assert.equal(parsed.meta.type, 'atom')
  assert.equal(parsed.meta.version, '1.0')
  assert.equal(parsed.title, 'Faithful 32x — versions')
  assert.equal(parsed.description, 'New versions of Faithful 32x')
  assert.equal(parsed.url, 'https://packs.example/packs/demo/faithful/')
  assert.equal(parsed.self, 'https://packs.example/feeds/packs/demo/faithful.atom?token=abc&x=1')
  assert.equal(parsed.updated?.toISOString(), '2026-11-24T12:00:00.000Z')
  assert.deepEqual(parsed.authors.map((a) => [a.name, a.url]), [['alice', 'https://packs.example/users/alice/']])
  assert.equal(parsed.generator?.label, 'Packs')
  assert.equal(parsed.items.length, 2)
  const [first, second] = parsed.items
  assert.equal(first!.id, 'urn:packs:version:0123456789abcdef')
  assert.equal(first!.title, 'Faithful 32x 1.2')
  assert.equal(first!.url, 'https://packs.example/packs/demo/faithful/versions/1.2/')
  assert.equal(first!.updated?.toISOString(), '2026-11-24T12:00:00.000Z')
  assert.equal(first!.published?.toISOString(), '2026-11-24T11:59:30.250Z')
  assert.equal(first!.content, '<p>Shinier diamonds</p>')
  assert.equal(first!.description, 'Shinier diamonds')
  assert.deepEqual(first!.categories.map((c) => [c.term, c.label]), [['textures', 'Textures']])
  assert.equal(second!.id, 'urn:packs:version:fedcba9876543210')
  // Offsets become UTC.
  assert.equal(second!.updated?.toISOString(), '2026-11-20T06:00:00.000Z')
  assert.equal(second!.published, null)
  assert.deepEqual(second!.authors.map((a) => [a.name, a.email]), [['bob', null], ['carol', 'carol@example.org']])
})

test('the document is what RFC 4287 asks: RFC 3339 dates, self and alternate links, content types', () => {
  const root = parseStrict(renderAtom(feed))
  assert.equal(root.name, 'feed')
  const links = root.children.filter((c) => c.name === 'link').map((c) => c.attributes)
  assert.deepEqual(links, [
    { rel: 'self', type: 'application/atom+xml', href: 'https://packs.example/feeds/packs/demo/faithful.atom?token=abc&x=1' },
    { rel: 'alternate', type: 'text/html', href: 'https://packs.example/packs/demo/faithful/' },
  ])
  const rfc3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/
  assert.match(child(root, 'updated').text, rfc3339)
  const entries = root.children.filter((c) => c.name === 'entry')
  assert.equal(entries.length, 2)
  for (const entry of entries) {
    for (const name of ['id', 'title', 'updated', 'link']) assert.equal(entry.children.filter((c) => c.name === name).length, 1, name)
    assert.match(child(entry, 'updated').text, rfc3339)
  }
  assert.equal(child(entries[0]!, 'content').attributes.type, 'html')
  assert.equal(child(entries[0]!, 'content').text, '<p>Shinier diamonds</p>')
  assert.equal(child(entries[1]!, 'content').attributes.type, 'text')
  assert.equal(child(entries[0]!, 'published').text, '2026-11-24T11:59:30.250Z')
})

test('<, &, quotes and control characters: escaped or removed, and the exact text comes back', () => {
  const hostile = 'a < b && c > d "quoted" \'single\' ]]> <![CDATA[x]]> &amp; &#x41; <script>alert(1)</script>'
  const controls = 'bell\u0007 nul\u0000 esc\u001b vt\u000b ff\u000c fffe\uFFFE ffff\uFFFF lone\uD800 \uDC00pair😀 tab\t lf\n cr\r end'
  const expectedControls = 'bell nul esc vt ff fffe ffff lone pair😀 tab\t lf\n cr\r end'
  const xml = renderAtom({
    id: `urn:x:${hostile}`,
    title: hostile + controls,
    subtitle: controls,
    updated: '2026-11-24T12:00:00Z',
    selfUrl: `https://packs.example/feed?a=1&b="2"&c=<3>\t\n\r${controls}`,
    alternateUrl: 'https://packs.example/',
    author: { name: `${hostile} ${controls}`, email: 'x&y@example.org' },
    entries: [{
      id: 'urn:e',
      title: hostile,
      updated: '2026-11-24T12:00:00Z',
      link: `https://packs.example/e?q="<&>"`,
      content: { type: 'html', value: `<p title="a&quot;b">${hostile}</p>${controls}` },
      summary: { type: 'text', value: controls },
      categories: [{ term: hostile, label: controls }],
    }],
  })
  // No raw control character survives, and a strict parser accepts the document.
  assert.doesNotMatch(xml, /[\u0000-\u0008\u000b\u000c\u000e-\u001f\uFFFE\uFFFF]/)
  assert.ok(xml.isWellFormed())
  const root = parseStrict(xml)
  assert.equal(child(root, 'id').text, `urn:x:${hostile}`)
  assert.equal(child(root, 'title').text, hostile + expectedControls)
  assert.equal(child(root, 'subtitle').text, expectedControls)
  assert.equal(child(root, 'link').attributes.href, `https://packs.example/feed?a=1&b="2"&c=<3>\t\n\r${expectedControls}`)
  assert.equal(child(child(root, 'author'), 'name').text, `${hostile} ${expectedControls}`)
  assert.equal(child(child(root, 'author'), 'email').text, 'x&y@example.org')
  const entry = child(root, 'entry')
  assert.equal(child(entry, 'title').text, hostile)
  assert.equal(child(entry, 'link').attributes.href, 'https://packs.example/e?q="<&>"')
  assert.equal(child(entry, 'content').text, `<p title="a&quot;b">${hostile}</p>${expectedControls}`)
  assert.equal(child(entry, 'summary').text, expectedControls)
  assert.deepEqual(child(entry, 'category').attributes, { term: hostile, label: expectedControls })
  // And the feed reader reads the same title. It takes a title for HTML and decodes entities in it once more,
  // so its check leaves out the literal "&amp;" and "&#x41;" (the strict parser above read them back exactly).
  const plain = 'a < b && c > d "quoted" \'single\' ]]> <script>alert(1)</script>'
  const parsed = parseFeed(renderAtom({ ...feed, entries: [{ ...feed.entries[0]!, title: plain + controls }] }))
  assert.equal(parsed.items[0]!.title, plain + expectedControls)
})

test('the escapes on their own', () => {
  assert.equal(escapeXmlText('<a href="x">&</a>\r'), '&lt;a href="x"&gt;&amp;&lt;/a&gt;&#13;')
  assert.equal(escapeXmlAttribute('"<&>"\t\n\r\''), '&quot;&lt;&amp;&gt;&quot;&#9;&#10;&#13;\'')
  assert.equal(xmlCharacters('a\u0000b\u0001c\uD83Dd\uD83D\uDE00e\uFFFEf'), 'abcd😀ef')
})

test('an empty feed, and the author rule of RFC 4287 §4.1.1', () => {
  const empty = renderAtom({ ...feed, entries: [] })
  assert.equal(parseFeed(empty).items.length, 0)
  parseStrict(empty)
  // Without a feed author every entry needs one.
  const { author: _author, ...noAuthor } = feed
  assert.throws(() => renderAtom(noAuthor), TypeError)
  assert.throws(() => renderAtom({ ...noAuthor, entries: [] }), TypeError)
  const everyEntry = renderAtom({ ...noAuthor, entries: feed.entries.map((e) => ({ ...e, author: { name: 'dora' } })) })
  assert.deepEqual(parseFeed(everyEntry).items.map((i) => i.authors[0]?.name), ['dora', 'dora'])
})

test('a date that is not one is refused, naming the field', () => {
  assert.throws(() => renderAtom({ ...feed, updated: 'soon' }), /atom: updated is not a date/)
  assert.throws(() => renderAtom({ ...feed, entries: [{ ...feed.entries[0]!, published: 'later' }] }), /atom: entries\[0\]\.published is not a date/)
  assert.throws(() => renderAtom({ ...feed, updated: new Date(Date.UTC(10000, 0, 1)) }), RangeError)
})
