// The audit log: who did what to which pack or account, and when. Every change of a pack, a version or an account records one entry
// in the same transaction as the change, so the log never claims what did not
// happen and never misses what did.
import type { Db } from '../db/index.js'
import { BadRequest } from '../errors.js'
import { findUserRowByUsername } from '../accounts/users-repository.js'
import { insertAuditEntry, listAuditEntries, type AuditFilter, type AuditRecord, type NewAuditEntry } from './repository.js'

export type { AuditFilter, AuditRecord }

/**
 * Who acts: a signed-in user (owner or staff; a User is an Actor), or the
 * admin CLI, which may do what staff may.
 */
export interface Actor {
  id: string | null
  username: string
  isStaff: boolean
}

/** The admin CLI (`npx packs`): whoever runs it on the server. */
export const CLI_ACTOR: Actor = { id: null, username: '(admin CLI)', isStaff: true }

/** What is recorded; see src/api/audit.ts for the names staff read. */
export const AUDIT_ACTIONS = [
  'pack.publish', 'pack.edit', 'pack.delete', 'pack.hide', 'pack.unhide',
  'version.publish', 'version.edit', 'version.yank', 'version.unyank', 'version.delete',
  'user.disable', 'user.enable',
  'site.rotate-signing-key',
  'archive.allow-copy', 'archive.transfer',
  'team.invite', 'team.accept', 'team.decline', 'team.withdraw', 'team.role', 'team.remove', 'team.leave',
  'pack.transfer-offer', 'pack.transfer', 'pack.transfer-withdraw', 'pack.transfer-decline',
] as const
export type AuditAction = (typeof AUDIT_ACTIONS)[number]

/** Records one action; call it with the transaction that makes the change. */
export async function recordAudit(
  db: Db,
  actor: Actor,
  action: AuditAction,
  target: Pick<NewAuditEntry, 'targetType' | 'target'>,
  details: Record<string, unknown> = {},
): Promise<void> {
  await insertAuditEntry(db, { actorId: actor.id, actorName: actor.username, action, ...target, details })
}

/** The longest reason a moderation action keeps (ModerationBody allows as much). */
export const MAX_REASON_LENGTH = 500

/**
 * A moderation reason as audit details: trimmed, left out when empty. The
 * API's schema bounds it already; the CLI has no schema, so it is checked here too.
 */
export function reasonDetails(reason: string | undefined): Record<string, unknown> {
  const trimmed = reason?.trim() ?? ''
  if (trimmed.length > MAX_REASON_LENGTH) throw new BadRequest(`reason is longer than ${MAX_REASON_LENGTH} characters`)
  return trimmed === '' ? {} : { reason: trimmed }
}

/** The audit target of a pack. */
export function packTarget(namespace: string, packId: string): Pick<NewAuditEntry, 'targetType' | 'target'> {
  return { targetType: 'pack', target: `${namespace}:${packId}` }
}

/** The audit target of a version. */
export function versionTarget(namespace: string, packId: string, versionName: string): Pick<NewAuditEntry, 'targetType' | 'target'> {
  return { targetType: 'version', target: `${namespace}:${packId}@${versionName}` }
}

/** The audit target of an account. */
export function userTarget(username: string): Pick<NewAuditEntry, 'targetType' | 'target'> {
  return { targetType: 'user', target: username }
}

/** The audit target of something site-wide (the signing key). */
export function siteTarget(name: string): Pick<NewAuditEntry, 'targetType' | 'target'> {
  return { targetType: 'site', target: name }
}

/** The audit target of an archive's bytes (its claim, src/packs/archive-claims.ts): its SHA-256. */
export function archiveTarget(sha256: string): Pick<NewAuditEntry, 'targetType' | 'target'> {
  return { targetType: 'archive', target: sha256 }
}

/** What staff ask the log for (GET /api/audit/, the audit page): AuditQuery's fields. */
export interface AuditQueryInput {
  target_type?: 'pack' | 'version' | 'user' | 'site' | 'archive' | undefined
  target?: string | undefined
  actor?: string | undefined
  action?: string | undefined
}

/**
 * One page of the log, newest first (pages count from 1), and how many
 * entries match in all. Filters are matched as staff type them: a pack's
 * namespace:pack_id in any case (they are stored in lower case; a version's
 * name after "@" keeps its case), a username in any case (resolved to the
 * account's spelling, which is what the log keeps).
 */
export async function listAudit(
  db: Db,
  query: AuditQueryInput,
  page: number,
  perPage: number,
): Promise<{ items: AuditRecord[]; total: number }> {
  const filter: AuditFilter = { targetType: query.target_type }
  const target = query.target?.trim()
  if (target) filter.target = target.includes(':') ? normalisePackTarget(target) : await storedUsername(db, target)
  const actor = query.actor?.trim()
  if (actor) filter.actor = actor === CLI_ACTOR.username ? actor : await storedUsername(db, actor)
  const action = query.action?.trim().toLowerCase()
  if (action) filter.action = action
  return listAuditEntries(db, filter, { limit: perPage, offset: (page - 1) * perPage })
}

/** "NS:Pack@Beta" -> "ns:pack@Beta": namespaces and pack ids are lower case, version names are not. */
function normalisePackTarget(target: string): string {
  const at = target.indexOf('@')
  return at === -1 ? target.toLowerCase() : target.slice(0, at).toLowerCase() + target.slice(at)
}

/** The account's own spelling of `username`, or the name as given (an account that no longer exists, a typo: no match). */
async function storedUsername(db: Db, username: string): Promise<string> {
  // Names longer than any username cannot be one; no lookup needed.
  if (username.length > 32) return username
  return (await findUserRowByUsername(db, username))?.username ?? username
}
