// Minecraft releases for a declared pack format range. PLACEHOLDER until the
// formats table lands (issue 10 item 8): names no release yet.
import type { PackDeclaration } from './declaration.js'

export interface GameVersions {
  /** Release names in the range, oldest first. */
  releases: string[]
  /** "Minecraft 1.21.4 – 1.21.8", or "pack format 99 (unknown Minecraft version)". */
  label: string
}

export function describeDeclaration(declaration: PackDeclaration, packFormat: number | null): GameVersions {
  void declaration
  return { releases: [], label: packFormat === null ? 'pack format unknown' : `pack format ${packFormat} (unknown Minecraft version)` }
}
