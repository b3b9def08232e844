// Packs and versions in Modrinth's v2 shapes (src/api/modrinth.ts).
import type { ModrinthProjectBody, ModrinthVersionBody } from '../api/modrinth.js'
import type { FileUrls } from '../http/urls.js'
import type { PackDetail, VersionRecord } from '../packs/repository.js'
import { loadersOf, releasesOf } from './game.js'

/** Modrinth's licence for one that is not stated: a Packs pack names none. */
const UNKNOWN_LICENSE = { id: 'LicenseRef-Unknown', name: 'Unknown', url: null }

function idOf(record: { id: string; shortId: string | null }): string {
  // A row inserted around the repository has no short id until the next import or migration fills it; its UUID still names it.
  return record.shortId ?? record.id
}

export function toModrinthVersion(pack: PackDetail, version: VersionRecord, urls: FileUrls): ModrinthVersionBody {
  const { sha1, sha256, size, filename } = version.archive
  return {
    id: idOf(version),
    project_id: idOf(pack),
    author_id: pack.ownerId,
    featured: false,
    name: version.name,
    version_number: version.name,
    changelog: version.changelog,
    changelog_url: null,
    date_published: version.createdAt,
    downloads: version.downloads,
    version_type: 'release',
    status: version.yanked ? 'archived' : 'listed',
    requested_status: null,
    files: [{ hashes: sha1 === null ? { sha256 } : { sha1, sha256 }, url: urls.download(version.fileId), filename, primary: true, size, file_type: null }],
    dependencies: [],
    game_versions: releasesOf(version),
    loaders: loadersOf(version),
  }
}

/** `origin` makes the icon and gallery URLs absolute, as a launcher needs them. */
export function toModrinthProject(pack: PackDetail, urls: FileUrls, origin: string): ModrinthProjectBody {
  const absolute = (url: string) => (url.startsWith('/') ? origin + url : url)
  // The kind of the newest version says what the pack is; a pack with none yet is taken as a resource pack.
  const dataPack = pack.versions[0]?.declaration.kind === 'data'
  const releases = new Set<string>()
  const loaders = new Set<string>()
  // Oldest version first, so the releases come out roughly oldest first, as Modrinth lists them.
  for (const version of [...pack.versions].reverse()) {
    for (const release of releasesOf(version)) releases.add(release)
    for (const loader of loadersOf(version)) loaders.add(loader)
  }
  return {
    id: idOf(pack),
    slug: `${pack.namespace}:${pack.packId}`,
    project_type: dataPack ? 'datapack' : 'resourcepack',
    team: pack.ownerId,
    title: pack.title,
    description: pack.summary,
    body: pack.description,
    body_url: null,
    published: pack.createdAt,
    updated: pack.updatedAt,
    approved: pack.createdAt,
    status: 'approved',
    requested_status: null,
    license: UNKNOWN_LICENSE,
    // A resource pack runs on the client (a server may push it); a data pack on the server (or a single-player world).
    client_side: dataPack ? 'optional' : 'required',
    server_side: dataPack ? 'required' : 'optional',
    downloads: pack.downloads,
    followers: 0,
    categories: [...(pack.category ? [pack.category.key] : []), ...pack.tags.map((tag) => tag.name)],
    additional_categories: [],
    versions: pack.versions.map(idOf).reverse(),
    game_versions: [...releases],
    loaders: [...loaders],
    icon_url: pack.thumbnailFileId === null ? null : absolute(urls.file(pack.thumbnailFileId)),
    issues_url: null,
    source_url: null,
    wiki_url: null,
    discord_url: null,
    donation_urls: [],
    gallery: pack.media
      .filter((media) => media.contentType.startsWith('image/'))
      .map((media, ordering) => {
        const url = absolute(urls.file(media.fileId))
        return { url, raw_url: url, featured: false, title: null, description: null, created: pack.createdAt, ordering }
      }),
    color: null,
  }
}
