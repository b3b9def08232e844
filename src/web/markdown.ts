// A pack's description: Markdown rendered to HTML that is safe to put in a
// page. markdown-it with html:false escapes every raw HTML tag the author
// writes, so the only markup in the output is what markdown-it's own rules
// produce; on top of that, links may only go to http(s), mailto or the site
// itself, links are marked as user content (rel=nofollow ugc), images are
// kept only when they stay on our own origin (the pages' CSP would refuse
// any other anyway), and headings are shifted below the page's own h1/h2.
import { createHash } from 'node:crypto'
import MarkdownIt, { type MarkdownIt as Renderer } from 'markdown-it'

/** Schemes a link in a description may use; anything else (javascript:, vbscript:, data:, file:, …) is no link. */
const ALLOWED_SCHEMES = new Set(['http:', 'https:', 'mailto:'])
const SCHEME = /^([a-z][a-z0-9+.-]*):/i
/** Control characters and spaces browsers strip or ignore inside a scheme ("java\tscript:"). */
const IGNORED_IN_SCHEME = /[\u0000-\u0020\u007f-\u009f]/g

const LINK_REL = 'nofollow ugc noopener noreferrer'
/** The description sits under the page's h1 and a section h2: its "# Heading" becomes an h3. */
const HEADING_SHIFT = 2
/**
 * Deepest nesting of blocks (quotes, lists) and of inline markup markdown-it
 * will parse; deeper content is cut off (blocks) or left as text (inline).
 * CommonMark's own preset uses 20; no description needs more, and each level
 * is work and markup: 10,000 `>` render as 20 quotes, in milliseconds.
 */
const MAX_NESTING = 20

export function isAllowedLink(url: string): boolean {
  const compact = url.replace(IGNORED_IN_SCHEME, '')
  const scheme = SCHEME.exec(compact)
  if (!scheme) return true // relative: a path, a query or a #fragment on this site
  return ALLOWED_SCHEMES.has(scheme[1]!.toLowerCase() + ':')
}

const PROBE_ORIGIN = 'https://packs.invalid'

/** An image source that stays on our own origin: a relative or root-relative path, not "//host" nor any scheme. */
export function isSameOriginImage(src: string): boolean {
  if (src.trim() === '' || SCHEME.test(src.replace(IGNORED_IN_SCHEME, ''))) return false
  try {
    return new URL(src, `${PROBE_ORIGIN}/packs/a/b/`).origin === PROBE_ORIGIN
  } catch {
    return false
  }
}

function createRenderer(): Renderer {
  const md = new MarkdownIt({ html: false, linkify: true, typographer: false, breaks: false, maxNesting: MAX_NESTING })
  md.validateLink = isAllowedLink

  md.renderer.rules.link_open = (tokens, idx, options, _env, self) => {
    tokens[idx]!.attrSet('rel', LINK_REL)
    return self.renderToken(tokens, idx, options)
  }

  const defaultImage = md.renderer.rules.image!
  md.renderer.rules.image = (tokens, idx, options, env, self) => {
    const token = tokens[idx]!
    if (isSameOriginImage(String(token.attrGet('src') ?? ''))) {
      token.attrSet('loading', 'lazy')
      return defaultImage(tokens, idx, options, env, self)
    }
    // Dropped: what remains is its alt text, as text.
    return md.utils.escapeHtml(self.renderInlineAsText(token.children ?? [], options, env))
  }

  const shift = (tag: string): string => `h${Math.min(6, Number(tag.slice(1)) + HEADING_SHIFT)}`
  md.renderer.rules.heading_open = (tokens, idx, options, _env, self) => {
    tokens[idx]!.tag = shift(tokens[idx]!.tag)
    return self.renderToken(tokens, idx, options)
  }
  md.renderer.rules.heading_close = (tokens, idx, options, _env, self) => {
    tokens[idx]!.tag = shift(tokens[idx]!.tag)
    return self.renderToken(tokens, idx, options)
  }

  // Wide tables scroll inside their own box instead of widening a phone's page.
  md.renderer.rules.table_open = (tokens, idx, options, _env, self) => `<div class="table-scroll">${self.renderToken(tokens, idx, options)}`
  md.renderer.rules.table_close = (tokens, idx, options, _env, self) => `${self.renderToken(tokens, idx, options)}</div>`
  return md
}

const renderer = createRenderer()

/** HTML for a description written in Markdown; raw HTML in the source comes out escaped, as text. */
export function renderMarkdown(source: string): string {
  return renderer.render(source)
}

/**
 * Rendered descriptions, by SHA-256 of their source, least recently used
 * first out; bounded by the total size of the HTML and by the number of
 * entries. A 250 KB description costs markdown-it about half a second of CPU,
 * so a pack page renders it on its first view after a change and then reuses
 * it. Keyed by content rather than by pack and updated_at: nothing needs
 * invalidating, whichever code path changes a description, and identical
 * descriptions share one entry. The sources are users' text, so both bounds
 * matter: at most `maxBytes` of HTML is held, whatever they write.
 */
export class MarkdownCache {
  private readonly entries = new Map<string, string>()
  private heldBytes = 0
  hits = 0
  misses = 0

  constructor(
    private readonly maxBytes: number,
    private readonly maxEntries: number,
    private readonly render: (source: string) => string = renderMarkdown,
  ) {}

  get bytes(): number {
    return this.heldBytes
  }

  get size(): number {
    return this.entries.size
  }

  html(source: string): string {
    // UTF-16 code units, not UTF-8: UTF-8 would turn every lone surrogate into U+FFFD, so two different sources could share a key.
    const key = createHash('sha256').update(source, 'utf16le').digest('base64')
    const cached = this.entries.get(key)
    if (cached !== undefined) {
      this.hits += 1
      this.entries.delete(key)
      this.entries.set(key, cached)
      return cached
    }
    this.misses += 1
    const html = this.render(source)
    const size = sizeOf(html)
    // One huge rendering must not flush everything else.
    if (size > this.maxBytes / 4) return html
    this.entries.set(key, html)
    this.heldBytes += size
    for (const [oldKey, oldHtml] of this.entries) {
      if (this.heldBytes <= this.maxBytes && this.entries.size <= this.maxEntries) break
      this.entries.delete(oldKey)
      this.heldBytes -= sizeOf(oldHtml)
    }
    return html
  }
}

/** Bytes a string may take on the heap (two per UTF-16 code unit at most), plus the key and the map's own entry. */
function sizeOf(html: string): number {
  return html.length * 2 + 128
}

/**
 * 32 MiB: the descriptions of a site of a few thousand packs (a few KiB of
 * HTML each), or a dozen of the largest a draft can hold (256 KiB of source).
 */
export const descriptionCache = new MarkdownCache(32 * 1024 * 1024, 10_000)

/** A pack's description as HTML, rendered once per distinct source (see MarkdownCache). */
export function renderDescription(source: string): string {
  return descriptionCache.html(source)
}
