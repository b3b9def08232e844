// Relevance search over GET /api/packs/?q=, tested rather than hoped for: a corpus of over 300 packs
// written for the purpose (test/helpers/search-corpus.ts) and the queries a person would type, each with the
// pack they expect. The expected pack must be in the first three hits for at least 90 % of the queries, on
// both combinations; every miss is printed with what came instead. The two databases must also find the same
// packs for the same words and agree on the first three, and what an anonymous visitor must not see (a hidden
// pack, a disabled owner's, one whose only version is yanked) is never a hit nor counted.
import { after, before, describe, test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { PROJECT_ROOT } from '../../src/config/paths.js'
import { siteWith, type TestSite, type TestUser } from '../helpers/app.js'
import { TEST_DATABASE_URL } from '../helpers/database.js'
import { PACKS, QUERIES, corpusHash, seedCorpus } from '../helpers/search-corpus.js'
import { publishPack } from '../helpers/packs.js'
import { png, zip } from '../helpers/fixtures.js'

/** Hashed as this module is evaluated, just after the search modules were loaded: see searchCodeHash. */
const SEARCH_CODE = searchCodeHash()

interface ListAnswer {
  items: Array<{ id: string; title: string }>
  total: number
  total_capped: boolean
  facets?: Record<string, Array<{ value: string; count: number }>>
}

async function list(site: TestSite, query: Record<string, string | number>, headers: Record<string, string> = site.gate): Promise<ListAnswer> {
  const search = new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)]))
  const res = await site.app.inject({ method: 'GET', url: `/api/packs/?${search}`, headers })
  assert.equal(res.statusCode, 200, `GET /api/packs/?${search}: ${res.body}`)
  return res.json() as ListAnswer
}

/** What one combination found for one query: the ranked first ten, every pack matched (as a sorted set), and the total. */
interface Found {
  top: string[]
  matched: string[]
  total: number
}

/** The most a query is paged through to collect its whole matched set (the corpus has about 300 packs). */
const MAX_MATCHED = 1000

async function findAll(site: TestSite, q: string): Promise<Found> {
  const first = await list(site, { q, per_page: 100 })
  const ids = first.items.map((item) => item.id)
  for (let page = 2; ids.length < Math.min(first.total, MAX_MATCHED); page++) {
    const next = await list(site, { q, per_page: 100, page })
    if (next.items.length === 0) break
    ids.push(...next.items.map((item) => item.id))
  }
  return { top: ids.slice(0, 10), matched: [...new Set(ids)].sort(), total: first.total }
}

function say(t: TestContext, line: string): void {
  t.diagnostic(line)
  console.log(line)
}

describe('relevance over a seeded corpus', () => {
  let site: TestSite
  let seedSeconds = 0
  /** The first test's misses, kept with the results file for whoever reads it after a run that printed nothing. */
  let misses: string[] | undefined

  before(async () => {
    ;({ site } = await siteWith())
    const seeded = await seedCorpus(site)
    assert.equal(seeded.packs.size, PACKS.length)
    seedSeconds = Math.round(seeded.millis / 100) / 10
    console.log(`search-relevance: seeded ${PACKS.length} packs on ${combination()} in ${(seeded.millis / 1000).toFixed(1)} s`)
  })
  after(() => site.close())

  test(`the pack a person expects is in the first three hits for at least 90 % of ${QUERIES.length} queries`, async (t) => {
    misses = []
    for (const { query, expect, why } of QUERIES) {
      // No sort: with words in q, relevance is the default order.
      const answer = await list(site, { q: query, per_page: 3 })
      const ids = answer.items.map((item) => item.id)
      if (!ids.includes(expect)) {
        const instead = answer.items.map((item) => `${item.id} "${item.title}"`).join(', ') || 'nothing'
        misses.push(`miss: "${query}" expected ${expect} (${why}); the first three were: ${instead} (total ${answer.total})`)
      }
    }
    const found = QUERIES.length - misses.length
    say(t, `search-relevance on ${combination()}: ${found} of ${QUERIES.length} expected packs in the top 3 (${((100 * found) / QUERIES.length).toFixed(1)} %)`)
    for (const miss of misses) say(t, miss)
    assert.ok(found >= 0.9 * QUERIES.length, `${misses.length} misses of ${QUERIES.length} queries, more than 10 %:\n${misses.join('\n')}`)
  })

  // One process runs one combination (scripts/run-tests.js starts a job per file and combination, and
  // `--backends` may run them in separate invocations), so neither run can ask the other database directly.
  // Each run writes what it found to a file both can read, under the project's node_modules/.cache (the jobs'
  // temp directories are private to each job and removed after it); the run that comes second compares. The
  // directory is named after the corpus and the search code, so a file left by an older corpus or an older
  // ranking is never compared with a newer one. When the other combination has not run yet, there is
  // nothing to compare with and the test says so (skipped) instead of passing.
  test('both databases find the same packs for every query and agree on the first three for at least 95 %', async (t) => {
    const mine: Record<string, Found> = {}
    for (const { query } of QUERIES) mine[query] = await findAll(site, query)
    const dir = compareDirectory()
    fs.mkdirSync(dir, { recursive: true })
    const own = path.join(dir, `${combination()}.json`)
    const temporary = `${own}.${process.pid}.tmp`
    fs.writeFileSync(temporary, JSON.stringify({ combination: combination(), written_at: new Date().toISOString(), seed_seconds: seedSeconds, misses, results: mine }, null, 1))
    fs.renameSync(temporary, own)
    removeStaleSiblings(dir)

    const otherName = combination() === 'sqlite' ? 'scaled' : 'sqlite'
    const otherFile = path.join(dir, `${otherName}.json`)
    if (!fs.existsSync(otherFile)) {
      t.skip(`the ${otherName} combination has not run this corpus and search code yet (${otherFile}); run both: node scripts/run-tests.js --jobs 1 test/http/search-relevance`)
      return
    }
    const theirs = (JSON.parse(fs.readFileSync(otherFile, 'utf8')) as { results: Record<string, Found> }).results
    const setDifferences: string[] = []
    const topDisagreements: string[] = []
    for (const { query } of QUERIES) {
      const a = mine[query]!
      const b = theirs[query]
      if (b === undefined) {
        setDifferences.push(`"${query}": not in the ${otherName} results`)
        continue
      }
      if (a.total !== b.total || a.matched.join(' ') !== b.matched.join(' ')) {
        const onlyMine = a.matched.filter((id) => !b.matched.includes(id))
        const onlyTheirs = b.matched.filter((id) => !a.matched.includes(id))
        setDifferences.push(`"${query}": total ${a.total} on ${combination()}, ${b.total} on ${otherName}; `
          + `only on ${combination()}: ${onlyMine.join(', ') || 'none'}; only on ${otherName}: ${onlyTheirs.join(', ') || 'none'}`)
      }
      if (a.top.slice(0, 3).join(' ') !== b.top.slice(0, 3).join(' ')) {
        topDisagreements.push(`"${query}": ${combination()} ${a.top.slice(0, 3).join(', ') || 'nothing'} | ${otherName} ${b.top.slice(0, 3).join(', ') || 'nothing'}`)
      }
    }
    for (const line of setDifferences) say(t, `different matches: ${line}`)
    for (const line of topDisagreements) say(t, `different top 3: ${line}`)
    assert.deepEqual(setDifferences, [], 'the same packs match the same words on both databases')
    const agree = QUERIES.length - topDisagreements.length
    say(t, `search-relevance: the first three agree between ${combination()} and ${otherName} for ${agree} of ${QUERIES.length} queries`)
    assert.ok(agree >= 0.95 * QUERIES.length, `the first three differ for ${topDisagreements.length} of ${QUERIES.length} queries:\n${topDisagreements.join('\n')}`)
  })
})

describe('what an anonymous visitor must not find', () => {
  let site: TestSite
  let vera: TestUser, otto: TestUser, ivan: TestUser, root: TestUser

  before(async () => {
    ;({ site, vera, otto, ivan, root } = await siteWith({ users: ['vera', 'otto', 'ivan'], staff: ['root'] }))
  })
  after(() => site.close())

  const resourcePack = (title: string) => zip({ 'pack.mcmeta': JSON.stringify({ pack: { pack_format: 34, description: title } }), 'assets/minecraft/textures/item/quokka.png': png() })
  const post = (url: string, user: TestUser, payload: object = {}) => site.app.inject({ method: 'POST', url, headers: user.headers, payload })

  test('a hidden pack, a disabled owner\'s pack and a pack whose only version is yanked are neither hits nor counted', async () => {
    const plain = await publishPack(site, vera, { title: 'Quokka Plushies', summary: 'Plush quokkas to put on shelves.' }, { archive: await resourcePack('Quokka Plushies') })
    const hidden = await publishPack(site, vera, { title: 'Quokka Lamps', summary: 'Lamps shaped like quokkas.' }, { archive: await resourcePack('Quokka Lamps') })
    const disabled = await publishPack(site, otto, { title: 'Quokka Banners', summary: 'Banners with quokka faces.' }, { archive: await resourcePack('Quokka Banners') })
    const yanked = await publishPack(site, vera, { title: 'Quokka Beds', summary: 'Beds for sleepy quokkas.' }, { archive: await resourcePack('Quokka Beds') })

    // While all four are public, all four are found: what follows is not a search that finds nothing anyway.
    const before_ = await list(site, { q: 'quokka', per_page: 10 })
    assert.deepEqual(before_.items.map((item) => item.id).sort(), [plain.id, hidden.id, disabled.id, yanked.id].sort())
    assert.equal(before_.total, 4)

    assert.equal((await post(`/api/packs/${hidden.namespace}/${hidden.pack_id}/hide/`, root, { reason: 'tests' })).statusCode, 200)
    assert.equal((await post('/api/users/otto/disable/', root, { reason: 'tests' })).statusCode, 200)
    const yank = await site.app.inject({
      method: 'PATCH', url: `/api/packs/${yanked.namespace}/${yanked.pack_id}/versions/${yanked.versions[0]!.id}/`, headers: vera.headers, payload: { yanked: true },
    })
    assert.equal(yank.statusCode, 200, yank.body)

    for (const q of ['quokka', 'quokka lamps', 'quokka banners', 'quokka beds', 'otto']) {
      for (const sort of [undefined, 'relevance', 'title']) {
        const answer = await list(site, { q, per_page: 10, ...(sort ? { sort } : {}) })
        const expected = q === 'quokka' ? [plain.id] : []
        assert.deepEqual(answer.items.map((item) => item.id), expected, `q=${q} sort=${sort ?? '(default)'}`)
        assert.equal(answer.total, expected.length, `q=${q} sort=${sort ?? '(default)'}: the total counts only what is shown`)
      }
    }
    // Facet counts are counts too: the three packs are in none of them.
    const faceted = await list(site, { q: 'quokka', facets: 'true' })
    assert.ok(faceted.facets, 'facets=true answers with facets')
    for (const [facet, options] of Object.entries(faceted.facets)) {
      for (const option of options) assert.ok(option.count <= 1, `facet ${facet} option ${option.value} counts ${option.count} packs, but one is visible`)
    }
    assert.deepEqual(faceted.facets.kind?.filter((o) => o.count > 0), [{ value: 'resource', count: 1 }])
  })

  test('an invitation not yet accepted does not make a pack findable by the invitee\'s name', async () => {
    const joined = await publishPack(site, vera, { title: 'Wombat Burrows', team: [{ username: 'ivan', role: 'uploader' }] }, { archive: await resourcePack('Wombat Burrows') })
    const pending = await publishPack(site, vera, { title: 'Wombat Lanterns', team: [{ username: 'ivan', role: 'uploader' }] }, { archive: await resourcePack('Wombat Lanterns') })
    assert.equal((await post(`/api/packs/${joined.namespace}/${joined.pack_id}/team/accept/`, ivan)).statusCode, 200)
    const answer = await list(site, { q: 'ivan', per_page: 10 })
    assert.deepEqual(answer.items.map((item) => item.id), [joined.id], `${pending.id} only invited ivan`)
    assert.equal(answer.total, 1)
  })
})

/** 'sqlite' or 'scaled', as scripts/run-tests.js names the combination this process runs. */
function combination(): string {
  return process.env.PACKS_TEST_BACKENDS ?? (TEST_DATABASE_URL ? 'scaled' : 'sqlite')
}

/**
 * The search code this process runs: what the results of the two combinations must both come from to be
 * compared. Read from the modules as loaded (the build in dist/ when run by scripts/run-tests.js, the sources
 * under tsx), and when this module is evaluated, right after they were imported: the checkout is shared, and
 * someone else's build may replace dist/ while this file's tests run.
 */
function searchCodeHash(): string {
  const src = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'src')
  const hash = createHash('sha256')
  const sources = [
    ...listModules(path.join(src, 'packs'), (name) => name.startsWith('search')),
    ...listModules(path.join(src, 'db', 'migrations'), (name) => name.includes('search')),
  ]
  for (const file of sources) hash.update(path.basename(file)).update(fs.readFileSync(file))
  return hash.digest('hex').slice(0, 16)
}

function listModules(dir: string, wanted: (name: string) => boolean): string[] {
  if (!fs.existsSync(dir)) return []
  return fs.readdirSync(dir).filter((name) => /\.(js|ts)$/.test(name) && wanted(name)).sort().map((name) => path.join(dir, name))
}


const COMPARE_ROOT = path.join(PROJECT_ROOT, 'node_modules', '.cache', 'packs', 'search-compare')

function compareDirectory(): string {
  return path.join(COMPARE_ROOT, `${corpusHash()}-${SEARCH_CODE}`)
}

/** Results of other corpora or search code, a day old: nothing will compare with them any more. */
function removeStaleSiblings(current: string): void {
  const dayAgo = Date.now() - 86_400_000
  for (const name of fs.readdirSync(COMPARE_ROOT)) {
    const dir = path.join(COMPARE_ROOT, name)
    if (dir === current) continue
    const stat = fs.statSync(dir, { throwIfNoEntry: false })
    if (stat && stat.mtimeMs < dayAgo) fs.rmSync(dir, { recursive: true, force: true })
  }
}
