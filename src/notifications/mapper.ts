// A notification row as the API and the notifications page show it: the sentence and the link are made from
// its kind and particulars when read, so a change of wording reaches old notices too.
import type { NotificationBody, NotificationKind } from '../api/notifications.js'
import type { NotificationRow } from './repository.js'

/** What a notification's data column holds (each kind fills what it needs). */
export interface NotificationData {
  namespace?: string
  pack_id?: string
  title?: string
  version?: string
  reason?: string
  /** webhook.disabled: the webhook's shortened address. */
  webhook?: string
  /** team.invited: the role offered; the inviter's name. */
  role?: string
  by?: string
}

function dataOf(row: NotificationRow): NotificationData {
  try {
    const parsed: unknown = JSON.parse(row.data)
    return parsed !== null && typeof parsed === 'object' ? parsed as NotificationData : {}
  } catch {
    return {}
  }
}

function packPath(d: NotificationData): string {
  return d.namespace && d.pack_id ? `/packs/${encodeURIComponent(d.namespace)}/${encodeURIComponent(d.pack_id)}/` : '/'
}

function sentence(kind: NotificationKind, d: NotificationData): string {
  const title = d.title ?? 'a pack'
  const why = d.reason ? `: ${d.reason}` : ''
  switch (kind) {
    case 'version.published': return `${title} has a new version, ${d.version ?? ''}`.trimEnd()
    case 'pack.hidden': return `Staff hid your pack ${title}${why}`
    case 'pack.shown': return `Staff showed your pack ${title} again${why}`
    case 'version.yanked': return `Staff yanked version ${d.version ?? ''} of your pack ${title}${why}`
    case 'team.invited': return `${d.by ?? 'Someone'} invited you into the team of ${title}${d.role ? ` as ${d.role}` : ''}`
    case 'webhook.disabled': return `A webhook of ${title} (${d.webhook ?? 'its address'}) was switched off after failing for a day${why}`
  }
}

function linkOf(kind: NotificationKind, d: NotificationData): string {
  if (kind === 'team.invited') return '/invitations/'
  if (kind === 'webhook.disabled') return `${packPath(d)}webhooks/`
  if (kind === 'version.published' && d.version) return `${packPath(d)}#version-${encodeURIComponent(d.version)}`
  return packPath(d)
}

export function toNotification(row: NotificationRow): NotificationBody {
  const kind = row.kind as NotificationKind
  const d = dataOf(row)
  return {
    id: row.id,
    kind,
    created_at: row.created_at,
    read_at: row.read_at,
    text: sentence(kind, d),
    link: linkOf(kind, d),
    pack: d.namespace && d.pack_id ? { namespace: d.namespace, pack_id: d.pack_id, title: d.title ?? '' } : null,
    version: d.version ?? null,
    reason: d.reason ?? null,
  }
}
