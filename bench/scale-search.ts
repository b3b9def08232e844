// The scale benchmark's search part (bench/scale.ts): text with a vocabulary
// for the seeded packs and tags, the searches measured through the server,
// and the plans of the SQL those searches send.
import { CompiledQuery } from 'kysely'
import type { Db } from '../src/db/index.js'
import { searchOf } from '../src/packs/search-query.js'
import { forgetFacetCounts, searchPackPage } from '../src/packs/search-service.js'

// English and Minecraft words, as pack titles and descriptions use them. Titles are an adjective, a
// subject and a suffix (30 × 40 × 15 = 18,000 titles, so a title word is in hundreds to thousands of packs).
export const ADJECTIVES = ['Better', 'Cozy', 'Faithful', 'Vanilla', 'Dark', 'Bright', 'Simple', 'Classic', 'Modern', 'Medieval', 'Rustic',
  'Fancy', 'Tiny', 'Epic', 'Quiet', 'Golden', 'Frozen', 'Ancient', 'Mystic', 'Pastel', 'Stormy', 'Sunny', 'Crimson', 'Emerald',
  'Shadow', 'Crystal', 'Wild', 'Lush', 'Desert', 'Ocean']
export const SUBJECTS = ['Ores', 'Villages', 'Dragons', 'Castles', 'Forests', 'Caves', 'Skies', 'Mobs', 'Swords', 'Tools', 'Armor',
  'Blocks', 'Foliage', 'Water', 'Lanterns', 'Torches', 'Potions', 'Music', 'Sounds', 'Fonts', 'Menus', 'Paintings', 'Beds', 'Doors',
  'Rails', 'Boats', 'Bees', 'Wolves', 'Cats', 'Horses', 'Lairs', 'Ruins', 'Towers', 'Bridges', 'Gardens', 'Farms', 'Mines',
  'Temples', 'Islands', 'Biomes']
export const SUFFIXES = ['Overhaul', 'Retextured', 'Enhanced', 'Reimagined', 'Plus', 'Remastered', 'Tweaks', 'Outline', 'Edition',
  'Collection', 'Expansion', 'Refresh', 'Revamp', 'Deluxe', 'Lite']
/** Common in descriptions and tags: each in a large share of the packs. */
export const FEATURES = ['smooth', 'animated', 'connected', 'textures', 'shading', 'lighting', 'particles', 'models', 'loot', 'recipes',
  'structures', 'worldgen', 'advancements', 'crafting', 'survival', 'adventure', 'building', 'redstone', 'nether', 'end',
  'overworld', 'peaceful', 'hardcore', 'multiplayer', 'server', 'vanilla', 'friendly', 'compatible', 'optifine', 'sodium']
/** The glue of sentences. */
const FILLER = ['the', 'and', 'with', 'for', 'your', 'this', 'pack', 'adds', 'new', 'makes', 'every', 'more', 'less', 'than', 'into',
  'from', 'world', 'game', 'look', 'feel', 'while', 'keeping', 'style', 'works', 'version', 'updated', 'install', 'enjoy', 'players',
  'blocks', 'items', 'mobs', 'details', 'colors', 'small', 'large', 'each', 'also', 'fixes', 'old']
/** Rare: one of these in one pack in 25, so each is in about 100 packs of 100,000. */
export const RARE = ['axolotl', 'sniffer', 'warden', 'elytra', 'beacon', 'conduit', 'trident', 'shulker', 'phantom', 'allay',
  'camel', 'armadillo', 'breeze', 'trialchamber', 'copperbulb', 'netherite', 'amethyst', 'dripstone', 'sculk', 'mangrove',
  'bamboo', 'cherry', 'glowberry', 'spyglass', 'lodestone', 'respawn', 'piglin', 'hoglin', 'strider', 'zoglin',
  'evoker', 'vindicator', 'ravager', 'pillager', 'illager', 'wandering', 'mooshroom', 'ocelot', 'parrot', 'dolphin']
const CATEGORY_THEMES = ['Adventure', 'Decoration', 'Utility', 'Realistic', 'Cartoon', 'Medieval', 'Modern', 'Fantasy', 'Technology',
  'Magic', 'Food', 'Transportation', 'Equipment', 'Mobs', 'Minigame', 'Storage', 'Optimization', 'Audio', 'Fonts', 'Cosmetic']

const pick = <T>(list: readonly T[], n: number): T => list[((n % list.length) + list.length) % list.length]!

/** A small deterministic generator (mulberry32), so a seeded site is the same every run. */
function random(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

export function packTitle(i: number): string {
  return `${pick(ADJECTIVES, i)} ${pick(SUBJECTS, Math.floor(i / 30) + i)} ${pick(SUFFIXES, Math.floor(i / 1200) + i * 7)}`
}

export function packSummary(i: number): string {
  const r = random(i * 2 + 1)
  const f = () => pick(FEATURES, Math.floor(r() * FEATURES.length))
  return `${f()} ${f()} ${pick(SUBJECTS, Math.floor(r() * SUBJECTS.length)).toLowerCase()} for ${f()} worlds`
}

/** 30 to 80 words: mostly glue and features, a subject or two, and in one pack of 25 a rare word. */
export function packDescription(i: number): string {
  const r = random(i * 2 + 2)
  const count = 30 + Math.floor(r() * 51)
  const out: string[] = []
  for (let k = 0; k < count; k++) {
    const roll = r()
    out.push(roll < 0.5 ? pick(FILLER, Math.floor(r() * FILLER.length))
      : roll < 0.85 ? pick(FEATURES, Math.floor(r() * FEATURES.length))
        : roll < 0.95 ? pick(SUBJECTS, Math.floor(r() * SUBJECTS.length)).toLowerCase()
          : pick(ADJECTIVES, Math.floor(r() * ADJECTIVES.length)).toLowerCase())
  }
  if (i % 25 === 0) out.splice(Math.floor(r() * out.length), 0, pick(RARE, Math.floor(i / 25)))
  return `# About\n\n${out.join(' ')}.`
}

export function categoryName(i: number): string {
  return `${pick(CATEGORY_THEMES, i)} ${pick(SUBJECTS, Math.floor(i / CATEGORY_THEMES.length))}`
}

/** Tag names as sites have them ("smooth-ores", "golden-connected-towers"): 1,200 of two words, the rest of three. */
export function tagName(i: number): string {
  const two = `${pick(FEATURES, i)}-${pick(SUBJECTS, Math.floor(i / FEATURES.length)).toLowerCase()}`
  const k = Math.floor(i / (FEATURES.length * SUBJECTS.length))
  return k === 0 ? two : `${pick(ADJECTIVES, k - 1).toLowerCase()}-${two}`
}

// Pack formats per kind (src/minecraft/formats.ts), oldest first: a version declares a range of them.
const RESOURCE_FORMATS = [15, 18, 22, 32, 34, 42, 46, 55, 63, 64, 69, 75]
const DATA_FORMATS = [15, 18, 26, 41, 48, 57, 61, 71, 80, 81, 88]

/** A file's kind and format range: a third of the packs are data packs; later versions of a pack run on later releases. */
export function fileFormats(pack: number, version: number): { pack_kind: 'resource' | 'data'; min_format: number; max_format: number } {
  const kind = pack % 3 === 0 ? 'data' : 'resource'
  const formats = kind === 'data' ? DATA_FORMATS : RESOURCE_FORMATS
  const start = Math.min(formats.length - 1, (pack % (formats.length - 2)) + version)
  const end = Math.min(formats.length - 1, start + ((pack >> 2) % 4))
  return { pack_kind: kind, min_format: formats[start]!, max_format: formats[end]! }
}

/** A typing mistake: two letters in the middle swapped ("dargons"). */
function typo(word: string): string {
  const w = word.toLowerCase()
  let k = Math.floor(w.length / 2) - 1
  while (w[k] === w[k + 1] && k + 2 < w.length) k++
  return w.slice(0, k) + w[k + 1] + w[k] + w.slice(k + 2)
}

/** The tag names scale.ts gives pack `pack` (its skewed formula), so a filter can be made that finds that pack. */
export function tagsOfPack(pack: number, tagCount: number, perPack: number): string[] {
  return Array.from({ length: perPack }, (_, m) => {
    const tag = (pack * 31 + m * 977 + Math.floor(Math.sqrt(pack))) % tagCount
    return tagName((tag + m) % tagCount)
  })
}

/** The searches the bench measures: a name, and the listing query strings one of which each request asks (at random). */
export function searchCases(packCount: number, tagCount: number, categoryCount: number, tagsPerPack: number): Array<{ name: string; queries: Array<Record<string, string>> }> {
  const r = random(42)
  const many = <T>(n: number, make: () => T): T[] => Array.from({ length: n }, make)
  const subject = () => pick(SUBJECTS, Math.floor(r() * SUBJECTS.length)).toLowerCase()
  const adjective = () => pick(ADJECTIVES, Math.floor(r() * ADJECTIVES.length)).toLowerCase()
  const tag = () => tagName(Math.floor(r() * tagCount))
  const category = () => `c${Math.floor(r() * categoryCount)}`
  const long = [...ADJECTIVES, ...SUBJECTS, ...SUFFIXES].filter((w) => w.length >= 6)
  return [
    { name: 'rare word (each in ~0.1 %)', queries: RARE.map((q) => ({ q })) },
    { name: 'common word (feature)', queries: FEATURES.map((q) => ({ q })) },
    { name: 'prefix, 3 letters', queries: SUBJECTS.map((s) => ({ q: s.slice(0, 3).toLowerCase() })) },
    { name: 'typo (letters swapped)', queries: long.map((w) => ({ q: typo(w) })) },
    { name: 'two words', queries: many(300, () => ({ q: `${adjective()} ${subject()}` })) },
    { name: 'q + kind + mc range', queries: many(300, () => ({ q: subject(), kind: r() < 0.5 ? 'resource' : 'data', mc: r() < 0.5 ? '1.20.1..1.21.4' : '>=1.21' })) },
    // Made from a pack (its title's subject, its category and one of its tags, a second category), so there are hits.
    { name: 'q + categories + tags', queries: many(300, () => {
      const pack = Math.floor(r() * packCount)
      return { q: packTitle(pack).split(' ')[1]!.toLowerCase(), categories: `c${pack % categoryCount},${category()}`, tags: pick(tagsOfPack(pack, tagCount, tagsPerPack), pack) }
    }) },
    { name: 'q + tags (a tag on few packs)', queries: many(300, () => ({ q: subject(), tags: tag() })) },
    { name: 'facets, q (two words: counts rarely cached)', queries: many(1200, () => ({ q: `${adjective()} ${subject()}`, facets: 'true' })) },
    { name: 'facets, no q (one search: cached)', queries: [{ facets: 'true' }] },
    { name: 'facets, no q, kind + mc (16 sets)', queries: many(300, () => ({ facets: 'true', kind: r() < 0.5 ? 'resource' : 'data', mc: `>=1.${14 + Math.floor(r() * 8)}` })) },
    { name: 'sort=trending', queries: [{ sort: 'trending' }] },
    { name: 'sort=title', queries: [{ sort: 'title' }] },
    { name: 'sort=downloads + kind', queries: [{ sort: 'downloads', kind: 'data' }, { sort: 'downloads', kind: 'resource' }] },
    { name: 'sort=downloads, q + mc', queries: many(100, () => ({ q: subject(), sort: 'downloads', mc: '1.21.4' })) },
  ]
}

export function urlOf(query: Record<string, string>): string {
  return `/api/packs/?${new URLSearchParams(query).toString()}`
}

const LARGE = ['packs', 'pack_search', 'pack_releases', 'pack_tags', 'versions', 'files', 'users']

/**
 * The plans of the SQL a search sends (every statement, captured from the
 * executor while the search runs once in this process, facet counts not
 * taken from the cache): SQLite's EXPLAIN QUERY PLAN or PostgreSQL's EXPLAIN.
 * A line that reads a large table whole is marked; returns how many were.
 */
export async function showSearchPlans(db: Db, engine: 'sqlite' | 'postgres', cases: Array<{ name: string; query: Record<string, string> }>,
  log: (line: string) => void, heading: string): Promise<number> {
  const captured: Array<{ sql: string; parameters: readonly unknown[] }> = []
  let capturing = false
  const executor = db.getExecutor() as unknown as { executeQuery: (query: CompiledQuery, id: unknown) => Promise<unknown> }
  const execute = executor.executeQuery.bind(executor)
  executor.executeQuery = (query, id) => {
    if (capturing) captured.push({ sql: query.sql, parameters: query.parameters })
    return execute(query, id)
  }
  let flagged = 0
  const scan = engine === 'sqlite'
    ? new RegExp(`^(?:SCAN) (${LARGE.join('|')})\\b(?! USING)`)
    : new RegExp(`Seq Scan on (${LARGE.join('|')})\\b`)
  const indexWalk = new RegExp(`^SCAN (${LARGE.join('|')}) USING`)
  log(`\nsearch query plans ${heading} (${engine === 'sqlite' ? 'SQLite EXPLAIN QUERY PLAN' : 'PostgreSQL EXPLAIN'} of every statement a search sends; a whole read of a large table is marked)`)
  for (const { name, query } of cases) {
    forgetFacetCounts()
    captured.length = 0
    capturing = true
    const started = performance.now()
    // The query string as the route's schema hands it over (facets a boolean).
    const request = searchOf({ ...query, ...(query.facets !== undefined ? { facets: query.facets === 'true' } : {}) } as never)!
    const result = await searchPackPage(db, request, 1, 20)
    const ms = performance.now() - started
    capturing = false
    log(`\n${name}: ${urlOf(query)}  (${result.total}${result.capped ? '+' : ''} hits; ${ms.toFixed(1)} ms in this process, counts uncached)`)
    const seen = new Set<string>()
    for (const statement of captured) {
      if (seen.has(statement.sql)) continue
      seen.add(statement.sql)
      const oneLine = statement.sql.replace(/\s+/g, ' ')
      log(`  ${oneLine.length > 160 ? `${oneLine.slice(0, 157)}...` : oneLine}`)
      const explain = engine === 'sqlite' ? 'explain query plan ' : 'explain '
      const rows = (await db.executeQuery(CompiledQuery.raw(explain + statement.sql, [...statement.parameters]))).rows as Array<Record<string, unknown>>
      for (const row of rows) {
        const detail = String(engine === 'sqlite' ? row.detail : row['QUERY PLAN'])
        const match = scan.exec(engine === 'sqlite' ? detail : detail.trim())
        // An index walked in order under a LIMIT stops early; without one (a count), it is read whole.
        const walk = engine === 'sqlite' && !/\blimit\b/i.test(statement.sql) ? indexWalk.exec(detail) : null
        if (match || walk) flagged++
        log(`    ${detail}${match ? `   <-- reads ${match[1]} whole` : walk ? `   <-- walks an index of ${walk[1]} whole (no LIMIT)` : ''}`)
      }
    }
  }
  executor.executeQuery = execute
  return flagged
}
