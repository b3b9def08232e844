// Minecraft releases for a declared pack format range, through the table of
// ./formats.ts: what the API's minecraft_versions / minecraft_label and the
// pages' "Minecraft 1.21.4 – 1.21.8 (resource pack)" say.
import type { FormatRange, PackDeclaration, PackKind } from './declaration.js'
import { FIRST_RANGE_FORMAT, RELEASES, type GameFormat, type Release } from './formats.js'

export interface GameVersions {
  /** Release names in the range, oldest first. */
  releases: string[]
  /** "Minecraft 1.21.4 – 1.21.8", or "pack format 99 (unknown Minecraft version)". */
  label: string
}

const KINDS: readonly PackKind[] = ['resource', 'data']

/**
 * The releases a version's archive is for, and the words for them.
 * `packFormat` is the version's pack_format (docs/decisions.md#pack_format): releases before
 * 1.20.2 read nothing else, so they count only when it names their format;
 * and for rows stored before declarations were kept (range null), it stands
 * for the range [n, n]. With no kind (the archive has neither assets/ nor
 * data/, or both), the releases are named only when both kinds give the same.
 */
export function describeDeclaration(declaration: PackDeclaration, packFormat: number | null): GameVersions {
  const range = declaration.range ?? legacyRange(packFormat)
  if (!range) return { releases: [], label: packFormat === null ? 'pack format unknown' : `pack format ${packFormat}` }
  const kinds = declaration.kind ? [declaration.kind] : KINDS
  const found = kinds.map((kind) => releasesIn(RELEASES[kind], range, packFormat))
  const first = found[0]!
  if (found.some((releases) => !sameNames(releases, first))) return { releases: [], label: formatsText(range) }
  if (first.length === 0) return { releases: [], label: `${formatsText(range)} (unknown Minecraft version)` }
  return { releases: first.map((r) => r.name), label: `Minecraft ${runsText(RELEASES[kinds[0]!], first)}` }
}

/** The range a bare pack_format stands for, if it is a format at all. */
function legacyRange(packFormat: number | null): FormatRange | null {
  if (packFormat === null || !Number.isInteger(packFormat) || packFormat < 0) return null
  return { min: [packFormat, 0], max: [packFormat] }
}

/** The releases (of one kind's list) whose format lies in `range`; before 1.20.2 it must also be pack_format itself. */
export function releasesIn(releases: readonly Release[], range: FormatRange, packFormat: number | null): Release[] {
  return releases.filter(({ format }) => inRange(format, range) && (format[0] >= FIRST_RANGE_FORMAT || format[0] === packFormat))
}

/** PackCompatibility.forVersion: COMPATIBLE when min ≤ format ≤ max, a max without its minor taking any minor. */
function inRange(format: GameFormat, range: FormatRange): boolean {
  const [major, minor] = format
  const [minMajor, minMinor] = range.min
  const [maxMajor, maxMinor] = range.max
  if (major < minMajor || (major === minMajor && minor < minMinor)) return false
  if (major > maxMajor || (major === maxMajor && maxMinor !== undefined && minor > maxMinor)) return false
  return true
}

function sameNames(a: readonly Release[], b: readonly Release[]): boolean {
  return a.length === b.length && a.every((release, i) => release.name === b[i]!.name)
}

/**
 * "1.21.4 – 1.21.8", one release alone "1.21.4"; releases that are not
 * neighbours in the table make several runs, "1.16.2 – 1.16.5, 1.20.2 – 1.21.1"
 * (a pack_format the old releases match, and a range the new ones read).
 */
function runsText(all: readonly Release[], found: readonly Release[]): string {
  const runs: string[] = []
  let start = 0
  for (let i = 1; i <= found.length; i++) {
    if (i < found.length && all.indexOf(found[i]!) === all.indexOf(found[i - 1]!) + 1) continue
    const first = found[start]!.name
    const last = found[i - 1]!.name
    runs.push(first === last ? first : `${first} – ${last}`)
    start = i
  }
  return runs.join(', ')
}

/**
 * The range in format numbers, for when no release can be named:
 * "pack format 99", "pack formats 90 – 99.2". A minor is shown when it is
 * not 0; a max without a minor shows as "N.*" only beside a min of the same
 * major that has one ("94.1 – 94.*").
 */
export function formatsText(range: FormatRange): string {
  const [minMajor, minMinor] = range.min
  const [maxMajor, maxMinor] = range.max
  const min = minMinor === 0 ? `${minMajor}` : `${minMajor}.${minMinor}`
  const max = maxMinor !== undefined ? `${maxMajor}.${maxMinor}` : maxMajor === minMajor && minMinor !== 0 ? `${maxMajor}.*` : `${maxMajor}`
  return min === max || (maxMinor === 0 && min === `${maxMajor}`) ? `pack format ${min}` : `pack formats ${min} – ${max}`
}

/** What a player's game is, as an updater asks: its pack format, or its release name. */
export type GameQuery = { packFormat: number } | { release: string }

/** Whether a release name is in the table, for either kind. */
export function isKnownRelease(name: string): boolean {
  return KINDS.some((kind) => RELEASES[kind].some((release) => release.name === name))
}

/** The newest release the table knows (for "this site knows releases up to …"). */
export function newestKnownRelease(): string {
  return RELEASES.resource.at(-1)!.name
}

/**
 * Whether a version (its declaration and pack_format) runs on the game asked
 * about. A pack format is read in the version's own kind; below 1.20.2's
 * format the game compares pack_format alone, exactly. A release must be one
 * of the releases the version is described for (describeDeclaration).
 */
export function supports(declaration: PackDeclaration, packFormat: number | null, game: GameQuery): boolean {
  if ('release' in game) return describeDeclaration(declaration, packFormat).releases.includes(game.release)
  if (game.packFormat < FIRST_RANGE_FORMAT) return packFormat === game.packFormat
  const range = declaration.range ?? legacyRange(packFormat)
  return range !== null && inRange([game.packFormat, 0], range)
}
