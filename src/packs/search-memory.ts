// An in-memory copy of the search index, kept by each instance, that answers
// a search's hits, count and facet counts without the database doing the
// heavy part (docs/site.md#search, "how a search is answered").
//
// The database stays the index of record: each change writes a pack's entry
// (pack_search, FTS5 on SQLite, a tsvector on PostgreSQL) in its own
// transaction, and triggers append the pack's row id to search_changes
// (migration 0011). Before each search this copy reads what was appended
// since it last looked (one read by the log's key, nearly always empty) and
// re-reads those packs' entries, so a search sees every committed change of
// any instance, as the SQL search does. While the copy loads (at the first
// search after a start), or when a large batch of changes is waiting (an
// import, the daily trending fold), searches are answered by SQL
// (search-repository.ts) and the copy catches up beside them.
//
// What it answers is what the SQL answers, the same hits in the same order,
// the same counts (test/http/search-memory.test.ts compares them on both
// engines): a text match is a word of any field equal to one of a query
// word's alternatives or starting with its prefix, ranked by rankOf's integer
// formula; the filters, facets and sorts are whereOf's, facetCounts' and
// orderOf's.
import { setImmediate as nextTurn } from 'node:timers/promises'
import type { Db } from '../db/index.js'
import { CHANGE_LOG_KEEP_MS, changesAfter, changesAmong, firstChange, lastChange } from './search-changes-repository.js'
import {
  FIRST_LETTERS, lowerFoldsEveryLetter, RANKED_FIELD_WEIGHTS, readIndexEntries, type FacetName, type IndexEntry, type SearchQuery, type SearchSort,
} from './search-repository.js'

/**
 * Packs read per page while loading, and per read while catching up: each page is a stretch of synchronous
 * work (SQLite's reads and building the lists, about 40 ms at 250), and requests wait between pages.
 */
const PAGE = 250
/** More changes than this waiting: the copy catches up in the background, and SQL answers meanwhile. */
const BACKLOG = 1000
/**
 * How long a missing change number is waited for. On PostgreSQL a change's number is handed out when its
 * row is written, and transactions commit in another order: a reader may see 15 before 14. A number that
 * never comes was rolled back.
 */
const GAP_WAIT_MS = 60_000
/** How long after a failed load the next search tries again. */
const RETRY_MS = 60_000
/** More missing numbers than this at once (a mass rollback): everything is read again. */
const MAX_GAPS = 10_000
/** Facet counts kept per copy, for the same search on the same copy within FACET_TTL_MS. */
const FACET_ENTRIES = 500
/** The "updated within" windows move with the clock: counts older than this are counted again. */
const FACET_TTL_MS = 30_000
/** Pages and counts kept per version of the copy (a few hundred bytes each). */
const ANSWER_ENTRIES = 2_000
/** Typo candidates kept per version of the copy (up to some tens of kilobytes each). */
const NEAR_ENTRIES = 200

// A facet's bit, in what a pack fails.
const KIND = 1
const MC = 2
const CATEGORIES = 4
const TAGS = 8
const UPDATED = 16
/** Tag options counted (facetCounts' limit). */
const TAG_OPTIONS = 30
/** A posting is slot * 64 + the mask of the fields (bit per RANKED_FIELDS entry) holding the word. */
const MASK = 64
const NO_MEMBERS: string[] = []

/** A word of the copy: its number (what the word pools hold) and its postings. */
interface Term {
  readonly word: string
  readonly number: number
  readonly list: number[]
}
/** For each field mask, the sum of its fields' weights. */
const FIELD_SUMS: readonly number[] = Array.from({ length: 64 }, (_, mask) =>
  RANKED_FIELD_WEIGHTS.reduce((sum, weight, field) => sum + ((mask & (1 << field)) !== 0 ? weight : 0), 0))

/** A query's filters, turned into what a pack's slot is checked against (releases, tags, categories by number). */
interface Filters {
  listedOnly: boolean
  ownerId: string | undefined
  memberId: string | undefined
  kinds: number[] | undefined
  /** Each group any of (as release bits, the copy's releaseStride words), the groups all of. */
  releases: Uint32Array[] | undefined
  /** 1 at each chosen category's number. */
  categories: Uint8Array | undefined
  /** All of. */
  tags: number[] | undefined
  updatedSince: string | undefined
  updatedSinceMs: number
}

/**
 * A search's one pass (SearchSnapshot.evaluate): the first `size` places of `slots`, `fails` and `ranks`
 * (the copy's scratch space, good until the next search is evaluated).
 */
interface Evaluation {
  query: SearchQuery
  version: number
  size: number
  slots: Int32Array
  /** The facets whose filter each fails (0: a hit). */
  fails: Uint8Array
  /** With words: each one's rank. */
  ranks: Float64Array
  /** How many fail nothing. */
  passing: number
}

/**
 * The working arrays of a search, kept between searches and grown with the copy: allocating arrays of tens
 * of thousands of entries for each search costs more than the search itself. Searches run one at a time
 * (each is synchronous once the copy is current).
 */
class Scratch {
  capacity = 0
  wordBits: Uint32Array[] = []
  seen: Int32Array[] = []
  seenCount: number[] = []
  wordHits = new Uint8Array(0)
  matched = new Int32Array(0)
  slots = new Int32Array(0)
  fails = new Uint8Array(0)
  ranks = new Float64Array(0)
  positions = new Int32Array(0)

  fit(size: number, words: number): this {
    if (size > this.capacity) {
      this.capacity = Math.max(1024, size * 2)
      this.wordBits = []
      this.seen = []
      this.seenCount = []
      this.wordHits = new Uint8Array(this.capacity)
      this.matched = new Int32Array(this.capacity)
      this.slots = new Int32Array(this.capacity)
      this.fails = new Uint8Array(this.capacity)
      this.ranks = new Float64Array(this.capacity)
      this.positions = new Int32Array(this.capacity)
    }
    while (this.wordBits.length < words) {
      this.wordBits.push(new Uint32Array(this.capacity))
      this.seen.push(new Int32Array(this.capacity))
      this.seenCount.push(0)
    }
    return this
  }

  /** Zeroes what a search's words marked. */
  clear(words: number): void {
    for (let i = 0; i < words; i++) {
      const bits = this.wordBits[i]!
      const seen = this.seen[i]!
      for (let s = 0; s < this.seenCount[i]!; s++) {
        bits[seen[s]!] = 0
        this.wordHits[seen[s]!] = 0
      }
      this.seenCount[i] = 0
    }
  }
}

/** A sort with an order of its own, without words. */
type OrderSort = Exclude<SearchSort, 'relevance'>

/** The log lost changes this copy never read (pruned, or too many missing at once): it is read again whole. */
class MissedChanges extends Error {}

/** A word's length in code points, as SQL's length() counts it. */
function codePoints(text: string): number {
  let n = text.length
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c >= 0xd800 && c <= 0xdbff) n--
  }
  return n
}

/** Binary search in a sorted list (numbers, or words in code unit order): the first index whose value is >= `value`. */
function lowerBound<T extends number | string>(values: readonly T[], value: T): number {
  let lo = 0
  let hi = values.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (values[mid]! < value) lo = mid + 1
    else hi = mid
  }
  return lo
}

/**
 * Code point order, as the database compares keys (SQLite's BINARY, PostgreSQL's collate "C"): UTF-16 code
 * units order the same except between a surrogate pair and U+E000..U+FFFF.
 */
export function compareCodePoints(a: string, b: string): number {
  if (a === b) return 0
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i)
    const y = b.charCodeAt(i)
    if (x === y) continue
    const xs = x >= 0xd800 && x <= 0xdfff
    const ys = y >= 0xd800 && y <= 0xdfff
    if (xs !== ys) return xs ? 1 : -1
    return x - y
  }
  return a.length - b.length
}

/** The title sort's key, as the database's lower() makes it: every letter folded, or A to Z only (lowerFoldsEveryLetter). */
function titleKeyOf(foldsEveryLetter: boolean, title: string): string {
  return foldsEveryLetter ? title.toLowerCase() : title.replace(/[A-Z]+/g, (s) => s.toLowerCase())
}

export class SearchSnapshot {
  private state: 'empty' | 'loading' | 'ready' | 'catching-up' | 'failed' = 'empty'
  /** Bumped by every change applied: facet counts are kept per version. */
  version = 0
  private lastSeq = 0
  private readonly gaps = new Map<number, number>()
  private running: Promise<void> | undefined
  private queued: Promise<void> | undefined
  private readonly facetCache = new Map<string, { at: number; counts: Record<FacetName, Array<{ value: string; count: number }>> }>()
  /**
   * This version's answers (pages, counts, typo candidates) by question: the same search asked again before
   * anything changes (a popular search, the next visitor of a page) is not worked out again, as a search
   * engine's request cache keeps a shard's answers until it refreshes. Emptied by every change applied.
   */
  private readonly answers = new Map<string, readonly unknown[] | number>()
  private readonly nearAnswers = new Map<string, ReadonlyArray<{ term: string; docs: number }>>()
  private answersVersion = -1

  // One slot per pack; a freed slot is reused.
  private readonly slotOf = new Map<string, number>()
  private readonly free: number[] = []
  private ids: Array<string | undefined> = []
  private names: string[] = []
  private titleKeys: string[] = []
  private owners: string[] = []
  private members: string[][] = []
  // What every search reads for each of the packs it considers is in typed arrays (one number a slot, grown
  // by doubling): a pass over 100,000 packs reading them costs a tenth of one reading arrays of arrays and
  // comparing date strings.
  private capacity = 0
  private listed = new Uint8Array(0)
  private kinds = new Uint8Array(0)
  /** The category's number (categoryKeys), -1 for none. */
  private categories = new Int32Array(0)
  private downloads = new Float64Array(0)
  private trending = new Float64Array(0)
  /** The dates as milliseconds, compared first; the stored text decides between equal ones (as SQL compares). */
  private createdMs = new Float64Array(0)
  private updatedMs = new Float64Array(0)
  private created: string[] = []
  private updated: string[] = []
  /** Each slot's releases as bits by number (releaseNames): releaseStride 32-bit words a slot. */
  private releaseBits = new Uint32Array(0)
  private releaseStride = 1
  // Each slot's tag numbers (tagNames) are tagLength[slot] numbers from tagStart[slot] in one shared pool, in
  // slot order after a load: a pass counting tags reads memory in order, not one small array per pack.
  private tagStart = new Int32Array(0)
  private tagLength = new Int32Array(0)
  private tagPool = new Int32Array(0)
  private tagPoolUsed = 0
  /** Pool entries no slot uses any more (a slot's tags replaced by more, or its pack gone): compacted at half. */
  private tagPoolFree = 0
  // Each slot's distinct words (as term numbers) and their field masks, what its postings hold, to take them
  // out again: wordLength[slot] entries from wordStart[slot] in two shared pools, kept like the tags'. One
  // array of strings and one of masks a pack were millions of slots that every old-generation collection
  // visited; numbers in a typed array are not visited at all.
  private wordStart = new Int32Array(0)
  private wordLength = new Int32Array(0)
  private wordPool = new Int32Array(0)
  private maskPool = new Uint8Array(0)
  private wordPoolUsed = 0
  private wordPoolFree = 0
  // Releases, tags and categories are numbered as first seen: counting them is then indexing an array.
  private readonly releaseNumbers = new Map<string, number>()
  private readonly releaseNames: string[] = []
  private readonly tagNumbers = new Map<string, number>()
  private readonly tagNames: Array<{ name: string; nameLower: string }> = []
  private readonly categoryNumbers = new Map<string, number>()
  private readonly categoryKeys: string[] = []
  /** The last search evaluated: its page, count and facets are read from one pass. */
  private memo: Evaluation | undefined
  /** A user's slot, or their slots when they have several (most people own one pack: no set for them). */
  private readonly ownerSlots = new Map<string, number | Set<number>>()
  private readonly memberSlots = new Map<string, number | Set<number>>()
  /** A tag's (by number) slots: a tag filter's packs are among its rarest tag's, found without a pass over all. */
  private readonly tagSlots = new Map<number, number | Set<number>>()

  /** word -> the word (one string shared by every pack that has it) and its postings (slot * 64 + field mask), in slot order. */
  private readonly postings = new Map<string, Term>()
  /** The terms by number (wordPool holds numbers); a number is given out again once its term is gone. */
  private readonly terms: Array<Term | undefined> = []
  private readonly freeTerms: number[] = []
  /** Every word with postings, sorted: a prefix's words are a range. */
  private vocabulary: string[] = []

  private readonly scratch = new Scratch()
  /**
   * Every pack's slot in a sort's order, for searches without words: their page is the first packs of the
   * order that pass the filters, found without comparing the others. Made at the first search of that sort
   * and kept in order as packs change (a change moves a slot: two binary searches and a copy of the array's
   * tail, far less than sorting again).
   */
  private readonly orders = new Map<OrderSort, { slots: Int32Array; length: number }>()
  /** How the database's lower() folds titles (read when loading). */
  private foldsEveryLetter = false
  
  /** When the last poll of the log was made: a copy that has not polled for long may have missed pruned changes. */
  private lastPollAt = 0
  /** True while the copy is read whole (load). */
  private loading = false
  private closed = false
  private failedAt = 0

  /** Packs in the copy. */
  get size(): number {
    return this.slotOf.size
  }

  /**
   * Brings the copy up to every change committed before this call; false when it cannot answer yet (it is
   * loading or catching up with a large batch, in the background): the caller asks SQL instead.
   */
  async current(db: Db): Promise<boolean> {
    if (this.closed) return false
    // A failed load (the database was unreachable) is tried again after a while, not on every search.
    if (this.state === 'failed' && Date.now() - this.failedAt > RETRY_MS) this.state = 'empty'
    // Changes older than the log keeps may have been pruned before this copy read them: it is read again.
    if (this.state === 'ready' && Date.now() - this.lastPollAt > CHANGE_LOG_KEEP_MS / 2) this.reset()
    if (this.state === 'empty') {
      this.state = 'loading'
      void this.load(db)
      return false
    }
    if (this.state !== 'ready') return false
    try {
      await this.refresh(db)
    } catch (error) {
      if (error instanceof MissedChanges && this.state === 'ready') this.reset()
      return false
    }
    return this.state === 'ready'
  }

  /** Resolves once the copy has loaded (tests, the bench); rejects when loading failed or the app closed. */
  async loaded(db: Db): Promise<void> {
    while (!(await this.current(db))) {
      if (this.state === 'failed') throw new Error('the search index could not be loaded into memory')
      if (this.closed) throw new Error('the app closed before the search index was loaded into memory')
      // Ends when the app closes (close()): a wait never outlives it.
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  }

  /** The app is closing (its database next): the copy answers nothing more, and a wait for it ends. */
  close(): void {
    this.closed = true
    this.reset()
  }

  /** Forgets everything: the next search starts loading the copy again. */
  private reset(): void {
    this.state = 'empty'
    this.version++
    this.memo = undefined
    this.facetCache.clear()
    this.orders.clear()
    this.gaps.clear()
    this.slotOf.clear()
    this.free.length = 0
    for (const list of [this.ids, this.names, this.titleKeys, this.owners, this.members, this.created, this.updated,
      this.terms, this.freeTerms, this.releaseNames, this.tagNames, this.categoryKeys, this.vocabulary] as unknown[][]) list.length = 0
    this.capacity = 0
    this.listed = new Uint8Array(0)
    this.kinds = new Uint8Array(0)
    this.categories = new Int32Array(0)
    this.downloads = new Float64Array(0)
    this.trending = new Float64Array(0)
    this.createdMs = new Float64Array(0)
    this.updatedMs = new Float64Array(0)
    this.releaseStride = 1
    this.releaseBits = new Uint32Array(0)
    this.tagStart = new Int32Array(0)
    this.tagLength = new Int32Array(0)
    this.tagPool = new Int32Array(0)
    this.tagPoolUsed = 0
    this.tagPoolFree = 0
    this.wordStart = new Int32Array(0)
    this.wordLength = new Int32Array(0)
    this.wordPool = new Int32Array(0)
    this.maskPool = new Uint8Array(0)
    this.wordPoolUsed = 0
    this.wordPoolFree = 0
    for (const map of [this.releaseNumbers, this.tagNumbers, this.categoryNumbers, this.ownerSlots, this.memberSlots, this.tagSlots, this.postings] as Array<Map<unknown, unknown>>) map.clear()
  }

  private async load(db: Db): Promise<void> {
    try {
      // Changes from here on are read again once loaded (re-reading a pack is harmless); from a little
      // before, since on PostgreSQL a smaller number may still be committing.
      // Never from before the log's first number: what was pruned is in the entries read now.
      const [last, first] = await Promise.all([lastChange(db), firstChange(db)])
      this.lastSeq = Math.max(0, last - BACKLOG, (first ?? last + 1) - 1)
      this.gaps.clear()
      this.foldsEveryLetter = await lowerFoldsEveryLetter(db)
      this.lastPollAt = Date.now()
      let after = ''
      this.loading = true
      try {
        for (;;) {
          const entries = await readIndexEntries(db, { after, limit: PAGE })
          // The app closed meanwhile (its database next): the rest is not read into the emptied copy.
          if (this.closed) throw new Error('the app closed while the search index was loading')
          for (const entry of entries) this.put(entry)
          if (entries.length < PAGE) break
          after = entries.at(-1)!.id
          await nextTurn()
        }
      } finally {
        this.loading = false
        this.vocabulary.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
      }
      this.state = 'catching-up'
      await this.catchUp(db)
    } catch {
      this.state = 'failed'
      this.failedAt = Date.now()
    }
  }

  /** Reads the log until little is left, then answers again. */
  private async catchUp(db: Db): Promise<void> {
    try {
      while (await this.pollOnce(db)) await nextTurn()
      this.state = 'ready'
    } catch (error) {
      if (error instanceof MissedChanges) {
        this.reset()
      } else {
        this.state = 'failed'
        this.failedAt = Date.now()
      }
    }
  }

  /** A poll that starts after this call: every change committed before the call is then applied. */
  private refresh(db: Db): Promise<void> {
    if (!this.running) {
      this.running = this.pollOnce(db).then((more) => {
        if (more && this.state === 'ready') {
          this.state = 'catching-up'
          void this.catchUp(db)
        }
      }).finally(() => { this.running = undefined })
      return this.running
    }
    this.queued ??= this.running.catch(() => {}).then(() => {
      this.queued = undefined
      return this.refresh(db)
    })
    return this.queued
  }

  /** Applies the changes logged since the last poll (at most BACKLOG); true when more are waiting. */
  private async pollOnce(db: Db): Promise<boolean> {
    const now = Date.now()
    for (const [seq, since] of this.gaps) if (now - since > GAP_WAIT_MS) this.gaps.delete(seq)
    const [rows, late] = await Promise.all([
      changesAfter(db, this.lastSeq, BACKLOG),
      this.gaps.size === 0 ? [] : changesAmong(db, [...this.gaps.keys()]),
    ])
    this.lastPollAt = now
    // A number past the next one: on PostgreSQL perhaps one still committing, or changes pruned from the log
    // before this copy read them (it did not poll for over an hour), then everything is read again.
    if (rows.length > 0 && rows[0]!.seq > this.lastSeq + 1) {
      const first = await firstChange(db)
      if (first !== undefined && first > this.lastSeq + 1) throw new MissedChanges()
    }
    const changed = new Set<string>()
    for (const row of late) {
      this.gaps.delete(row.seq)
      changed.add(row.packRowId)
    }
    for (const row of rows) {
      for (let missing = this.lastSeq + 1; missing < row.seq && this.gaps.size <= MAX_GAPS; missing++) this.gaps.set(missing, now)
      this.lastSeq = Math.max(this.lastSeq, row.seq)
      changed.add(row.packRowId)
    }
    if (this.gaps.size > MAX_GAPS) throw new MissedChanges('too many changes missing from the search log')
    const ids = [...changed]
    for (let start = 0; start < ids.length; start += PAGE) {
      const part = ids.slice(start, start + PAGE)
      const entries = await readIndexEntries(db, { ids: part })
      const found = new Set(entries.map((e) => e.id))
      for (const id of part) if (!found.has(id)) this.remove(id)
      for (const entry of entries) this.put(entry)
    }
    if (ids.length > 0) {
      this.version++
      this.facetCache.clear()
    }
    return rows.length === BACKLOG
  }

  // ---------------------------------------------------------------- keeping the copy

  private put(entry: IndexEntry): void {
    let slot = this.slotOf.get(entry.id)
    if (slot === undefined) {
      slot = this.free.pop() ?? this.ids.length
      this.slotOf.set(entry.id, slot)
      if (slot >= this.capacity) this.grow(slot + 1)
    } else {
      this.unlink(slot)
      this.leaveOrders(slot)
    }
    this.ids[slot] = entry.id
    this.names[slot] = `${entry.namespace}\u0000${entry.packId}`
    this.titleKeys[slot] = titleKeyOf(this.foldsEveryLetter, entry.title)
    this.owners[slot] = entry.ownerId
    this.members[slot] = entry.members.length === 0 ? NO_MEMBERS : entry.members
    this.listed[slot] = !entry.hidden && !entry.ownerDisabled && entry.publicVersions > 0 ? 1 : 0
    this.kinds[slot] = entry.kinds
    this.categories[slot] = entry.categoryId === null ? -1 : this.categoryNumber(entry.categoryId, entry.categoryKey ?? '')
    this.created[slot] = entry.createdAt
    this.updated[slot] = entry.updatedAt
    this.createdMs[slot] = Date.parse(entry.createdAt)
    this.updatedMs[slot] = Date.parse(entry.updatedAt)
    this.downloads[slot] = entry.downloads
    this.trending[slot] = entry.trending
    const releases = entry.releases.map((release) => this.releaseNumber(release))
    const stride = this.releaseStride
    this.releaseBits.fill(0, slot * stride, slot * stride + stride)
    for (const release of releases) this.releaseBits[slot * stride + (release >>> 5)]! |= 1 << (release & 31)
    this.setTags(slot, entry.tags.map((tag) => this.tagNumber(tag)))
    addTo(this.ownerSlots, entry.ownerId, slot)
    for (const member of entry.members) addTo(this.memberSlots, member, slot)

    const masks = new Map<string, number>()
    entry.fields.forEach((text, field) => {
      for (const word of text.split(' ')) if (word !== '') masks.set(word, (masks.get(word) ?? 0) | (1 << field))
    })
    const start = this.placeWords(slot, masks.size)
    let at = start
    for (const [word, mask] of masks) {
      let term = this.postings.get(word)
      if (!term) {
        // A copy of the word, not a slice of the pack's text: a slice would keep the whole text alive.
        const own = Buffer.from(word, 'utf8').toString('utf8')
        const number = this.freeTerms.pop() ?? this.terms.length
        this.terms[number] = term = { word: own, number, list: [] }
        this.postings.set(own, term)
        // While loading, the vocabulary is sorted once at the end: an insertion in order moves half of it.
        if (this.loading) this.vocabulary.push(own)
        else this.vocabulary.splice(lowerBound(this.vocabulary, own), 0, own)
      }
      this.wordPool[at] = term.number
      this.maskPool[at] = mask
      at++
      const posting = slot * MASK + mask
      const list = term.list
      // Loading hands out slots in increasing order: appending is the common case.
      if (list.length === 0 || list[list.length - 1]! < posting) list.push(posting)
      else list.splice(lowerBound(list, posting), 0, posting)
    }
    this.enterOrders(slot)
  }

  /** A slot's place in each kept order, by its values now. */
  private placeIn(order: { slots: Int32Array; length: number }, compare: (a: number, b: number) => number, slot: number): number {
    let low = 0
    let high = order.length
    while (low < high) {
      const mid = (low + high) >>> 1
      if (compare(order.slots[mid]!, slot) < 0) low = mid + 1
      else high = mid
    }
    return low
  }

  private enterOrders(slot: number): void {
    for (const [sort, order] of this.orders) {
      const at = this.placeIn(order, this.slotOrder(sort), slot)
      if (order.length === order.slots.length) {
        const larger = new Int32Array(Math.max(1024, order.length * 2))
        larger.set(order.slots)
        order.slots = larger
      }
      order.slots.copyWithin(at + 1, at, order.length)
      order.slots[at] = slot
      order.length++
    }
  }

  /** Takes a slot out of each kept order (before its values change). */
  private leaveOrders(slot: number): void {
    for (const [sort, order] of this.orders) {
      let at = this.placeIn(order, this.slotOrder(sort), slot)
      if (order.slots[at] !== slot) at = order.slots.subarray(0, order.length).indexOf(slot)
      // Not where its values put it (never expected): the order is made again when next needed.
      if (at < 0) {
        this.orders.delete(sort)
        continue
      }
      order.slots.copyWithin(at, at + 1, order.length)
      order.length--
    }
  }

  /** The kept order of a sort, made now if it is not kept yet. */
  private sortedOrder(sort: OrderSort): { slots: Int32Array; length: number } {
    let order = this.orders.get(sort)
    if (!order) {
      const slots = new Int32Array(Math.max(1024, this.slotOf.size * 2))
      let length = 0
      for (let slot = 0; slot < this.ids.length; slot++) if (this.ids[slot] !== undefined) slots[length++] = slot
      slots.subarray(0, length).sort(this.slotOrder(sort))
      this.orders.set(sort, (order = { slots, length }))
    }
    return order
  }

  private releaseNumber(release: string): number {
    let n = this.releaseNumbers.get(release)
    if (n === undefined) {
      n = this.releaseNames.push(release) - 1
      this.releaseNumbers.set(release, n)
      if (n >= this.releaseStride * 32) this.widenReleases()
    }
    return n
  }

  /** Room for every slot up to `size`: each per-slot array grows to twice its size at least. */
  private grow(size: number): void {
    const capacity = Math.max(1024, this.capacity * 2, size)
    const larger = <T extends Uint8Array | Int32Array | Float64Array | Uint32Array>(old: T, make: (n: number) => T, per = 1): T => {
      const next = make(capacity * per)
      next.set(old)
      return next
    }
    this.listed = larger(this.listed, (n) => new Uint8Array(n))
    this.kinds = larger(this.kinds, (n) => new Uint8Array(n))
    this.categories = larger(this.categories, (n) => new Int32Array(n))
    this.downloads = larger(this.downloads, (n) => new Float64Array(n))
    this.trending = larger(this.trending, (n) => new Float64Array(n))
    this.createdMs = larger(this.createdMs, (n) => new Float64Array(n))
    this.updatedMs = larger(this.updatedMs, (n) => new Float64Array(n))
    this.releaseBits = larger(this.releaseBits, (n) => new Uint32Array(n), this.releaseStride)
    this.tagStart = larger(this.tagStart, (n) => new Int32Array(n))
    this.tagLength = larger(this.tagLength, (n) => new Int32Array(n))
    this.wordStart = larger(this.wordStart, (n) => new Int32Array(n))
    this.wordLength = larger(this.wordLength, (n) => new Int32Array(n))
    this.capacity = capacity
  }

  /** A slot's tags: in its place in the pool when they fit, else at the pool's end. */
  private setTags(slot: number, tags: number[]): void {
    const old = this.tagLength[slot]!
    for (let at = this.tagStart[slot]!; at < this.tagStart[slot]! + old; at++) removeFrom(this.tagSlots, this.tagPool[at]!, slot)
    for (const tag of tags) addTo(this.tagSlots, tag, slot)
    if (tags.length > old) {
      this.tagPoolFree += old
      this.tagLength[slot] = 0
      if (this.tagPoolUsed + tags.length > this.tagPool.length) this.growTagPool(tags.length)
      this.tagStart[slot] = this.tagPoolUsed
      this.tagPoolUsed += tags.length
    } else {
      this.tagPoolFree += old - tags.length
    }
    this.tagPool.set(tags, this.tagStart[slot]!)
    this.tagLength[slot] = tags.length
  }

  /** Room at the pools' end for a slot's `count` words (it has none now: unlink took them out); where they go. */
  private placeWords(slot: number, count: number): number {
    if (this.wordPoolUsed + count > this.wordPool.length) this.growWordPool(count)
    const start = this.wordPoolUsed
    this.wordStart[slot] = start
    this.wordLength[slot] = count
    this.wordPoolUsed += count
    return start
  }

  /** Room for `more` at the word pools' end: compacted (in slot order) when half is unused, else doubled. */
  private growWordPool(more: number): void {
    const live = this.wordPoolUsed - this.wordPoolFree
    const size = Math.max(1024, (live + more) * 2)
    const words = new Int32Array(size)
    const masks = new Uint8Array(size)
    let used = 0
    for (let slot = 0; slot < this.ids.length; slot++) {
      const length = this.wordLength[slot]!
      if (length === 0) continue
      const start = this.wordStart[slot]!
      words.set(this.wordPool.subarray(start, start + length), used)
      masks.set(this.maskPool.subarray(start, start + length), used)
      this.wordStart[slot] = used
      used += length
    }
    this.wordPool = words
    this.maskPool = masks
    this.wordPoolUsed = used
    this.wordPoolFree = 0
  }

  /** Room for `more` at the pool's end: compacted (in slot order) when half of it is unused, else doubled. */
  private growTagPool(more: number): void {
    const live = this.tagPoolUsed - this.tagPoolFree
    const pool = new Int32Array(Math.max(64, (live + more) * 2))
    let used = 0
    for (let slot = 0; slot < this.ids.length; slot++) {
      const length = this.tagLength[slot]!
      if (length === 0) continue
      const start = this.tagStart[slot]!
      pool.set(this.tagPool.subarray(start, start + length), used)
      this.tagStart[slot] = used
      used += length
    }
    this.tagPool = pool
    this.tagPoolUsed = used
    this.tagPoolFree = 0
  }

  /** A 33rd (65th, ...) release: each slot's release bits get one more word. */
  private widenReleases(): void {
    const old = this.releaseBits
    const oldStride = this.releaseStride
    const stride = oldStride + 1
    const bits = new Uint32Array(this.capacity * stride)
    for (let slot = 0; slot < this.capacity; slot++) bits.set(old.subarray(slot * oldStride, slot * oldStride + oldStride), slot * stride)
    this.releaseBits = bits
    this.releaseStride = stride
  }

  private tagNumber(tag: { id: string; name: string; nameLower: string }): number {
    let n = this.tagNumbers.get(tag.id)
    if (n === undefined) {
      n = this.tagNames.push({ name: tag.name, nameLower: tag.nameLower }) - 1
      this.tagNumbers.set(tag.id, n)
    } else {
      // A renamed tag: the name its packs were last read with.
      this.tagNames[n] = { name: tag.name, nameLower: tag.nameLower }
    }
    return n
  }

  private categoryNumber(id: string, key: string): number {
    let n = this.categoryNumbers.get(id)
    if (n === undefined) {
      n = this.categoryKeys.push(key) - 1
      this.categoryNumbers.set(id, n)
    } else {
      this.categoryKeys[n] = key
    }
    return n
  }

  private remove(id: string): void {
    const slot = this.slotOf.get(id)
    if (slot === undefined) return
    this.unlink(slot)
    this.leaveOrders(slot)
    this.slotOf.delete(id)
    this.ids[slot] = undefined
    this.listed[slot] = 0
    this.setTags(slot, [])
    this.free.push(slot)
  }

  /** Takes a slot's words and people out of the lookups. */
  private unlink(slot: number): void {
    removeFrom(this.ownerSlots, this.owners[slot]!, slot)
    for (const member of this.members[slot] ?? []) removeFrom(this.memberSlots, member, slot)
    const start = this.wordStart[slot]!
    const end = start + this.wordLength[slot]!
    for (let i = start; i < end; i++) {
      const term = this.terms[this.wordPool[i]!]!
      const list = term.list
      const at = lowerBound(list, slot * MASK)
      if (at < list.length && Math.floor(list[at]! / MASK) === slot) list.splice(at, 1)
      if (list.length === 0) {
        this.postings.delete(term.word)
        this.terms[term.number] = undefined
        this.freeTerms.push(term.number)
        const place = lowerBound(this.vocabulary, term.word)
        if (this.vocabulary[place] === term.word) this.vocabulary.splice(place, 1)
      }
    }
    // Their place in the pools is left unused until the next compaction.
    this.wordPoolFree += end - start
    this.wordLength[slot] = 0
  }

  // ---------------------------------------------------------------- answering

  /** Whether a listed pack has a word starting with `prefix`: stops at the first. */
  listedWordStarts(prefix: string): boolean {
    for (let at = lowerBound(this.vocabulary, prefix); at < this.vocabulary.length; at++) {
      const term = this.vocabulary[at]!
      if (!term.startsWith(prefix)) break
      for (const posting of this.postings.get(term)!.list) if (this.listed[(posting / MASK) | 0]) return true
    }
    return false
  }

  /**
   * termsNear's answer from the copy's vocabulary (the same words, each with how many packs use it): the
   * words starting with the query word's first or second letter, or any letter then its second, of a
   * length `budget` away at most, the most used first (then by code point), `limit` of them.
   */
  termsNear(word: string, budget: number, limit: number): ReadonlyArray<{ term: string; docs: number }> {
    return this.remembered(this.nearAnswers, NEAR_ENTRIES, `${budget} ${limit} ${word}`, () => this.findTermsNear(word, budget, limit))
  }

  private findTermsNear(word: string, budget: number, limit: number): ReadonlyArray<{ term: string; docs: number }> {
    const letters = [...word]
    const second = letters[1]
    const starts = [...new Set([...letters.slice(0, 2), ...(second === undefined ? [] : [...FIRST_LETTERS].map((first) => `${first}${second}`))])]
    const min = letters.length - budget
    const max = letters.length + budget
    const found: Array<{ term: string; docs: number }> = []
    const seen = new Set<string>()
    for (const start of starts) {
      for (let at = lowerBound(this.vocabulary, start); at < this.vocabulary.length; at++) {
        const term = this.vocabulary[at]!
        if (!term.startsWith(start)) break
        const length = codePoints(term)
        if (length < min || length > max || seen.has(term)) continue
        seen.add(term)
        found.push({ term, docs: this.postings.get(term)!.list.length })
      }
    }
    found.sort((a, b) => b.docs - a.docs || compareCodePoints(a.term, b.term))
    return found.slice(0, limit)
  }

  /** One page of hits' pack row ids, in order: searchPage's answer. */
  page(query: SearchQuery, sort: SearchSort, page: { limit: number; offset: number }): readonly string[] {
    return this.remembered(this.answers, ANSWER_ENTRIES, `page ${sort} ${page.offset} ${page.limit} ${JSON.stringify(query)}`,
      () => this.findPage(query, sort, page)) as readonly string[]
  }

  private findPage(query: SearchQuery, sort: SearchSort, page: { limit: number; offset: number }): readonly string[] {
    if (query.words.length === 0) {
      const sortBy = sort === 'relevance' ? 'updated' : sort
      const filters = this.filtersOf(query)
      const tagged = this.taggedCandidates(filters)
      if (tagged !== undefined) {
        // With tags: their packs that pass, ordered as the kept order has them (the same comparison made it).
        const passing: number[] = []
        for (const slot of tagged) if (this.admits(slot, filters) && this.failing(slot, filters) === 0) passing.push(slot)
        const first = best(Int32Array.from(passing), page.offset + page.limit, this.slotOrder(sortBy))
        return Array.from(first.subarray(page.offset), (slot) => this.ids[slot]!)
      }
      // Without words or tags: the first packs of the sort's kept order that pass.
      const order = this.sortedOrder(sortBy)
      const ids: string[] = []
      let skip = page.offset
      for (let i = 0; i < order.length && ids.length < page.limit; i++) {
        const slot = order.slots[i]!
        if (!this.admits(slot, filters) || this.failing(slot, filters) !== 0) continue
        if (skip > 0) skip--
        else ids.push(this.ids[slot]!)
      }
      return ids
    }
    const evaluation = this.evaluate(query)
    const { slots, fails, size } = evaluation
    const positions = this.scratch.positions
    let n = 0
    for (let i = 0; i < size; i++) if (fails[i] === 0) positions[n++] = i
    const first = best(positions.subarray(0, n), page.offset + page.limit, this.order(sort, evaluation))
    const ids: string[] = []
    for (let i = page.offset; i < first.length; i++) ids.push(this.ids[slots[first[i]!]!]!)
    return ids
  }

  /** How many packs match, counted up to `cap` + 1: countHits' answer. */
  count(query: SearchQuery, cap: number): number {
    return this.remembered(this.answers, ANSWER_ENTRIES, `count ${cap} ${JSON.stringify(query)}`,
      () => Math.min(this.evaluate(query).passing, cap + 1)) as number
  }

  /** `work`'s answer, kept in `cache` (at most `max`, the least recently used going first) while the copy does not change. */
  private remembered<T extends readonly unknown[] | number>(cache: Map<string, T>, max: number, key: string, work: () => T): T {
    if (this.answersVersion !== this.version) {
      this.answers.clear()
      this.nearAnswers.clear()
      this.answersVersion = this.version
    }
    const kept = cache.get(key)
    if (kept !== undefined) {
      cache.delete(key)
      cache.set(key, kept)
      return kept
    }
    const answer = work()
    // Shared by every caller from now on: nobody may change it.
    if (typeof answer === 'object') Object.freeze(answer)
    cache.set(key, answer)
    while (cache.size > max) cache.delete(cache.keys().next().value!)
    return answer
  }

  /**
   * Every facet's options with how many packs each would leave: facetCounts' answers (kind and updated in
   * their order, the others unordered as SQL's groups are; tags the 30 most used), counted in the one pass
   * that also gives the page. The same search on the same copy is counted once per FACET_TTL_MS (the windows
   * of "updated within" move meanwhile by that much at most).
   */
  facets(query: SearchQuery, windows: Record<string, string>): Record<FacetName, Array<{ value: string; count: number }>> {
    const key = JSON.stringify(query)
    const now = Date.now()
    const hit = this.facetCache.get(key)
    if (hit && now - hit.at < FACET_TTL_MS && now >= hit.at) return hit.counts
    const counts = this.countFacets(this.evaluate(query), windows)
    this.facetCache.set(key, { at: now, counts })
    while (this.facetCache.size > FACET_ENTRIES) this.facetCache.delete(this.facetCache.keys().next().value!)
    return counts
  }

  private countFacets(evaluation: Evaluation, windows: Record<string, string>): Record<FacetName, Array<{ value: string; count: number }>> {
    const { slots, fails, size } = evaluation
    let resource = 0
    let data = 0
    const releases = new Int32Array(this.releaseNames.length)
    const categories = new Int32Array(this.categoryKeys.length)
    const tags = new Int32Array(this.tagNames.length)
    const windowList = Object.entries(windows)
    const windowMs = windowList.map(([, since]) => Date.parse(since))
    const updated = windowList.map(() => 0)
    const stride = this.releaseStride
    const releaseBits = this.releaseBits
    // A facet's options count the packs that pass every other condition: the any-of facets leave their own
    // choice out. Tags are all-of: their counts keep the tags already chosen. One tight pass per facet.
    const kindsOf = this.kinds
    for (let i = 0; i < size; i++) {
      if ((fails[i]! & ~KIND) !== 0) continue
      const kinds = kindsOf[slots[i]!]!
      resource += kinds & 1
      data += (kinds >>> 1) & 1
    }
    // Releases are counted a byte of a pack's release bits at a time (how many packs have each value of each
    // byte), then each value's count is added to its releases: a pack costs a few increments, not one per release.
    const byteCounts = new Int32Array(stride * 4 * 256)
    for (let i = 0; i < size; i++) {
      if ((fails[i]! & ~MC) !== 0) continue
      const at = slots[i]! * stride
      for (let w = 0; w < stride; w++) {
        const bits = releaseBits[at + w]!
        if (bits === 0) continue
        const base = w * 1024
        byteCounts[base + (bits & 255)]!++
        byteCounts[base + 256 + ((bits >>> 8) & 255)]!++
        byteCounts[base + 512 + ((bits >>> 16) & 255)]!++
        byteCounts[base + 768 + (bits >>> 24)]!++
      }
    }
    for (let chunk = 0; chunk < stride * 4; chunk++) {
      for (let value = 1; value < 256; value++) {
        const count = byteCounts[chunk * 256 + value]!
        if (count === 0) continue
        for (let bit = 0; bit < 8; bit++) if ((value & (1 << bit)) !== 0) releases[chunk * 8 + bit]! += count
      }
    }
    const categoryOf = this.categories
    for (let i = 0; i < size; i++) {
      if ((fails[i]! & ~CATEGORIES) !== 0) continue
      const category = categoryOf[slots[i]!]!
      if (category >= 0) categories[category]!++
    }
    const { tagStart, tagLength, tagPool } = this
    for (let i = 0; i < size; i++) {
      if (fails[i] !== 0) continue
      const start = tagStart[slots[i]!]!
      const end = start + tagLength[slots[i]!]!
      for (let t = start; t < end; t++) tags[tagPool[t]!]!++
    }
    for (let i = 0; i < size; i++) {
      if ((fails[i]! & ~UPDATED) !== 0) continue
      for (let w = 0; w < windowMs.length; w++) if (this.updatedSince(slots[i]!, windowMs[w]!, windowList[w]![1])) updated[w]!++
    }
    const options = (counts: Int32Array, names: (n: number) => string) => {
      const out: Array<{ value: string; count: number }> = []
      for (let n = 0; n < counts.length; n++) if (counts[n]! > 0) out.push({ value: names(n), count: counts[n]! })
      return out
    }
    // The most used tags: the first TAG_OPTIONS by count (then name), without sorting the thousands used.
    let used = 0
    const usedTags = new Int32Array(tags.length)
    for (let n = 0; n < tags.length; n++) if (tags[n]! > 0) usedTags[used++] = n
    const topTags = best(usedTags.subarray(0, used), TAG_OPTIONS,
      (a, b) => tags[b]! - tags[a]! || compareCodePoints(this.tagNames[a]!.nameLower, this.tagNames[b]!.nameLower))
    return {
      kind: [{ value: 'resource', count: resource }, { value: 'data', count: data }],
      mc: options(releases, (n) => this.releaseNames[n]!),
      categories: options(categories, (n) => this.categoryKeys[n]!),
      tags: Array.from(topTags, (n) => ({ value: this.tagNames[n]!.name, count: tags[n]! })),
      updated: windowList.map(([value], w) => ({ value, count: updated[w]! })),
    }
  }

  /**
   * One pass over the packs a search's words match (all packs when it has none): those that pass the
   * conditions that are not facets (visibility, owner, member), each with the facets whose filter it fails
   * and, with words, its rank. The page, the count and the facets are read from it; the last one is kept for
   * the next call with the same query (the service asks for all three at once).
   */
  private evaluate(query: SearchQuery): Evaluation {
    if (this.memo && this.memo.query === query && this.memo.version === this.version) return this.memo
    const scratch = this.scratch.fit(this.ids.length, query.words.length)
    const filters = this.filtersOf(query)
    const { slots, fails, ranks } = scratch
    let n = 0
    let passing = 0
    const consider = (slot: number) => {
      if (!this.admits(slot, filters)) return
      const failed = this.failing(slot, filters)
      slots[n] = slot
      fails[n] = failed
      n++
      if (failed === 0) passing++
    }
    if (query.words.length === 0) {
      const tagged = this.taggedCandidates(filters)
      if (tagged !== undefined) for (const slot of tagged) consider(slot)
      else for (let slot = 0; slot < this.ids.length; slot++) if (this.ids[slot] !== undefined) consider(slot)
    } else {
      const found = this.textMatches(query, scratch)
      for (let i = 0; i < found; i++) consider(scratch.matched[i]!)
      for (let i = 0; i < n; i++) ranks[i] = this.rankOf(slots[i]!, query, scratch.wordBits)
      scratch.clear(query.words.length)
    }
    this.memo = { query, version: this.version, size: n, slots, fails, ranks, passing }
    return this.memo
  }

  /**
   * With tags chosen, the packs of the one fewest packs have (none when a chosen tag is unknown); undefined
   * without. Every facet counts only packs that have all the chosen tags (no facet leaves tags out), so no
   * other pack needs looking at.
   */
  private taggedCandidates(filters: Filters): Iterable<number> | undefined {
    if (filters.tags === undefined) return undefined
    let fewest: Iterable<number> = []
    let fewestSize = Infinity
    for (const tag of filters.tags) {
      const had = this.tagSlots.get(tag)
      const size = had === undefined ? 0 : typeof had === 'number' ? 1 : had.size
      if (size < fewestSize) {
        fewestSize = size
        fewest = slotsIn(this.tagSlots, tag)
      }
    }
    return fewest
  }

  /**
   * The packs the words match (every word, each by one of its alternatives, in any field), with the packs
   * of the people the text names, into `scratch.matched` (how many: the result); and, per word and pack,
   * which fields hold the word itself (bits 0-5), a longer word it starts (6-11), one of its typos (12-17).
   */
  private textMatches(query: SearchQuery, scratch: Scratch): number {
    const words = query.words
    const hits = scratch.wordHits
    for (let i = 0; i < words.length; i++) {
      const word = words[i]!
      const bits = scratch.wordBits[i]!
      const seen = scratch.seen[i]!
      let seenCount = 0
      const visit = (term: string, shift: number, alsoStart: boolean) => {
        const list = this.postings.get(term)?.list
        if (list === undefined) return
        const extra = alsoStart ? 6 : -1
        for (let p = 0; p < list.length; p++) {
          const posting = list[p]!
          const slot = (posting / MASK) | 0
          const mask = posting & (MASK - 1)
          const before = bits[slot]!
          if (before === 0) seen[seenCount++] = slot
          bits[slot] = before | (mask << shift) | (extra < 0 ? 0 : mask << extra)
        }
      }
      if (word.prefix !== null) {
        // The words starting with the prefix: the word itself (bits 0-5, and 6-11) and its longer forms (6-11).
        for (let at = lowerBound(this.vocabulary, word.prefix); at < this.vocabulary.length; at++) {
          const term = this.vocabulary[at]!
          if (!term.startsWith(word.prefix)) break
          visit(term, term === word.prefix ? 0 : 6, term === word.prefix)
        }
      } else {
        visit(word.exact[0]!, 0, true)
      }
      const typos = word.prefix === null ? word.exact.slice(1) : word.exact
      for (const typo of typos) visit(typo, 12, false)
      scratch.seenCount[i] = seenCount
      for (let s = 0; s < seenCount; s++) hits[seen[s]!]!++
    }
    const named = new Set<number>()
    for (const user of query.namedUserIds ?? []) {
      for (const slot of slotsIn(this.ownerSlots, user)) named.add(slot)
      for (const slot of slotsIn(this.memberSlots, user)) named.add(slot)
    }
    // Every word matched: a slot in the first word's list with a hit for each word.
    const first = scratch.seen[0]!
    let found = 0
    for (let s = 0; s < scratch.seenCount[0]!; s++) {
      const slot = first[s]!
      if (hits[slot] === words.length) {
        scratch.matched[found++] = slot
        named.delete(slot)
      }
    }
    for (const slot of named) scratch.matched[found++] = slot
    return found
  }

  /** rankOf's integer: per word, its weight times each field's weight times 3, 2 or 1 (the word, a longer word, a typo). */
  private rankOf(slot: number, query: SearchQuery, wordBits: Uint32Array[]): number {
    let rank = 0
    for (let i = 0; i < query.words.length; i++) {
      const word = query.words[i]!
      let bits = wordBits[i]![slot]!
      // A one-letter word matches only itself, but ranks a field with a word starting with it as a prefix would.
      if (word.prefix === null) bits |= this.startBits(slot, word.exact[0]!)
      const whole = bits & 63
      const start = (bits >>> 6) & 63 & ~whole
      const typo = (bits >>> 12) & 63 & ~whole & ~start
      rank += word.weight * (3 * FIELD_SUMS[whole]! + 2 * FIELD_SUMS[start]! + FIELD_SUMS[typo]!)
    }
    return rank
  }

  /** The fields where a word starts with `start` (bits 6-11). */
  private startBits(slot: number, start: string): number {
    let bits = 0
    const first = this.wordStart[slot]!
    const end = first + this.wordLength[slot]!
    for (let i = first; i < end; i++) if (this.terms[this.wordPool[i]!]!.word.startsWith(start)) bits |= this.maskPool[i]! << 6
    return bits
  }

  /** Whether the slot passes the conditions that are not facets: visibility, owner, member. */
  private admits(slot: number, f: Filters): boolean {
    if (f.listedOnly && this.listed[slot] !== 1) return false
    if (f.ownerId !== undefined && this.owners[slot] !== f.ownerId) return false
    if (f.memberId !== undefined && this.owners[slot] !== f.memberId && !this.members[slot]!.includes(f.memberId)) return false
    return true
  }

  /** The facets (KIND, MC, CATEGORIES, TAGS, UPDATED) whose filter the slot fails. */
  private failing(slot: number, f: Filters): number {
    let fails = 0
    if (f.kinds !== undefined) {
      const kinds = this.kinds[slot]!
      let any = false
      for (let k = 0; k < f.kinds.length && !any; k++) any = (kinds & f.kinds[k]!) === f.kinds[k]!
      if (!any) fails |= KIND
    }
    if (f.releases !== undefined) {
      const stride = this.releaseStride
      const at = slot * stride
      for (let g = 0; g < f.releases.length; g++) {
        const group = f.releases[g]!
        let any = 0
        for (let w = 0; w < stride; w++) any |= group[w]! & this.releaseBits[at + w]!
        if (any === 0) { fails |= MC; break }
      }
    }
    if (f.categories !== undefined) {
      const category = this.categories[slot]!
      if (category < 0 || f.categories[category] !== 1) fails |= CATEGORIES
    }
    if (f.tags !== undefined) {
      const start = this.tagStart[slot]!
      const end = start + this.tagLength[slot]!
      for (let t = 0; t < f.tags.length; t++) {
        const tag = f.tags[t]!
        let has = false
        for (let at = start; at < end && !has; at++) has = this.tagPool[at] === tag
        if (!has) { fails |= TAGS; break }
      }
    }
    if (f.updatedSince !== undefined && !this.updatedSince(slot, f.updatedSinceMs, f.updatedSince)) fails |= UPDATED
    return fails
  }

  /** Whether the slot was updated at or after `since` (as the text compares: the milliseconds decide unless equal). */
  private updatedSince(slot: number, sinceMs: number, since: string): boolean {
    const at = this.updatedMs[slot]!
    return at > sinceMs || (!(at < sinceMs) && this.updated[slot]! >= since)
  }

  private filtersOf(query: SearchQuery): Filters {
    const releaseSet = (names: readonly string[]) => {
      const set = new Uint32Array(this.releaseStride)
      for (const name of names) {
        const n = this.releaseNumbers.get(name)
        if (n !== undefined) set[n >>> 5]! |= 1 << (n & 31)
      }
      return set
    }
    let categories: Uint8Array | undefined
    if (query.categoryIds !== undefined) {
      categories = new Uint8Array(this.categoryKeys.length)
      // An id no pack has matches nothing.
      for (const id of query.categoryIds) {
        const n = this.categoryNumbers.get(id)
        if (n !== undefined) categories[n] = 1
      }
    }
    return {
      listedOnly: !query.includeHidden,
      ownerId: query.ownerId,
      memberId: query.memberId,
      kinds: query.kinds,
      releases: query.releases?.map(releaseSet),
      categories,
      tags: query.tagIds !== undefined && query.tagIds.length > 0 ? query.tagIds.map((id) => this.tagNumbers.get(id) ?? -1) : undefined,
      updatedSince: query.updatedSince,
      updatedSinceMs: query.updatedSince === undefined ? Number.NaN : Date.parse(query.updatedSince),
    }
  }

  /** orderOf's order, over positions in an evaluation: < 0 when the first comes first. */
  private order(sort: SearchSort, evaluation: Evaluation): (a: number, b: number) => number {
    const { slots, ranks } = evaluation
    if (sort === 'relevance' && evaluation.query.words.length > 0) {
      return (i, j) => (ranks[j]! - ranks[i]!) || (this.downloads[slots[j]!]! - this.downloads[slots[i]!]!)
        || compareCodePoints(this.names[slots[i]!]!, this.names[slots[j]!]!)
    }
    const compare = this.slotOrder(sort === 'relevance' ? 'updated' : sort)
    return (i, j) => compare(slots[i]!, slots[j]!)
  }

  /**
   * orderOf's order of two slots for a sort that is not by relevance (relevance without words is "updated").
   * It reads the copy's arrays when called: a kept order's comparisons see them after they grow.
   */
  private slotOrder(sort: OrderSort): (a: number, b: number) => number {
    const byId = (a: number, b: number) => compareCodePoints(this.ids[a]!, this.ids[b]!)
    // Milliseconds first; equal (or unreadable) ones by the text, as SQL orders it.
    const newest = (ms: Float64Array, values: string[], a: number, b: number) =>
      (ms[b]! - ms[a]!) || (values[a]! > values[b]! ? -1 : values[a]! < values[b]! ? 1 : byId(a, b))
    switch (sort) {
      case 'downloads': return (a, b) => (this.downloads[b]! - this.downloads[a]!) || newest(this.updatedMs, this.updated, a, b)
      case 'trending': return (a, b) => (this.trending[b]! - this.trending[a]!) || byId(a, b)
      case 'created': return (a, b) => newest(this.createdMs, this.created, a, b)
      case 'updated': return (a, b) => newest(this.updatedMs, this.updated, a, b)
      case 'title': return (a, b) => compareCodePoints(this.titleKeys[a]!, this.titleKeys[b]!) || byId(a, b)
    }
  }
}

function addTo<K>(map: Map<K, number | Set<number>>, key: K, slot: number): void {
  const had = map.get(key)
  if (had === undefined || had === slot) map.set(key, slot)
  else if (typeof had === 'number') map.set(key, new Set([had, slot]))
  else had.add(slot)
}

function removeFrom<K>(map: Map<K, number | Set<number>>, key: K, slot: number): void {
  const had = map.get(key)
  if (had === slot) map.delete(key)
  else if (typeof had === 'object') {
    had.delete(slot)
    if (had.size === 1) map.set(key, had.values().next().value!)
  }
}

/** A key's slots in one of those maps (a user's, a tag's). */
function slotsIn<K>(map: Map<K, number | Set<number>>, key: K): Iterable<number> {
  const had = map.get(key)
  return had === undefined ? [] : typeof had === 'number' ? [had] : had
}

/**
 * The first `k` of `items` by `compare`, in order: a sort when there are few, else one pass that keeps the
 * best k in a heap (most of a large set is turned away by one comparison with the heap's worst). `items`
 * is reordered.
 */
export function best(items: Int32Array, k: number, compare: (a: number, b: number) => number): Int32Array {
  if (k <= 0) return new Int32Array(0)
  if (items.length <= Math.max(2048, k * 4)) return items.sort(compare).subarray(0, Math.min(k, items.length))
  // A max-heap by `compare`: its root is the worst of those kept.
  const heap = new Int32Array(k)
  let size = 0
  const swap = (i: number, j: number) => {
    const t = heap[i]!
    heap[i] = heap[j]!
    heap[j] = t
  }
  for (let n = 0; n < items.length; n++) {
    const item = items[n]!
    if (size < k) {
      let i = size++
      heap[i] = item
      while (i > 0) {
        const parent = (i - 1) >>> 1
        if (compare(heap[i]!, heap[parent]!) <= 0) break
        swap(i, parent)
        i = parent
      }
    } else if (compare(item, heap[0]!) < 0) {
      heap[0] = item
      let i = 0
      for (;;) {
        const l = 2 * i + 1
        const r = l + 1
        let top = i
        if (l < size && compare(heap[l]!, heap[top]!) > 0) top = l
        if (r < size && compare(heap[r]!, heap[top]!) > 0) top = r
        if (top === i) break
        swap(i, top)
        i = top
      }
    }
  }
  return heap.sort(compare)
}

const snapshots = new WeakMap<Db, SearchSnapshot>()

/** The copy of `db`'s index (one per database handle: a test's sites never share one). */
export function searchSnapshotOf(db: Db): SearchSnapshot {
  let snapshot = snapshots.get(db)
  if (!snapshot) snapshots.set(db, (snapshot = new SearchSnapshot()))
  return snapshot
}
