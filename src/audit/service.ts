// The audit log: who did what to which pack or account, and when (issue 10,
// item 4). Every change of a pack, a version or an account records one entry
// in the same transaction as the change, so the log never claims what did not
// happen and never misses what did.
import type { Db } from '../db/index.js'
import { insertAuditEntry, type NewAuditEntry } from './repository.js'

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
export type AuditAction =
  | 'pack.publish' | 'pack.edit' | 'pack.delete' | 'pack.hide' | 'pack.unhide'
  | 'version.publish' | 'version.edit' | 'version.yank' | 'version.unyank' | 'version.delete'
  | 'user.disable' | 'user.enable'

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
