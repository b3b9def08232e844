// Pages kept whole, as a search engine keeps its answers: what a listing page
// renders for one query while nothing it shows has changed. A busy site asks
// for the same few pages (the front page, its first pages, popular searches)
// far more often than anything changes, and rendering one costs milliseconds
// (the search, the facet counts, the cards); a kept one costs a lookup. Each
// entry names the version of what it pictures; an entry of another version is
// never served and is dropped when met. Bounded by entries and by characters,
// the least recently used going first, so a crawler walking every page of
// every search cannot grow it.
export interface KeptPage {
  title: string
  /**
   * The page's main part as UTF-8 bytes, encoded once: a page's HTML is a string of two-byte characters (its
   * quotes, its dashes), and encoding 75 KB of it again for every answer, twice (its length, then its bytes),
   * was most of what a kept page cost.
   */
  body: Buffer
}

interface Entry {
  version: string
  page: KeptPage
  at: number
  size: number
}

export class PageCache {
  private readonly entries = new Map<string, Entry>()
  private size = 0
  hits = 0
  misses = 0

  /**
   * @param maxEntries pages kept at most
   * @param maxChars bytes of HTML kept at most, all pages together
   * @param maxAgeMs the longest any page is kept, whatever its version says: a safety net for a change that
   *   moves no version
   */
  constructor(private readonly maxEntries: number, private readonly maxChars: number, private readonly maxAgeMs: number) {}

  get(key: string, version: string, now: number): KeptPage | undefined {
    const entry = this.entries.get(key)
    if (entry === undefined || entry.version !== version || now - entry.at > this.maxAgeMs || now < entry.at) {
      if (entry !== undefined) this.drop(key, entry)
      this.misses += 1
      return undefined
    }
    // Most recently used last: Map keeps insertion order.
    this.entries.delete(key)
    this.entries.set(key, entry)
    this.hits += 1
    return entry.page
  }

  set(key: string, version: string, page: KeptPage, now: number): void {
    const size = page.body.length + page.title.length
    if (size > this.maxChars / 8) return
    const old = this.entries.get(key)
    if (old !== undefined) this.drop(key, old)
    this.entries.set(key, { version, page, at: now, size })
    this.size += size
    while (this.entries.size > this.maxEntries || this.size > this.maxChars) {
      const [oldestKey, oldest] = this.entries.entries().next().value as [string, Entry]
      this.drop(oldestKey, oldest)
    }
  }

  get count(): number {
    return this.entries.size
  }

  private drop(key: string, entry: Entry): void {
    this.entries.delete(key)
    this.size -= entry.size
  }
}
