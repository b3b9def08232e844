// Audit records in the API's shape (GET /api/audit/).
import type { AuditEntryBody } from '../api/audit.js'
import type { AuditRecord } from './service.js'

export function toAuditEntry(record: AuditRecord): AuditEntryBody {
  return {
    id: record.id,
    created_at: record.createdAt,
    actor: record.actor,
    action: record.action,
    // Written only by recordAudit with one of these; an imported row with anything else reads as a pack.
    target_type: record.targetType === 'version' || record.targetType === 'user' || record.targetType === 'site' || record.targetType === 'archive' ? record.targetType : 'pack',
    target: record.target,
    details: record.details,
  }
}
