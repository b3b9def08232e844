// Words as search sees them, the same for what is indexed and what is asked,
// on both engines: lower case, accents removed (é → e), split at anything
// that is not a letter or a digit ("Redstone_Rose", "x-ray", "1.21" give
// redstone rose, x ray, 1 21). Both SQLite's FTS5 and PostgreSQL's text search
// are then handed plain words separated by spaces, so they find the same
// words in the same documents. docs/site.md#search says what a query matches.

/** Longer words are cut: nobody types them, and they would only bloat the vocabulary. */
const MAX_WORD = 40

/** Words a query may have; the rest are ignored (a search box, not a document). */
export const MAX_QUERY_WORDS = 8

/**
 * Latin letters that NFKD does not split into a base letter and a mark, folded
 * as pack ids fold them (src/packs/slugs.ts): "Ærø" is found by "aero", as its
 * pack id is spelled, and "Straße" by "strasse".
 */
const FOLD: Record<string, string> = {
  'ß': 'ss', 'æ': 'ae', 'œ': 'oe', 'ø': 'o', 'đ': 'd', 'ð': 'd', 'ł': 'l', 'þ': 'th', 'ı': 'i', 'ħ': 'h', 'ŧ': 't',
}

/** The words of a text, in order, repeats kept (a document's word counts weigh in its rank). */
export function words(text: string): string[] {
  const folded = text.normalize('NFKD').replace(/\p{M}+/gu, '').toLowerCase().replace(/[ßæœøđðłþıħŧ]/g, (c) => FOLD[c]!)
  const found = folded.match(/[\p{L}\p{N}]+/gu) ?? []
  return found.map((word) => (word.length > MAX_WORD ? word.slice(0, MAX_WORD) : word))
}

/** A query's distinct words, in order, at most MAX_QUERY_WORDS. */
export function queryWords(q: string): string[] {
  return [...new Set(words(q.slice(0, 1000)))].slice(0, MAX_QUERY_WORDS)
}

/**
 * How many typing mistakes a query word may carry and still match a word of
 * the vocabulary: none below 5 letters (too many short words lie one edit
 * apart), one from 5, two from 9, as Meilisearch and Typesense do.
 */
export function typoBudget(word: string): number {
  const length = [...word].length
  return length >= 9 ? 2 : length >= 5 ? 1 : 0
}

/**
 * The optimal string alignment distance (Levenshtein with the swap of two
 * neighbouring letters as one edit: "dargon" is one edit from "dragon"),
 * or `max + 1` as soon as it is certain to exceed `max`.
 */
export function editDistance(a: string, b: string, max: number): number {
  const s = [...a]
  const t = [...b]
  if (Math.abs(s.length - t.length) > max) return max + 1
  let before: number[] = []
  let previous = Array.from({ length: t.length + 1 }, (_, j) => j)
  for (let i = 1; i <= s.length; i++) {
    const current = [i]
    let best = i
    for (let j = 1; j <= t.length; j++) {
      const cost = s[i - 1] === t[j - 1] ? 0 : 1
      let value = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost)
      if (i > 1 && j > 1 && s[i - 1] === t[j - 2] && s[i - 2] === t[j - 1]) value = Math.min(value, before[j - 2]! + 1)
      current.push(value)
      if (value < best) best = value
    }
    if (best > max) return max + 1
    before = previous
    previous = current
  }
  return Math.min(previous[t.length]!, max + 1)
}
