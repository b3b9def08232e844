// Packs and versions in Modrinth's v2 shapes (src/api/modrinth.ts).
import { MODRINTH_PERMISSION, type ModrinthProjectBody, type ModrinthTeamMemberBody, type ModrinthVersionBody } from '../api/modrinth.js'
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
