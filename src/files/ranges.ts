// Byte ranges of a stored file (RFC 9110 §14): which part of the file a
// Range header asks for, and whether If-Range lets it. Both headers come from
// anyone holding the gate password, so both are read in one pass, bounded.
import type { ByteRange } from '../storage/index.js'

/** If-Range: a strong entity-tag must match exactly, a date must equal Last-Modified (RFC 9110 §13.1.5). */
export function ifRangeHolds(header: string | undefined, etag: string, lastModified: string): boolean {
  if (header === undefined) return true
  const value = header.trim()
  if (value.startsWith('"')) return value === etag
  if (value.startsWith('W/')) return false
  return value === lastModified
}

/**
 * Longer than any honest single range ("bytes=" and two 20-digit positions);
 * a longer value is ignored unread. Ignoring, not 416: RFC 9110 §14.2 lets a
 * server ignore Range, and the whole file is the right answer to a request
 * we chose not to parse, whereas 416 would claim the range lies outside it.
 */
export const MAX_RANGE_LENGTH = 256

/**
 * A single byte range of a `size`-byte file: `bytes=a-b`, `bytes=a-` or
 * `bytes=-n` (RFC 9110 §14.1.2, no whitespace inside). null means "ignore
 * the header and send everything", which RFC 9110 §14.2 allows for other
 * units, several ranges and malformed values. One pass over the characters,
 * no regular expression: this header comes from anyone holding the gate
 * password, and a backtracking pattern here once froze the server for minutes.
 */
export function parseRange(header: string, size: number): ByteRange | 'unsatisfiable' | null {
  if (header.length > MAX_RANGE_LENGTH) return null
  let from = 0
  let to = header.length
  while (from < to && isOws(header.charCodeAt(from))) from++
  while (to > from && isOws(header.charCodeAt(to - 1))) to--
  const unit = 'bytes='
  if (to - from < unit.length || header.slice(from, from + unit.length).toLowerCase() !== unit) return null
  const spec = header.slice(from + unit.length, to)
  const dash = spec.indexOf('-')
  if (dash === -1) return null
  const first = spec.slice(0, dash)
  const last = spec.slice(dash + 1)
  // Also refuses a second "-" and the "," of several ranges.
  if (!isDigits(first) || !isDigits(last)) return null
  if (first === '' && last === '') return null
  if (first === '') {
    const suffix = Number(last)
    if (suffix === 0 || size === 0) return 'unsatisfiable'
    return { start: Math.max(0, size - suffix), end: size - 1 }
  }
  const start = Number(first)
  if (last !== '' && Number(last) < start) return null
  if (start >= size) return 'unsatisfiable'
  return { start, end: last === '' ? size - 1 : Math.min(Number(last), size - 1) }
}

/** Space or horizontal tab (RFC 9110 §5.6.3). */
function isOws(code: number): boolean {
  return code === 0x20 || code === 0x09
}

/** Only ASCII digits (the empty string included). */
function isDigits(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code < 0x30 || code > 0x39) return false
  }
  return true
}
