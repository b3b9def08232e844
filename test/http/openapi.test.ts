// /api/schema/ is generated from the route schemas; it must describe the base
// interface exactly (paths, methods, security, field names: docs/api.md) and
// the publishing operations beside it.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { makeSite, type TestSite } from '../helpers/app.js'

interface Operation {
  security?: Array<Record<string, unknown>>
  responses: Record<string, { content?: Record<string, { schema?: Schema }> }>
  parameters?: Array<{ name: string; in: string; required?: boolean }>
  requestBody?: { content: Record<string, unknown> }
}
interface Schema {
  type?: string
  properties?: Record<string, Schema>
  items?: Schema
  required?: string[]
  $ref?: string
}
interface Document {
  openapi: string
  info: { version: string }
  paths: Record<string, Record<string, Operation>>
  components: { securitySchemes: Record<string, unknown> }
}

let site: TestSite
let doc: Document
before(async () => {
  site = await makeSite()
  const res = await site.app.inject({ url: '/api/schema/', headers: site.gate })
  assert.equal(res.statusCode, 200)
  doc = res.json() as Document
})
after(() => site.close())

function operation(path: string, method: string): Operation {
  const op = doc.paths[path]?.[method]
  assert.ok(op, `${method.toUpperCase()} ${path} is in the OpenAPI document (paths: ${Object.keys(doc.paths).join(', ')})`)
  return op
}

function jsonSchema(op: Operation, status: string): Schema {
  const schema = op.responses[status]?.content?.['application/json']?.schema
  assert.ok(schema, `response ${status} has a JSON schema`)
  return schema
}

test('document header: OpenAPI 3, version 1.0.0, bearerAuth as an apiKey in the Authorization header', () => {
  assert.match(doc.openapi, /^3\./)
  assert.equal(doc.info.version, '1.0.0')
  assert.deepEqual(
    { ...(doc.components.securitySchemes.bearerAuth as object), description: undefined },
    { type: 'apiKey', in: 'header', name: 'Authorization', description: undefined },
  )
})

const BASE_OPERATIONS: Array<[string, string, string[], boolean]> = [
  // path, method, error statuses it must list, declares bearerAuth
  ['/api/files/{file_id}/', 'get', ['401', '404'], false],
  ['/api/uploads/', 'post', ['400', '401'], true],
  ['/api/uploads/{upload_uuid}/delete/', 'post', ['401', '404'], true],
  ['/api/draft/', 'get', ['401', '404'], true],
  ['/api/draft/', 'post', ['401', '404'], true],
  ['/api/draft/', 'delete', ['401', '404'], true],
  ['/api/tags/autocomplete/', 'get', ['401'], false],
  ['/api/users/autocomplete/', 'get', ['401'], false],
  ['/api/packs/{namespace}/{pack_id}/latest', 'get', ['401', '404'], false],
  ['/api/stats/', 'get', ['401', '403'], true],
]

test('every base operation is there with its statuses and security', () => {
  for (const [path, method, statuses, bearer] of BASE_OPERATIONS) {
    const op = operation(path, method)
    for (const status of ['200', ...statuses]) assert.ok(op.responses[status], `${method} ${path} lists ${status}`)
    const declares = (op.security ?? []).some((s) => 'bearerAuth' in s)
    assert.equal(declares, bearer, `${method} ${path} ${bearer ? 'declares' : 'does not declare'} bearerAuth`)
  }
})

test('the publishing operations are documented', () => {
  assert.ok(operation('/api/draft/publish/', 'post').responses['201'])
  assert.ok(operation('/api/packs/{namespace}/{pack_id}/versions/', 'post').responses['201'])
})

test('parameters carry the documented names', () => {
  const names = (path: string, method: string) => (operation(path, method).parameters ?? []).map((p) => `${p.in}:${p.name}`)
  assert.ok(names('/api/files/{file_id}/', 'get').includes('path:file_id'))
  assert.ok(names('/api/files/{file_id}/', 'get').includes('query:download'))
  assert.ok(names('/api/uploads/{upload_uuid}/delete/', 'post').includes('path:upload_uuid'))
  assert.ok(names('/api/draft/', 'get').includes('query:draft'))
  assert.ok(names('/api/draft/', 'delete').includes('query:draft'))
  assert.ok(names('/api/tags/autocomplete/', 'get').includes('query:q'))
  assert.ok(names('/api/users/autocomplete/', 'get').includes('query:q'))
  const latest = names('/api/packs/{namespace}/{pack_id}/latest', 'get')
  assert.ok(latest.includes('path:namespace') && latest.includes('path:pack_id'))
})

test('the upload takes multipart/form-data with file, kind and draft_uuid', () => {
  const body = operation('/api/uploads/', 'post').requestBody
  const multipart = body?.content['multipart/form-data'] as { schema?: Schema } | undefined
  assert.ok(multipart?.schema?.properties, 'multipart body schema')
  assert.deepEqual(Object.keys(multipart.schema.properties).sort(), ['draft_uuid', 'file', 'kind'])
})

test('response shapes use the documented field names', () => {
  const fields = (schema: Schema) => Object.keys(schema.properties ?? {}).sort()
  assert.deepEqual(fields(jsonSchema(operation('/api/uploads/', 'post'), '200')), ['content_type', 'filename', 'kind', 'url', 'uuid'])
  assert.deepEqual(fields(jsonSchema(operation('/api/uploads/{upload_uuid}/delete/', 'post'), '200')), ['success'])
  const draft = jsonSchema(operation('/api/draft/', 'get'), '200')
  assert.deepEqual(fields(draft), ['data', 'uploads'])
  assert.deepEqual(fields(draft.properties!.uploads!.items!), ['content_type', 'filename', 'kind', 'url', 'uuid'])
  assert.deepEqual(fields(jsonSchema(operation('/api/draft/', 'post'), '200')), ['saved', 'updated_at'])
  assert.deepEqual(fields(jsonSchema(operation('/api/draft/', 'delete'), '200')), ['success'])
  const tags = jsonSchema(operation('/api/tags/autocomplete/', 'get'), '200')
  assert.equal(tags.type, 'array')
  assert.deepEqual(fields(tags.items!), ['category', 'category_name', 'color', 'name'])
  const users = jsonSchema(operation('/api/users/autocomplete/', 'get'), '200')
  assert.deepEqual(fields(users.items!), ['username'])
  assert.deepEqual(
    fields(jsonSchema(operation('/api/packs/{namespace}/{pack_id}/latest', 'get'), '200')),
    // The seven base fields, and the updater's size, hashes and file name.
    ['created_at', 'download_url', 'filename', 'name', 'namespace', 'pack_format', 'pack_id', 'sha1', 'sha256', 'size', 'version'],
  )
  assert.equal(jsonSchema(operation('/api/stats/', 'get'), '200').type, 'object')
})

test('every error response is documented as { detail }', () => {
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      for (const [status, response] of Object.entries(op.responses)) {
        if (Number(status) < 400) continue
        const schema = response.content?.['application/json']?.schema
        assert.ok(schema?.properties?.detail, `${method} ${path} ${status} documents { detail }`)
      }
    }
  }
})

test('the docs page renders the document', async () => {
  const res = await site.app.inject({ url: '/api/docs/', headers: site.gate })
  assert.equal(res.statusCode, 200)
  assert.match(res.body, /swagger/i)
})

test('the API the pages use is documented, and the pages themselves are not API', () => {
  for (const [path, method] of [['/api/drafts/', 'get'], ['/api/tokens/', 'get'], ['/api/tokens/', 'post'], ['/api/tokens/{token_id}/', 'delete'], ['/api/me/', 'get']] as const) {
    assert.ok(doc.paths[path]?.[method], `${method.toUpperCase()} ${path} is documented`)
  }
  const outsideApi = Object.keys(doc.paths).filter((path) => !path.startsWith('/api/') && path !== '/healthz')
  assert.deepEqual(outsideApi, [], 'pages, forms and assets stay out of the API document')
})
