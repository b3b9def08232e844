// Repository records of packs in the API's shape, their file URLs made by the response's FileUrls
// (src/http/urls.ts).
import type { Static } from 'typebox'
import type { FileUrls } from '../http/urls.js'
import { describeDeclaration } from '../minecraft/releases.js'
import type { CategoryRef, PackDetail, PackRecord, PackSummaryRecord, TagRef, VersionRecord } from './repository.js'
import type { Category, PackBody, PackSummaryBody, PackTag, PackVersion } from '../api/packs.js'
import type { Invitation, TeamBody } from '../api/teams.js'
import type { FollowListBody } from '../api/notifications.js'
import { may, type PackActor } from './policy.js'
import type { PendingForUser, TransferRow } from './team-repository.js'
import type { FollowedPackRow } from './follows-repository.js'

function toCategory(category: CategoryRef | null): Static<typeof Category> | null {
  return category && { key: category.key, name: category.name, color: category.color }
}

function toTag(tag: TagRef): Static<typeof PackTag> {
  return { name: tag.name, category: tag.categoryKey, category_name: tag.categoryName, color: tag.color }
}

export function toVersion(version: VersionRecord, urls: FileUrls): Static<typeof PackVersion> {
  const { kind, range } = version.declaration
  const game = describeDeclaration(version.declaration, version.packFormat)
  return {
    id: version.id,
    name: version.name,
    changelog: version.changelog,
    pack_format: version.packFormat,
    created_at: version.createdAt,
    download_url: urls.download(version.fileId),
    ...version.archive,
    yanked: version.yanked,
    downloads: version.downloads,
    pack_kind: kind,
    // The game's own way of writing them (PackFormat's codecs): a min's minor 0 and a max's "any minor" are left out.
    min_format: range ? (range.min[1] === 0 ? [range.min[0]] : [...range.min]) : null,
    max_format: range ? range.max.filter((n): n is number => n !== undefined) : null,
    minecraft_versions: game.releases,
    minecraft_label: game.label,
  }
}

function toCommon(pack: PackRecord, urls: FileUrls) {
  return {
    namespace: pack.namespace,
    pack_id: pack.packId,
    id: `${pack.namespace}:${pack.packId}`,
    title: pack.title,
    summary: pack.summary,
    category: toCategory(pack.category),
    tags: pack.tags.map(toTag),
    owner: pack.owner,
    thumbnail_url: pack.thumbnailFileId === null ? null : urls.file(pack.thumbnailFileId),
    created_at: pack.createdAt,
    updated_at: pack.updatedAt,
    hidden: pack.hidden || pack.ownerDisabled,
    downloads: pack.downloads,
    revision: pack.revision,
  }
}

export function toPack(pack: PackDetail, urls: FileUrls): PackBody {
  return {
    ...toCommon(pack, urls),
    description: pack.description,
    media: pack.media.map((m) => ({ id: m.fileId, url: urls.file(m.fileId), content_type: m.contentType, filename: m.filename })),
    versions: pack.versions.map((v) => toVersion(v, urls)),
    team: pack.team.filter((m) => m.accepted).map((m) => ({ username: m.username, role: m.role })),
    followers: pack.followers,
  }
}

export function toPackSummary(pack: PackSummaryRecord, urls: FileUrls): PackSummaryBody {
  return { ...toCommon(pack, urls), latest_version: pack.latest && toVersion(pack.latest, urls) }
}

/** The pack's team as `viewer` may see it (src/packs/policy.ts): open invitations and offers to the team and staff only. */
export function toTeam(pack: PackDetail, viewer: PackActor | null, transfer: TransferRow | null): TeamBody {
  const seesPending = viewer !== null && may(viewer, 'see-pending', pack)
  return {
    members: [
      { username: pack.owner, role: 'owner', accepted: true, invited_at: null, accepted_at: null, expires_at: null },
      ...pack.team.filter((m) => m.accepted || seesPending).map((m) => ({
        username: m.username, role: m.role, accepted: m.accepted, invited_at: m.invitedAt, accepted_at: m.acceptedAt, expires_at: m.expiresAt,
      })),
    ],
    transfer: transfer && { to: transfer.toUsername, expires_at: transfer.expiresAt },
  }
}

export function toInvitation(pending: PendingForUser): Static<typeof Invitation> {
  return {
    kind: pending.kind, namespace: pending.namespace, pack_id: pending.packId, title: pending.title, role: pending.role,
    invited_by: pending.invitedBy, invited_at: pending.invitedAt, expires_at: pending.expiresAt,
  }
}

export function toFollowList(page: { items: readonly FollowedPackRow[]; total: number }): FollowListBody {
  return {
    items: page.items.map((f) => ({ namespace: f.namespace, pack_id: f.packId, title: f.title, followed_at: f.followedAt })),
    total: page.total,
  }
}
