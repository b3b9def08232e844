// pack_format of a pack from its pack.mcmeta (docs/decisions.md#pack_format). The
// whole declared range, for naming Minecraft releases, is src/minecraft/mcmeta.ts's.
import { parseMcmeta } from '../minecraft/mcmeta.js'

/**
 * `pack.pack_format` when it is an integer; otherwise, for packs in the
 * 1.21.9+ style where `min_format`/`max_format` replace it (each an integer or
 * a `[major, minor]` pair), the major number of `max_format`; else null.
 * An integer is a 32-bit one, as the game reads it (a Java int) and as the
 * database's integer columns hold it: `1e300` is not a pack_format (it once
 * made the upload fail with a 500 on PostgreSQL).
 */
export function packFormatOf(mcmeta: unknown): number | null {
  if (!isObject(mcmeta) || !isObject(mcmeta.pack)) return null
  const { pack_format: packFormat, max_format: maxFormat } = mcmeta.pack
  if (isInt32(packFormat)) return packFormat
  if (isInt32(maxFormat)) return maxFormat
  if (Array.isArray(maxFormat) && maxFormat.length >= 1 && isInt32(maxFormat[0])) return maxFormat[0]
  return null
}

function isInt32(value: unknown): value is number {
  return Number.isInteger(value) && (value as number) >= -(2 ** 31) && (value as number) < 2 ** 31
}

/** packFormatOf for the raw bytes of a pack.mcmeta; malformed JSON gives null, never an error. */
export function packFormatOfText(text: string): number | null {
  return packFormatOf(parseMcmeta(text))
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
