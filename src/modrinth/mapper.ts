// Packs and versions in Modrinth's v2 shapes (src/api/modrinth.ts).
import {
  MODRINTH_PERMISSION, type ModrinthCategoryTagBody, type ModrinthProjectBody, type ModrinthSearchHitBody, type ModrinthTeamMemberBody, type ModrinthVersionBody,
} from '../api/modrinth.js'
import type { FileUrls } from '../http/urls.js'
import type { PackDetail, VersionRecord } from '../packs/repository.js'
import { may, type PackAction, type PackTeam } from '../packs/policy.js'
import { loadersOf, releasesOf } from './game.js'
import type { ProjectTeam } from './service.js'

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
    // The team is the pack's: its id stays when the pack changes owner, as namespace:pack_id does.
    team: idOf(pack),
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
    followers: pack.followers,
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

/**
 * A pack as one of Modrinth's search hits: what its project says (so a hit and
 * GET /v2/project/{id} agree), in the search's flatter shape. The pack is one
 * the search listed, so it has a version that is not yanked.
 */
export function toModrinthSearchHit(pack: PackDetail, urls: FileUrls, origin: string): ModrinthSearchHitBody {
  const project = toModrinthProject(pack, urls, origin)
  // Modrinth's v2 search lists the loaders among the categories (a `categories:datapack` facet finds data packs).
  const categories = [...new Set([...project.categories, ...project.loaders])]
  const latest = pack.versions.find((version) => !version.yanked) ?? pack.versions[0]
  return {
    project_id: project.id,
    project_type: project.project_type,
    slug: project.slug,
    author: pack.owner,
    title: project.title,
    description: project.description,
    categories,
    display_categories: categories,
    versions: project.game_versions,
    downloads: project.downloads,
    follows: project.followers,
    // Modrinth's v2 search gives "" for a project without an icon, not null.
    icon_url: project.icon_url ?? '',
    date_created: project.published,
    date_modified: project.updated,
    latest_version: latest === undefined ? '' : idOf(latest),
    license: project.license.id,
    client_side: project.client_side,
    server_side: project.server_side,
    gallery: project.gallery.map((image) => image.url),
    featured_gallery: null,
    color: null,
  }
}

/** A category's icon: a dot in its colour (a colour is #rrggbb, checked when the category is made). */
function dotIcon(color: string): string {
  const fill = /^#[0-9a-f]{6}$/i.test(color) ? color : '#888888'
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><circle cx="12" cy="12" r="8" fill="${fill}"/></svg>`
}

const PROJECT_TYPES = ['resourcepack', 'datapack'] as const

/**
 * Modrinth's category tags: each category (header "categories") and each tag
 * (under its category's key), once per project type, as Modrinth lists a
 * category for every project type it applies to and launchers filter the
 * list by the type they browse.
 */
export function toModrinthCategoryTags(found: {
  categories: ReadonlyArray<{ key: string; color: string }>
  tags: ReadonlyArray<{ name: string; categoryKey: string; color: string }>
}): ModrinthCategoryTagBody[] {
  const entries = [
    ...found.categories.map((category) => ({ name: category.key, header: 'categories', icon: dotIcon(category.color) })),
    ...found.tags.map((tag) => ({ name: tag.name, header: tag.categoryKey, icon: dotIcon(tag.color) })),
  ]
  return PROJECT_TYPES.flatMap((projectType) => entries.map((entry) => ({ ...entry, project_type: projectType })))
}

/** Each Modrinth permission bit and the policy's action it stands for; Packs has no analytics or payouts to grant. */
const PERMISSION_ACTIONS: ReadonlyArray<[bit: number, action: PackAction]> = [
  [MODRINTH_PERMISSION.UPLOAD_VERSION, 'publish-version'],
  [MODRINTH_PERMISSION.DELETE_VERSION, 'manage-versions'],
  [MODRINTH_PERMISSION.EDIT_DETAILS, 'edit'],
  [MODRINTH_PERMISSION.EDIT_BODY, 'edit'],
  [MODRINTH_PERMISSION.MANAGE_INVITES, 'invite'],
  // A maintainer may remove and re-role only those ranked below them (uploaders, invitations): Modrinth's bit
  // has no such limit, so it is set, and the limit stays the site's (docs/site.md#teams).
  [MODRINTH_PERMISSION.REMOVE_MEMBER, 'manage-member'],
  [MODRINTH_PERMISSION.EDIT_MEMBER, 'manage-member'],
  [MODRINTH_PERMISSION.DELETE_PROJECT, 'delete'],
]

/**
 * What the policy lets this person do to the pack, in Modrinth's bits: their own powers as a member, not staff's.
 * An invitation shows what it grants once accepted (Modrinth keeps an invitee's permissions on the invitation too).
 */
function permissionsOf(userId: string, disabled: boolean, team: PackTeam): number {
  const asAccepted: PackTeam = { ...team, team: team.team.map((m) => (m.userId === userId ? { ...m, accepted: true } : m)) }
  let bits = 0
  for (const [bit, action] of PERMISSION_ACTIONS) {
    if (may({ userId, isStaff: false, disabled }, action, asAccepted)) bits |= bit
  }
  return bits
}

const ROLE_NAMES = { owner: 'Owner', maintainer: 'Maintainer', uploader: 'Uploader' } as const

/** A pack's owner and team in Modrinth's TeamMember shape; the service already left out what the caller may not see. */
export function toModrinthTeam({ pack, users, insider }: ProjectTeam): ModrinthTeamMemberBody[] {
  const teamId = idOf(pack)
  const policyTeam: PackTeam = { id: pack.id, ownerId: pack.ownerId, team: pack.team }
  const people = [
    { userId: pack.ownerId, username: pack.owner, role: 'owner' as const, accepted: true, disabled: pack.ownerDisabled },
    ...pack.team.map((m) => ({ userId: m.userId, username: m.username, role: m.role, accepted: m.accepted, disabled: m.disabled })),
  ]
  return people.map((person, ordering) => {
    const user = users.get(person.userId)
    return {
      team_id: teamId,
      user: {
        id: person.userId,
        username: person.username,
        name: null,
        avatar_url: null,
        bio: null,
        // The account row is read beside the pack; one removed in between is shown with what the pack knew.
        created: user?.createdAt ?? pack.createdAt,
        role: user?.isStaff ? 'moderator' as const : 'developer' as const,
        badges: 0,
      },
      role: ROLE_NAMES[person.role],
      is_owner: person.role === 'owner',
      permissions: insider ? permissionsOf(person.userId, person.disabled, policyTeam) : null,
      organization_permissions: null,
      accepted: person.accepted,
      payouts_split: insider ? 0 : null,
      ordering,
    }
  })
}
