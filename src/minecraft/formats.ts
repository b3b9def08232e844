// The pack format of every Minecraft: Java Edition release, for each kind of
// pack: the one data file behind "Minecraft 1.21.4 – 1.21.8" (./releases.ts).
//
// Compiled 2026-11-23 from stored public copies of:
// - the game's own data: the `pack_version` of the version.json at the root of
//   the client/server jars, as collected by misode/mcmeta (versions/data.json,
//   https://github.com/misode/mcmeta) and mirrored in mcbeet/beet
//   beet/resources/pack_format_registry.json (releases 1.14 – 1.21.10, newest
//   entry 2025-10-07), and in-jar version.json copies in public repositories
//   for 1.21.11 (built 2025-12-09), 26.1.1 and 26.1.2 (2026-04-09), 26.2
//   (2026-06-16) and 26.3 (protocol 777);
// - the Minecraft Wiki "Pack format" page (copies of 2025-07 and 2026-02;
//   https://minecraft.wiki/w/Pack_format) for releases before 1.14, which
//   misode's data does not reach;
// - release tables in public code (a TypeScript RELEASES list up to 26.3, a
//   resource-format table up to 26.2), which agree with the above from 1.21 on.
// Research notes: the Packs project's pack-formats notes.
//
// Uncertain, and to be checked when the table is next updated:
// - 26.3 (resource 97.1, data 121.0) rests on three copies of its version.json
//   and test fixtures, with no wiki table behind it yet.
// - 26.1 itself (not .1/.2) is taken from two "26.1 – 26.1.2" range tables.
// - Resource 9 (1.19 – 1.19.2) and 12 (1.19.3) come from beet's registry only.
// Formats between the rows (10, 11, 14, 16, …) belonged to snapshots only.
//
// To add a release: append its name to the row of its format, or a new row at
// the end (rows are in release order, oldest first); test/unit/minecraft-formats.test.ts
// checks the table stays ordered and free of duplicates.
import type { PackKind } from './declaration.js'

/** A format as the game has it: [major, minor]. Minor numbers exist from 1.21.9 (25w31a) on; before, every minor is 0. */
export type GameFormat = readonly [major: number, minor: number]

/** One pack format and the releases that use it, oldest first. */
export interface FormatRow {
  format: GameFormat
  releases: readonly string[]
}

/** Resource packs (`assets/`): `pack_version.resource` (`resource_major`/`resource_minor` from 1.21.9). */
export const RESOURCE_PACK_FORMATS: readonly FormatRow[] = [
  {
    format: [1, 0],
    releases: [
      '1.6.1', '1.6.2', '1.6.4', '1.7.2', '1.7.4', '1.7.5', '1.7.6', '1.7.7', '1.7.8', '1.7.9', '1.7.10',
      '1.8', '1.8.1', '1.8.2', '1.8.3', '1.8.4', '1.8.5', '1.8.6', '1.8.7', '1.8.8', '1.8.9',
    ],
  },
  { format: [2, 0], releases: ['1.9', '1.9.1', '1.9.2', '1.9.3', '1.9.4', '1.10', '1.10.1', '1.10.2'] },
  { format: [3, 0], releases: ['1.11', '1.11.1', '1.11.2', '1.12', '1.12.1', '1.12.2'] },
  { format: [4, 0], releases: ['1.13', '1.13.1', '1.13.2', '1.14', '1.14.1', '1.14.2', '1.14.3', '1.14.4'] },
  { format: [5, 0], releases: ['1.15', '1.15.1', '1.15.2', '1.16', '1.16.1'] },
  { format: [6, 0], releases: ['1.16.2', '1.16.3', '1.16.4', '1.16.5'] },
  { format: [7, 0], releases: ['1.17', '1.17.1'] },
  { format: [8, 0], releases: ['1.18', '1.18.1', '1.18.2'] },
  { format: [9, 0], releases: ['1.19', '1.19.1', '1.19.2'] },
  { format: [12, 0], releases: ['1.19.3'] },
  { format: [13, 0], releases: ['1.19.4'] },
  { format: [15, 0], releases: ['1.20', '1.20.1'] },
  { format: [18, 0], releases: ['1.20.2'] },
  { format: [22, 0], releases: ['1.20.3', '1.20.4'] },
  { format: [32, 0], releases: ['1.20.5', '1.20.6'] },
  { format: [34, 0], releases: ['1.21', '1.21.1'] },
  { format: [42, 0], releases: ['1.21.2', '1.21.3'] },
  { format: [46, 0], releases: ['1.21.4'] },
  { format: [55, 0], releases: ['1.21.5'] },
  { format: [63, 0], releases: ['1.21.6'] },
  { format: [64, 0], releases: ['1.21.7', '1.21.8'] },
  { format: [69, 0], releases: ['1.21.9', '1.21.10'] },
  { format: [75, 0], releases: ['1.21.11'] },
  { format: [84, 0], releases: ['26.1', '26.1.1', '26.1.2'] },
  { format: [88, 0], releases: ['26.2'] },
  // Uncertain (see the header): 26.3's version.json copies, no table yet.
  { format: [97, 1], releases: ['26.3'] },
]

/** Data packs (`data/`, from 1.13): `pack_version.data` (`data_major`/`data_minor` from 1.21.9). */
export const DATA_PACK_FORMATS: readonly FormatRow[] = [
  { format: [4, 0], releases: ['1.13', '1.13.1', '1.13.2', '1.14', '1.14.1', '1.14.2', '1.14.3', '1.14.4'] },
  { format: [5, 0], releases: ['1.15', '1.15.1', '1.15.2', '1.16', '1.16.1'] },
  { format: [6, 0], releases: ['1.16.2', '1.16.3', '1.16.4', '1.16.5'] },
  { format: [7, 0], releases: ['1.17', '1.17.1'] },
  { format: [8, 0], releases: ['1.18', '1.18.1'] },
  { format: [9, 0], releases: ['1.18.2'] },
  { format: [10, 0], releases: ['1.19', '1.19.1', '1.19.2', '1.19.3'] },
  { format: [12, 0], releases: ['1.19.4'] },
  { format: [15, 0], releases: ['1.20', '1.20.1'] },
  { format: [18, 0], releases: ['1.20.2'] },
  { format: [26, 0], releases: ['1.20.3', '1.20.4'] },
  { format: [41, 0], releases: ['1.20.5', '1.20.6'] },
  { format: [48, 0], releases: ['1.21', '1.21.1'] },
  { format: [57, 0], releases: ['1.21.2', '1.21.3'] },
  { format: [61, 0], releases: ['1.21.4'] },
  { format: [71, 0], releases: ['1.21.5'] },
  { format: [80, 0], releases: ['1.21.6'] },
  { format: [81, 0], releases: ['1.21.7', '1.21.8'] },
  { format: [88, 0], releases: ['1.21.9', '1.21.10'] },
  { format: [94, 1], releases: ['1.21.11'] },
  { format: [101, 1], releases: ['26.1', '26.1.1', '26.1.2'] },
  { format: [107, 1], releases: ['26.2'] },
  // Uncertain (see the header): 26.3's version.json copies, no table yet.
  { format: [121, 0], releases: ['26.3'] },
]

/**
 * The first format, for both kinds, of a release that reads a range from
 * pack.mcmeta (`supported_formats`, 1.20.2 / 23w31a). Releases before it
 * compare `pack_format` alone, exactly: a pack that declares 4 – 34 with
 * pack_format 34 is "made for a newer version" in 1.13.
 */
export const FIRST_RANGE_FORMAT = 18

export const PACK_FORMATS: Readonly<Record<PackKind, readonly FormatRow[]>> = {
  resource: RESOURCE_PACK_FORMATS,
  data: DATA_PACK_FORMATS,
}

/** A release and the format it has for one kind of pack. */
export interface Release {
  name: string
  format: GameFormat
}

function flatten(rows: readonly FormatRow[]): readonly Release[] {
  return rows.flatMap((row) => row.releases.map((name) => ({ name, format: row.format })))
}

/** Every release that can load a pack of each kind, oldest first. */
export const RELEASES: Readonly<Record<PackKind, readonly Release[]>> = {
  resource: flatten(RESOURCE_PACK_FORMATS),
  data: flatten(DATA_PACK_FORMATS),
}
