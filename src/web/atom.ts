// Atom 1.0 feeds (RFC 4287), written from a plain object. Feed readers are
// strict XML parsers: one unescaped "&" or a stray control character in a
// changelog and the reader drops the whole feed. So every text and attribute
// goes through one escape, which first removes what XML 1.0 cannot hold at
// all (its Char production, §2.2: C0 controls other than tab, line feed and
// carriage return, unpaired surrogates, U+FFFE and U+FFFF; no escape can
// carry them either), then escapes what would be read as markup. A carriage
// return is written as &#13; (and in attributes also tab and line feed, as
// &#9; and &#10;), because a parser would otherwise normalise it away.
//
// Dates are RFC 3339 in UTC ("2026-11-24T12:00:00.000Z"). HTML content is
// written as escaped text with type="html" (§3.1.1.2), the form every reader
// understands. Readers show that markup, so what is passed must already be
// safe to show: the Markdown renderer's sanitised output, never raw input.

/** The Content-Type of a feed. */
export const ATOM_MEDIA_TYPE = 'application/atom+xml; charset=utf-8'

export interface AtomPerson {
  name: string
  uri?: string | null
  email?: string | null
}

/** Text as Atom carries it: plain text, or HTML markup (written escaped). */
export interface AtomText {
  type: 'text' | 'html'
  value: string
}

export interface AtomEntry {
  /** A permanent IRI for the entry (a URN or its page's URL): readers use it to tell new entries from seen ones. */
  id: string
  title: string
  updated: Date | string
  published?: Date | string | null
  /** The entry's page (rel="alternate"). */
  link: string
  /** Required unless the feed has an author (RFC 4287 §4.1.1). */
  author?: AtomPerson | readonly AtomPerson[] | null
  content?: AtomText | null
  /** Plain text, or an AtomText. */
  summary?: string | AtomText | null
  categories?: ReadonlyArray<{ term: string; label?: string | null }> | null
}

export interface AtomFeed {
  /** A permanent IRI for the feed: a URN or the page's URL. */
  id: string
  title: string
  subtitle?: string | null
  /** When the feed last changed (its newest entry, or when it was emptied). */
  updated: Date | string
  /** The feed's own URL (rel="self"). */
  selfUrl: string
  /** The page the feed is about (rel="alternate"). */
  alternateUrl: string
  author?: AtomPerson | readonly AtomPerson[] | null
  icon?: string | null
  generator?: { name: string; uri?: string | null; version?: string | null } | null
  entries: readonly AtomEntry[]
}

/** Characters outside XML 1.0's Char production; with the u flag an unpaired surrogate is one of them. */
const NOT_XML_CHAR = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu
const TEXT_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '\r': '&#13;' }
const ATTRIBUTE_ESCAPES: Record<string, string> = { ...TEXT_ESCAPES, '"': '&quot;', '\t': '&#9;', '\n': '&#10;' }

/** `text` with the characters XML 1.0 cannot hold removed. */
export function xmlCharacters(text: string): string {
  return text.replace(NOT_XML_CHAR, '')
}

/** Character data: "&", "<", ">" (so "]]>" cannot appear) and carriage returns escaped. */
export function escapeXmlText(text: string): string {
  return xmlCharacters(text).replace(/[&<>\r]/g, (c) => TEXT_ESCAPES[c]!)
}

/** A double-quoted attribute's value: as text, plus '"', tab and line feed. */
export function escapeXmlAttribute(text: string): string {
  return xmlCharacters(text).replace(/[&<>"\r\t\n]/g, (c) => ATTRIBUTE_ESCAPES[c]!)
}

/** An RFC 3339 date-time in UTC; a RangeError naming the field when it is not a date within years 0 to 9999. */
function dateTime(value: Date | string, field: string): string {
  const date = value instanceof Date ? value : new Date(value)
  const year = date.getUTCFullYear()
  if (!(year >= 0 && year <= 9999)) throw new RangeError(`atom: ${field} is not a date`)
  return date.toISOString()
}

const element = (name: string, text: string, attributes = ''): string => `<${name}${attributes}>${escapeXmlText(text)}</${name}>`
const attribute = (name: string, value: string | null | undefined): string => (value ? ` ${name}="${escapeXmlAttribute(value)}"` : '')

function textElement(name: string, text: string | AtomText): string {
  const { type, value } = typeof text === 'string' ? { type: 'text', value: text } : text
  return element(name, value, attribute('type', type))
}

function authors(value: AtomPerson | readonly AtomPerson[] | null | undefined, indent: string): string[] {
  const list: readonly AtomPerson[] = value === null || value === undefined ? [] : Array.isArray(value) ? value : [value as AtomPerson]
  return list.map((person) => {
    const parts = [element('name', person.name)]
    if (person.uri) parts.push(element('uri', person.uri))
    if (person.email) parts.push(element('email', person.email))
    return `${indent}<author>${parts.join('')}</author>`
  })
}

const hasPeople = (value: AtomPerson | readonly AtomPerson[] | null | undefined): boolean =>
  value !== null && value !== undefined && (!Array.isArray(value) || value.length > 0)

function entryLines(entry: AtomEntry, index: number): string[] {
  const lines = [
    '  <entry>',
    `    ${element('id', entry.id)}`,
    `    ${element('title', entry.title, ' type="text"')}`,
    `    ${element('updated', dateTime(entry.updated, `entries[${index}].updated`))}`,
  ]
  if (entry.published) lines.push(`    ${element('published', dateTime(entry.published, `entries[${index}].published`))}`)
  lines.push(`    <link rel="alternate" type="text/html"${attribute('href', entry.link)}/>`)
  lines.push(...authors(entry.author, '    '))
  for (const category of entry.categories ?? []) lines.push(`    <category${attribute('term', category.term)}${attribute('label', category.label)}/>`)
  if (entry.summary) lines.push(`    ${textElement('summary', entry.summary)}`)
  if (entry.content) lines.push(`    ${textElement('content', entry.content)}`)
  lines.push('  </entry>')
  return lines
}

/**
 * The feed as an Atom 1.0 document (UTF-8, to be sent as ATOM_MEDIA_TYPE). Throws a TypeError when neither the
 * feed nor every entry has an author (RFC 4287 §4.1.1; an empty feed needs its own), and a RangeError when a
 * date is not one.
 */
export function renderAtom(feed: AtomFeed): string {
  // An empty feed without an author meets the rule only vacuously; validators and some readers want one.
  if (!hasPeople(feed.author) && (feed.entries.length === 0 || !feed.entries.every((entry) => hasPeople(entry.author)))) {
    throw new TypeError('atom: a feed needs an author, or one on every entry')
  }
  const lines = [
    '<?xml version="1.0" encoding="utf-8"?>',
    '<feed xmlns="http://www.w3.org/2005/Atom">',
    `  ${element('id', feed.id)}`,
    `  ${element('title', feed.title, ' type="text"')}`,
  ]
  if (feed.subtitle) lines.push(`  ${element('subtitle', feed.subtitle, ' type="text"')}`)
  lines.push(`  ${element('updated', dateTime(feed.updated, 'updated'))}`)
  lines.push(`  <link rel="self" type="application/atom+xml"${attribute('href', feed.selfUrl)}/>`)
  lines.push(`  <link rel="alternate" type="text/html"${attribute('href', feed.alternateUrl)}/>`)
  lines.push(...authors(feed.author, '  '))
  if (feed.generator) {
    lines.push(`  ${element('generator', feed.generator.name, attribute('uri', feed.generator.uri) + attribute('version', feed.generator.version))}`)
  }
  if (feed.icon) lines.push(`  ${element('icon', feed.icon)}`)
  feed.entries.forEach((entry, index) => lines.push(...entryLines(entry, index)))
  lines.push('</feed>', '')
  return lines.join('\n')
}
