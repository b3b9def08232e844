// What a version archive declares about the game it is for: its kind (from
// its top-level folders) and the pack format range of its pack.mcmeta. Read
// once at upload (src/uploads/archives.ts), stored on the file's row, and
// turned into Minecraft release names when shown (./releases.ts).

/** A resource pack has assets/, a data pack data/; null when it has neither, or both. */
export type PackKind = 'resource' | 'data'

/**
 * A format as pack.mcmeta writes it since 1.21.9: [major] or [major, minor].
 * In a range's max, a missing minor means "any minor of that major"
 * (`max_format: 74` accepts 74.0, 74.1, …); in its min it means minor 0.
 */
export type FormatNumber = readonly [major: number, minor?: number]

/** Inclusive. `min` always has its minor; `max` has it only when declared. */
export interface FormatRange {
  min: readonly [major: number, minor: number]
  max: FormatNumber
}

export interface PackDeclaration {
  kind: PackKind | null
  /** null when pack.mcmeta is missing, unreadable or declares no format. */
  range: FormatRange | null
}
