// Drafts of the create page (/api/draft/). Publishing one is the packs' (src/packs/publish-routes.ts).
import type { App } from '../http/types.js'
import { Success, bearerAuth, errorResponses } from '../api/common.js'
import { DraftData, DraftList, DraftQuery, DraftSaveBody, DraftSaved } from '../api/drafts.js'
import { toDraftData, toDraftListItem, toDraftSaved } from './mapper.js'
import { autosaveDraft, deleteDraft, listDrafts, loadDraft } from './service.js'

export default async function draftsRoutes(app: App): Promise<void> {
  app.get('/api/draft/', {
    config: { access: 'user' },
    schema: {
      summary: 'Load a draft',
      description: 'The saved form data, exactly as saved, and the pending uploads of the draft.',
      tags: ['drafts'],
      security: bearerAuth,
      querystring: DraftQuery,
      response: { 200: DraftData, ...errorResponses(400, 401, 404) },
    },
  }, async (request) => {
    const draft = await loadDraft(app.db, request.user!.id, request.query.draft)
    return toDraftData(app.config, draft)
  })

  app.post('/api/draft/', {
    config: { access: 'user' },
    schema: {
      summary: 'Autosave a draft',
      description: 'Creates the draft if the UUID is new (owned by the caller), else updates it; someone else\'s draft is 404. '
        + 'The body may be at most 256 KiB. Creating a draft when the caller already has the most allowed (100 by default) is 409.',
      tags: ['drafts'],
      security: bearerAuth,
      body: DraftSaveBody,
      response: { 200: DraftSaved, ...errorResponses(400, 401, 404, 409, 413) },
    },
  }, async (request) => {
    const data = request.body.data as Record<string, unknown>
    const updatedAt = await autosaveDraft(app.db, request.user!.id, request.body.draft, data, app.config.userQuotas.drafts)
    return toDraftSaved(updatedAt)
  })

  app.delete('/api/draft/', {
    config: { access: 'user' },
    schema: {
      summary: 'Delete a draft',
      description: 'Deletes the draft and its pending uploads, their stored files included.',
      tags: ['drafts'],
      security: bearerAuth,
      querystring: DraftQuery,
      response: { 200: Success, ...errorResponses(400, 401, 404) },
    },
  }, async (request) => {
    await deleteDraft(app.db, app.store, request.user!.id, request.query.draft, request.log)
    return { success: true }
  })

  app.get('/api/drafts/', {
    config: { access: 'user' },
    schema: {
      summary: "List the caller's drafts",
      description: 'Every draft of the authenticated user (never anyone else\'s), most recently saved first: its UUID, '
        + 'saved title (null when it has none), last save time and number of pending uploads. The "My drafts" page shows the same.',
      tags: ['drafts'],
      security: bearerAuth,
      response: { 200: DraftList, ...errorResponses(401) },
    },
  }, async (request) => {
    const drafts = await listDrafts(app.db, request.user!.id)
    return drafts.map(toDraftListItem)
  })
}
