// The audit log as staff read it (GET /api/audit/).
import { Type, type Static } from 'typebox'

const TargetType = Type.Union([Type.Literal('pack'), Type.Literal('version'), Type.Literal('user'), Type.Literal('site'), Type.Literal('archive')])

export const AuditEntry = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    created_at: Type.String({ format: 'date-time' }),
    actor: Type.String({ description: 'Username of who did it, as it was then; "(admin CLI)" for `npx packs`.' }),
    action: Type.String({ description: 'e.g. pack.edit, pack.hide, pack.delete, version.yank, version.delete, user.disable, site.rotate-signing-key, archive.allow-copy, archive.transfer.' }),
    target_type: TargetType,
    target: Type.String({ description: 'namespace:pack_id, namespace:pack_id@version, a username as it was then, for the site "signing-key", or an archive\'s SHA-256.' }),
    details: Type.Record(Type.String(), Type.Unknown(), { description: 'What changed (fields, old and new values, a reason).' }),
  },
  { title: 'AuditEntry' },
)

export const AuditList = Type.Object(
  {
    items: Type.Array(AuditEntry, { description: 'Newest first.' }),
    page: Type.Integer(),
    per_page: Type.Integer(),
    total: Type.Integer(),
  },
  { title: 'AuditList' },
)

export const AuditQuery = Type.Object({
  target_type: Type.Optional(TargetType),
  target: Type.Optional(Type.String({ maxLength: 300, description: 'Exactly this target (namespace:pack_id or a username); a pack\'s versions included.' })),
  actor: Type.Optional(Type.String({ maxLength: 32, description: 'Only what this username did ("(admin CLI)" for the admin CLI).' })),
  action: Type.Optional(Type.String({ maxLength: 40, description: 'Only this action, e.g. pack.hide.' })),
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000, default: 1 })),
  per_page: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
})

export type AuditEntryBody = Static<typeof AuditEntry>
