// The pack format range a pack.mcmeta declares, in every shape the game has
// accepted (research: decompiled PackFormat.java and ExtraCodecs.intervalCodec):
// - `pack_format: 15` alone: exactly that format (every release);
// - `supported_formats` (1.20.2 – 1.21.8) as `42`, `[34, 46]` or
//   `{"min_inclusive": 34, "max_inclusive": 46}`, next to `pack_format`;
// - `min_format` / `max_format` (1.21.9+), each `74`, `[74]` or `[74, 1]`; a
//   max without its minor means any minor of that major.
// The input is whatever an uploader wrote: any JSON at all. Nothing here throws,
// and a field of the wrong shape is ignored as if absent, so a broken field
// never hides a good one (the upload itself is never refused for it: docs/decisions.md#pack_format).
import type { FormatNumber, FormatRange } from './declaration.js'

/**
 * The game reads formats as Java ints (min_format/max_format: non-negative);
 * larger or negative numbers describe no release and would not fit the
 * database's integer columns either.
 */
const MAX_FORMAT = 2 ** 31 - 1
/** The game's list codec for min_format/max_format takes 1 to 256 numbers and reads the first two. */
const MAX_FORMAT_LIST = 256

/** pack.mcmeta's text as JSON, or undefined when it is not JSON. */
export function parseMcmeta(text: string): unknown {
  try {
    // Editors on Windows like to write a byte-order mark, which JSON.parse rejects.
    return JSON.parse(text.replace(/^\uFEFF/, ''))
  } catch {
    return undefined
  }
}

/**
 * The range of formats the pack says it supports, or null when it declares
 * none we can read. In order of precedence, as the newest game decides:
 * 1. `min_format` and `max_format`, both readable and min ≤ max;
 * 2. `supported_formats` (min ≤ max), unless `pack_format` lies outside it:
 *    then, as 1.20.2 – 1.21.8 do ("defaulting to" pack_format), pack_format alone;
 * 3. `pack_format` alone, as [n, n].
 * The game refuses some combinations (only one of min/max_format, a
 * supported_formats that disagrees with them); a site can only show what the
 * file says, so those fall to the next rule instead.
 */
export function declaredRange(mcmeta: unknown): FormatRange | null {
  if (!isObject(mcmeta) || !isObject(mcmeta.pack)) return null
  const pack = mcmeta.pack
  const min = formatNumberOf(pack.min_format)
  const max = formatNumberOf(pack.max_format)
  if (min && max) {
    const range: FormatRange = { min: [min[0], min[1] ?? 0], max }
    if (compareMinMax(range) <= 0) return range
  }
  const format = formatOf(pack.pack_format)
  const supported = supportedFormatsOf(pack.supported_formats)
  if (supported && (format === null || (format >= supported[0] && format <= supported[1]))) {
    // Formats up to 81 (data) / 64 (resource) have no minors, so "any minor" changes nothing for them.
    return { min: [supported[0], 0], max: [supported[1]] }
  }
  if (format !== null) return { min: [format, 0], max: [format] }
  return null
}

/** declaredRange of pack.mcmeta's text; not JSON: null. */
export function declaredRangeOfText(text: string): FormatRange | null {
  return declaredRange(parseMcmeta(text))
}

/** -1, 0 or 1 as min is below, equal to or above max; a max without its minor is above every minor of its major. */
export function compareMinMax(range: FormatRange): number {
  const [minMajor, minMinor] = range.min
  const [maxMajor, maxMinor] = range.max
  if (minMajor !== maxMajor) return minMajor < maxMajor ? -1 : 1
  if (maxMinor === undefined) return -1
  return minMinor === maxMinor ? 0 : minMinor < maxMinor ? -1 : 1
}

function formatOf(value: unknown): number | null {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= MAX_FORMAT ? value : null
}

/** `74`, `[74]` or `[74, 1]` (further numbers are allowed and ignored, as the game does). */
function formatNumberOf(value: unknown): FormatNumber | null {
  const single = formatOf(value)
  if (single !== null) return [single]
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_FORMAT_LIST) return null
  for (const item of value) if (formatOf(item) === null) return null
  return value.length === 1 ? [value[0] as number] : [value[0] as number, value[1] as number]
}

/** supported_formats as [min, max], or null; ExtraCodecs.intervalCodec's three shapes, min ≤ max. */
function supportedFormatsOf(value: unknown): [number, number] | null {
  let range: [number | null, number | null]
  const single = formatOf(value)
  if (single !== null) {
    range = [single, single]
  } else if (Array.isArray(value)) {
    if (value.length !== 2) return null
    range = [formatOf(value[0]), formatOf(value[1])]
  } else if (isObject(value)) {
    range = [formatOf(value.min_inclusive), formatOf(value.max_inclusive)]
  } else {
    return null
  }
  const [min, max] = range
  return min !== null && max !== null && min <= max ? [min, max] : null
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
