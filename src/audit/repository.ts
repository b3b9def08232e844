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
  targetType: 'pack' | 'version' | 'user' | 'site' | 'archive'
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

/** An entry as read back, details parsed. */
export interface AuditRecord {
  id: string
  createdAt: string
  actor: string
  action: string
  targetType: string
  target: string
  details: Record<string, unknown>
}

/** What staff filter the log by; every field optional, all of them combine. */
export interface AuditFilter {
  targetType?: string | undefined
  /** Exactly this target; for a pack target (namespace:pack_id), its versions' entries too (namespace:pack_id@...). */
  target?: string | undefined
  /** actor_name exactly (the caller has resolved a username to its stored spelling). */
  actor?: string | undefined
  action?: string | undefined
}

/** The smallest string greater than every string that starts with `prefix` (a range scan instead of LIKE). */
function prefixUpperBound(prefix: string): string {
  return prefix + '\u{10FFFF}'
}

function applyAuditFilter(query: SelectAudit, filter: AuditFilter): SelectAudit {
  let q = query
  if (filter.targetType !== undefined) q = q.where('target_type', '=', filter.targetType)
  if (filter.target !== undefined) {
    const target = filter.target
    // A pack's versions are "namespace:pack_id@name": a range on the index, so `%` and `_` in the input are plain characters.
    q = target.includes(':') && !target.includes('@')
      ? q.where((eb) => eb.or([
          eb('target', '=', target),
          eb.and([eb('target', '>=', `${target}@`), eb('target', '<', prefixUpperBound(`${target}@`))]),
        ]))
      : q.where('target', '=', target)
  }
  if (filter.actor !== undefined) q = q.where('actor_name', '=', filter.actor)
  if (filter.action !== undefined) q = q.where('action', '=', filter.action)
  return q
}

type SelectAudit = ReturnType<typeof selectAudit>

function selectAudit(db: Db) {
  return db.selectFrom('audit_log')
}

/** One page of entries matching `filter`, newest first (ties by id, so pages never overlap), and how many match in all. */
export async function listAuditEntries(
  db: Db,
  filter: AuditFilter,
  page: { limit: number; offset: number },
): Promise<{ items: AuditRecord[]; total: number }> {
  const [rows, count] = await Promise.all([
    applyAuditFilter(selectAudit(db), filter)
      .selectAll()
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(page.limit)
      .offset(page.offset)
      .execute(),
    applyAuditFilter(selectAudit(db), filter)
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .executeTakeFirstOrThrow(),
  ])
  return { items: rows.map(toAuditRecord), total: Number(count.n) }
}

function toAuditRecord(row: AuditRow): AuditRecord {
  return {
    id: row.id,
    createdAt: row.created_at,
    actor: row.actor_name,
    action: row.action,
    targetType: row.target_type,
    target: row.target,
    details: parseDetails(row.details),
  }
}

/** details is JSON text this service wrote; an imported or hand-edited row that is not an object is shown as it is, not as a 500. */
function parseDetails(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text)
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>
  } catch {
    // fall through
  }
  return { unparsed: text }
}
