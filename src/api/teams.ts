// A pack's team as the API shows it (docs/site.md#teams; the rules: src/packs/policy.ts).
import { Type, type Static } from 'typebox'

const DateTime = Type.String({ format: 'date-time' })
const Username = Type.String({ minLength: 1, maxLength: 64, description: 'A username, matched case-insensitively.' })

export const MemberRole = Type.Union([Type.Literal('maintainer'), Type.Literal('uploader')], {
  description: 'maintainer: everything the owner may do except deleting the pack, handing it over and changing the owner\'s or '
    + 'other maintainers\' roles; uploader: publishes new versions and edits changelogs, nothing else.',
})

export const TeamMember = Type.Object({
  username: Type.String(),
  role: Type.Union([Type.Literal('owner'), Type.Literal('maintainer'), Type.Literal('uploader')]),
  accepted: Type.Boolean({ description: 'false: an invitation not answered yet, which grants nothing (shown to the team and staff only).' }),
  invited_at: Type.Union([DateTime, Type.Null()], { description: 'null for the owner.' }),
  accepted_at: Type.Union([DateTime, Type.Null()]),
  expires_at: Type.Union([DateTime, Type.Null()], { description: 'When an invitation lapses; null once accepted.' }),
}, { title: 'TeamMember' })
export type TeamMemberBody = Static<typeof TeamMember>

export const Team = Type.Object({
  members: Type.Array(TeamMember, { description: 'The owner first, then members by when they joined, then open invitations.' }),
  transfer: Type.Union([
    Type.Object({ to: Type.String(), expires_at: DateTime }),
    Type.Null(),
  ], { description: 'The owner\'s open offer to hand the pack to a member (shown to the team and staff only).' }),
}, { title: 'Team' })
export type TeamBody = Static<typeof Team>

export const InviteBody = Type.Object({
  username: Username,
  role: MemberRole,
}, { additionalProperties: false })

export const RoleBody = Type.Object({ role: MemberRole }, { additionalProperties: false })

export const TransferBody = Type.Object({ username: Username }, { additionalProperties: false })

export const TeamMemberParams = Type.Object({
  namespace: Type.String({ description: 'Matched case-insensitively.' }),
  pack_id: Type.String({ description: 'Matched case-insensitively.' }),
  username: Type.String({ maxLength: 64, description: 'Matched case-insensitively.' }),
})

export const Invitation = Type.Object({
  kind: Type.Union([Type.Literal('invitation'), Type.Literal('transfer')], { description: 'transfer: an offer of ownership.' }),
  namespace: Type.String(),
  pack_id: Type.String(),
  title: Type.String(),
  role: Type.Union([Type.Literal('owner'), Type.Literal('maintainer'), Type.Literal('uploader')]),
  invited_by: Type.Union([Type.String(), Type.Null()]),
  invited_at: DateTime,
  expires_at: DateTime,
}, { title: 'Invitation' })
export const InvitationList = Type.Array(Invitation)
