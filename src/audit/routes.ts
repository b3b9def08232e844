// The audit log for staff: GET /api/audit/. The page
// /staff/audit/ (src/pages/audit.ts) shows the same entries.
import type { App } from '../http/types.js'
import { bearerAuth, errorResponses } from '../api/common.js'
import { AuditList, AuditQuery } from '../api/audit.js'
import { toAuditEntry } from './mapper.js'
import { listAudit } from './service.js'

/** Entries per page unless per_page says otherwise (AuditQuery's default). */
export const AUDIT_PER_PAGE = 50

export default async function auditRoutes(app: App): Promise<void> {
  app.get('/api/audit/', {
    config: { access: 'staff', heavy: true },
    schema: {
      summary: 'The audit log (staff only)',
      description: 'Who did what to which pack, version or account, and when: publishing, edits, yanks, deletions, '
        + 'hiding and disabling, by owners, staff and the admin CLI (actor "(admin CLI)"). Newest first, paginated. '
        + 'Filters combine: target_type, target (namespace:pack_id, which includes its versions\' entries, '
        + 'namespace:pack_id@version, or a username; any case), actor (a username, any case). Other users get 403.',
      tags: ['audit'],
      security: bearerAuth,
      querystring: AuditQuery,
      response: { 200: AuditList, ...errorResponses(400, 401, 403) },
    },
  }, async (request) => {
    const page = request.query.page ?? 1
    const perPage = request.query.per_page ?? AUDIT_PER_PAGE
    const { items, total } = await listAudit(app.db, request.query, page, perPage)
    return { items: items.map(toAuditEntry), page, per_page: perPage, total }
  })
}
