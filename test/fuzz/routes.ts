// Which routes the fuzzer attacks: every method and path in Fastify's own
// route table (so pages and other routes hidden from the OpenAPI document
// are included), described with what the OpenAPI document says of its query
// and body where it says anything.

export type BodyKind = 'none' | 'json' | 'form' | 'multipart'

export interface RouteInfo {
  method: string
  /** As the route table prints it, without the trailing slash the router ignores: /api/files/:file_id */
  path: string
  /** Path parameter names in order ('*' for a wildcard). */
  params: string[]
  api: boolean
  inOpenApi: boolean
  /** Query parameter names the route reads. */
  query: string[]
  /** The body the route takes, so most cases send that kind (and some send another). */
  body: BodyKind
  /** Names of the body's fields or parts. */
  fields: string[]
}

/**
 * Reads `app.printRoutes({ commonPrefix: false })`: a tree whose lines are
 * `<indent>├── <segment> (METHODS)`, four columns per level, each segment
 * continuing its parent's path.
 */
export function parseRouteTable(printed: string): { method: string; path: string }[] {
  const routes: { method: string; path: string }[] = []
  const stack: string[] = []
  for (const line of printed.split('\n')) {
    const marker = line.search(/[├└]── /)
    if (marker < 0) continue
    const depth = marker / 4
    const rest = line.slice(marker + 4)
    const methods = /^(.*?) \(([A-Z, ]+)\)$/.exec(rest)
    const segment = methods ? methods[1]! : rest
    stack[depth] = (depth === 0 ? '' : stack[depth - 1]!) + segment
    stack.length = depth + 1
    if (!methods) continue
    for (const method of methods[2]!.split(',').map((m) => m.trim())) routes.push({ method, path: stack[depth]! })
  }
  return routes
}

interface OpenApiDocument {
  paths: Record<string, Record<string, {
    parameters?: { in: string; name: string }[]
    requestBody?: { content?: Record<string, { schema?: { properties?: Record<string, unknown> } }> }
  }>>
}

/** The route table's spelling of an OpenAPI path: {x} is :x, no trailing slash. */
export function tablePath(openApiPath: string): string {
  const path = openApiPath.replace(/\{([^}]+)\}/g, ':$1')
  return path.length > 1 ? path.replace(/\/$/, '') : path
}

// Pages take urlencoded forms and are hidden from the document; their field
// names come from their TypeBox schemas (src/pages/).
// A route missing here is still fuzzed, with field names from the common pool.
const PAGE_FIELDS: Record<string, string[]> = {
  'POST /gate': ['password', 'next'],
  'POST /login': ['username', 'password', 'next'],
  'POST /logout': ['csrf_token'],
  'POST /signup': ['username', 'password', 'password_repeat', 'next'],
  'POST /settings/password': ['current_password', 'new_password', 'new_password_repeat', 'csrf_token'],
  'POST /settings/tokens': ['name', 'expires_in_days', 'csrf_token'],
  'POST /settings/tokens/:token_id/revoke': ['csrf_token'],
}
const PAGE_QUERY: Record<string, string[]> = {
  '/': ['q', 'tag', 'category', 'page'],
  '/gate': ['next'],
  '/login': ['next'],
  '/signup': ['next'],
  '/settings/password': ['changed'],
  '/settings/tokens': ['revoked'],
}

export function fuzzRoutes(printed: string, document: OpenApiDocument): RouteInfo[] {
  const operations = new Map<string, { query: string[]; body: BodyKind; fields: string[] }>()
  for (const [path, methods] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(methods)) {
      const content = operation.requestBody?.content ?? {}
      const type = Object.keys(content)[0]
      const body: BodyKind = type === undefined ? 'none' : type.startsWith('multipart/') ? 'multipart' : type.includes('urlencoded') ? 'form' : 'json'
      operations.set(`${method.toUpperCase()} ${tablePath(path)}`, {
        query: (operation.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name),
        body,
        fields: Object.keys(type === undefined ? {} : content[type]!.schema?.properties ?? {}),
      })
    }
  }
  return parseRouteTable(printed).map(({ method, path }) => {
    const key = `${method} ${path}`
    // HEAD answers like GET; the document lists the GET.
    const operation = operations.get(key) ?? (method === 'HEAD' ? operations.get(`GET ${path}`) : undefined)
    const unsafe = !['GET', 'HEAD'].includes(method)
    return {
      method,
      path,
      params: path.split('/').filter((s) => s.startsWith(':') || s === '*').map((s) => (s === '*' ? '*' : s.slice(1))),
      api: path === '/api' || path.startsWith('/api/'),
      inOpenApi: operations.has(key),
      query: operation?.query ?? PAGE_QUERY[path] ?? [],
      body: operation?.body ?? (unsafe ? 'form' : 'none'),
      fields: operation?.fields.length ? operation.fields : PAGE_FIELDS[key] ?? [],
    }
  })
}
