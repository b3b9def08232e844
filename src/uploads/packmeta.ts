// pack_format of a pack from its pack.mcmeta (CONTRACT §4, update-check).

/**
 * `pack.pack_format` when it is an integer; otherwise, for packs in the
 * 1.21.9+ style where `min_format`/`max_format` replace it (each an integer or
 * a `[major, minor]` pair), the major number of `max_format`; else null.
 */
export function packFormatOf(mcmeta: unknown): number | null {
  if (!isObject(mcmeta) || !isObject(mcmeta.pack)) return null
  const { pack_format: packFormat, max_format: maxFormat } = mcmeta.pack
  if (Number.isInteger(packFormat)) return packFormat as number
  if (Number.isInteger(maxFormat)) return maxFormat as number
  if (Array.isArray(maxFormat) && maxFormat.length >= 1 && Number.isInteger(maxFormat[0])) return maxFormat[0] as number
  return null
}

/** packFormatOf for the raw bytes of a pack.mcmeta; malformed JSON gives null, never an error. */
export function packFormatOfText(text: string): number | null {
  try {
    // Editors on Windows like to write a byte-order mark, which JSON.parse rejects.
    return packFormatOf(JSON.parse(text.replace(/^\uFEFF/, '')))
  } catch {
    return null
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
