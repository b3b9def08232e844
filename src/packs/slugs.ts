// pack_id from a pack's title (a slug of [a-z0-9_-]: docs/decisions.md#pack-ids). The slug is
// part of `namespace:pack_id`, which in-game mods hard-code, so it must be
// stable for a given title and never contain characters a URL path or a mod
// config would have to escape.

export const MAX_SLUG_LENGTH = 64

/** The characters a pack_id is made of; anything that matches is already a slug. */
export const SLUG_PATTERN = /^[a-z0-9_-]+$/

/** Latin letters that NFKD does not split into a base letter and a mark. */
const FOLD: Record<string, string> = {
  'ß': 'ss', 'æ': 'ae', 'œ': 'oe', 'ø': 'o', 'đ': 'd', 'ð': 'd', 'ł': 'l', 'þ': 'th', 'ı': 'i', 'ħ': 'h', 'ŧ': 't',
}

/**
 * Lower case; accents dropped by decomposing (NFKD) and removing the combining
 * marks, so "Café Ünïcode" becomes "cafe-unicode" (and "Straße" "strasse");
 * every run of other characters (spaces, punctuation, "-" itself, scripts
 * without a Latin form) becomes one "-"; no "-" at either end; at most 64.
 * An empty result means the title had no Latin letter or digit to keep.
 */
export function slugify(title: string): string {
  const folded = title
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[ßæœøđðłþıħŧ]/g, (c) => FOLD[c]!)
  const dashed = folded
    .replace(/[^a-z0-9_]+/g, '-')
    .replace(/^-+|-+$/g, '')
  // Cutting can leave a trailing "-" ("a-b" cut after "a-"): trim again.
  const slug = dashed.slice(0, MAX_SLUG_LENGTH).replace(/-+$/, '')
  // "___" would match the pattern but names nothing.
  return /[a-z0-9]/.test(slug) ? slug : ''
}
