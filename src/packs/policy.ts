// Who may do what to a pack: the one place every permission question about a pack is answered
// (docs/site.md#teams). A pack has one owner and a team of members, each a maintainer or an uploader:
//
//   action             owner  maintainer  uploader  staff
//   see (hidden too)     ✓        ✓          ✓        ✓
//   see pending invites  ✓        ✓          ✓        ✓
//   publish a version    ✓        ✓          ✓        ✓
//   edit a changelog     ✓        ✓          ✓        ✓
//   edit the pack        ✓        ✓                   ✓     title, summary, description, tags, category, media
//   yank / delete a ver. ✓        ✓                   ✓
//   invite               ✓        ✓                   ✓
//   manage webhooks      ✓        ✓                   ✓     add, change, remove, test; read their delivery log
//   manage a member      ✓        below them          ✓     change a role, remove; withdraw an invitation
//   delete the pack      ✓                            ✓
//   transfer ownership   ✓
//   leave                         ✓          ✓
//
// Staff keep the powers they had over every pack (moderation), but ownership is not theirs to give away.
// Nobody else has any power: not an invitee before accepting, not a removed member, not a disabled account.
// A token narrows what its holder may do (src/auth/token-reach.ts): a read-only token may only look, a
// publish token may only publish versions of the packs it names, and only while its holder may.

import type { TokenReach } from '../auth/token-reach.js'

export const MEMBER_ROLES = ['maintainer', 'uploader'] as const
export type MemberRole = (typeof MEMBER_ROLES)[number]
export type PackRole = 'owner' | MemberRole

export const PACK_ACTIONS = [
  'see', 'see-pending', 'publish-version', 'edit-changelog', 'edit', 'manage-versions', 'invite', 'manage-member',
  'delete', 'transfer', 'leave', 'manage-webhooks',
] as const
export type PackAction = (typeof PACK_ACTIONS)[number]

/** Who is asking, as far as the pack is concerned. */
export interface PackActor {
  /** null: nobody signed in, or (with isStaff) the admin CLI. */
  userId: string | null
  isStaff: boolean
  /** Their disabled account may do nothing (its sessions and tokens fail before this, but a lookup must not rely on it). */
  disabled?: boolean
  /** The reach of the token the request came with; null or absent: a session, the CLI or a full token. */
  reach?: TokenReach | null
}

/** The pack as the policy needs it: who owns it and who is in its team (accepted members only count). */
export interface PackTeam {
  /** The pack's row id (what a publish token names). */
  id: string
  ownerId: string
  team: ReadonlyArray<{ userId: string; role: MemberRole; accepted: boolean; disabled?: boolean }>
}

const RANK: Record<PackRole, number> = { owner: 3, maintainer: 2, uploader: 1 }

const ROLE_MAY: Record<PackRole, ReadonlySet<PackAction>> = {
  owner: new Set(['see', 'see-pending', 'publish-version', 'edit-changelog', 'edit', 'manage-versions', 'invite', 'manage-member', 'delete', 'transfer', 'manage-webhooks']),
  maintainer: new Set(['see', 'see-pending', 'publish-version', 'edit-changelog', 'edit', 'manage-versions', 'invite', 'manage-member', 'leave', 'manage-webhooks']),
  uploader: new Set(['see', 'see-pending', 'publish-version', 'edit-changelog', 'leave']),
}
const STAFF_MAY: ReadonlySet<PackAction> = new Set(['see', 'see-pending', 'publish-version', 'edit-changelog', 'edit', 'manage-versions', 'invite', 'manage-member', 'delete', 'manage-webhooks'])
const READ_ACTIONS: ReadonlySet<PackAction> = new Set(['see', 'see-pending'])

/** The actor's role in the pack's team: 'owner', an accepted member's role, or null (an invitation is no role). */
export function roleOf(actor: Pick<PackActor, 'userId'>, pack: PackTeam): PackRole | null {
  if (actor.userId === null) return null
  if (actor.userId === pack.ownerId) return 'owner'
  // A member whose account staff disabled keeps their place in the list but holds no role while it is disabled.
  const member = pack.team.find((m) => m.userId === actor.userId && m.accepted && m.disabled !== true)
  return member ? member.role : null
}

/**
 * Whether `actor` may do `action` to the pack. For 'manage-member', `target` is the member's current role (and,
 * when changing it, the role asked for): only someone ranked above both may; a pending invitation (`target`
 * null) may be withdrawn by anyone who may invite.
 */
export function may(actor: PackActor, action: PackAction, pack: PackTeam, target?: { role: PackRole | null; newRole?: PackRole }): boolean {
  if ((actor.userId === null && !actor.isStaff) || actor.disabled === true) return false
  const reach = actor.reach ?? null
  if (reach !== null && reach.scope !== 'full' && !READ_ACTIONS.has(action)) {
    const namesPack = reach.packs.some((p) => p.id === pack.id)
    if (!(reach.scope === 'publish' && action === 'publish-version' && namesPack)) return false
  }
  const role = roleOf(actor, pack)
  const allowed = (role !== null && ROLE_MAY[role].has(action)) || (actor.isStaff && STAFF_MAY.has(action))
  if (!allowed) return false
  if (action === 'manage-member' && target !== undefined) {
    if (target.role === null) return true
    if (target.role === 'owner' || target.newRole === 'owner') return false
    if (actor.isStaff && role !== 'owner') return true
    const own = RANK[role!]
    return own > RANK[target.role] && (target.newRole === undefined || own > RANK[target.newRole])
  }
  return true
}
