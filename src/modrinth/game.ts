// What a version runs on, in Modrinth's words: its loaders and its Minecraft
// releases. Shared by the filters (./service.ts) and the answers (./mapper.ts).
import { describeDeclaration } from '../minecraft/releases.js'
import type { PackKind } from '../minecraft/declaration.js'
import type { VersionRecord } from '../packs/repository.js'

/** Modrinth's loader for each kind of pack: resource packs are "minecraft" there, data packs "datapack". */
const LOADER: Record<PackKind, string> = { resource: 'minecraft', data: 'datapack' }

/** The loaders a version is for; an archive of no single kind counts as both. */
export function loadersOf(version: VersionRecord): string[] {
  const kind = version.declaration.kind
  return kind ? [LOADER[kind]] : [LOADER.resource, LOADER.data]
}

/** The Minecraft releases a version runs on, by its declaration (as the pack pages say it). */
export function releasesOf(version: VersionRecord): string[] {
  return describeDeclaration(version.declaration, version.packFormat).releases
}

