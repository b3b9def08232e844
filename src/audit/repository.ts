// The audit log's SQL: one insert per recorded action, and the staff's reading.
import { randomUUID } from 'node:crypto'
import type { Db } from '../db/index.js'
import type { AuditLogTable } from '../db/schema.js'
import { nowIso } from '../db/time.js'

export type AuditRow = AuditLogTable

export interface NewAuditEntry {
  actorId: string | null
  actorName: string
  action: string
  targetType: 'pack' | 'version' | 'user'
  target: string
  details: Record<string, unknown>
}

export async function insertAuditEntry(db: Db, entry: NewAuditEntry, at: string = nowIso()): Promise<void> {
  await db.insertInto('audit_log').values({
    id: randomUUID(),
    created_at: at,
    actor_id: entry.actorId,
    actor_name: entry.actorName,
    action: entry.action,
    target_type: entry.targetType,
    target: entry.target,
    details: JSON.stringify(entry.details),
  }).execute()
}
