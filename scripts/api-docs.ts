// `npm run docs`: writes the API reference in docs/ from the route schemas:
// docs/openapi.json (what GET /api/schema/ answers) and docs/api.md (a
// readable page made from it). Both are committed; test/http/api-docs.test.ts
// fails when they no longer match the code, so run this after changing a
// route's schema. The work is in test/helpers/api-docs.ts, which the test
// shares.
import fs from 'node:fs'
import path from 'node:path'
import { API_MD_FILE, generateApiDocs, OPENAPI_FILE } from '../test/helpers/api-docs.js'
import { ROOT } from '../test/helpers/server.js'

const docs = await generateApiDocs()
for (const [file, contents] of [[OPENAPI_FILE, docs.openapi], [API_MD_FILE, docs.markdown]] as const) {
  const old = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : undefined
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, contents)
  console.log(`${path.relative(ROOT, file)}: ${old === contents ? 'unchanged' : 'written'}`)
}
