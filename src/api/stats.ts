import { Type, type Static } from 'typebox'

const Milliseconds = Type.Number({ description: 'Milliseconds.' })

const RouteSummary = Type.Object({
  route: Type.String({ description: 'Method and route pattern, or "unmatched".' }),
  count: Type.Integer(),
  errors: Type.Integer({ description: 'Responses with a 5xx status.' }),
  p50_ms: Milliseconds,
  p90_ms: Milliseconds,
  p99_ms: Milliseconds,
  max_ms: Milliseconds,
})

/**
 * The snapshot is an object with arbitrary members (clients must accept ones
 * they do not know: docs/decisions.md#statistics). The members known today
 * are listed so they are documented and serialised; further members pass
 * through unchanged.
 */
export const StatsSnapshot = Type.Object(
  {
    generated_at: Type.String({ format: 'date-time', description: 'When the snapshot was built; equal across calls within the cache window.' }),
    cache_seconds: Type.Number({ description: 'How long a snapshot is reused.' }),
    version: Type.String({ description: 'Version of the Packs server.' }),
    node_version: Type.String(),
    uptime_seconds: Type.Number(),
    process: Type.Object({
      pid: Type.Integer(),
      memory: Type.Object({
        rss: Type.Integer({ description: 'Bytes.' }),
        heap_used: Type.Integer({ description: 'Bytes.' }),
        heap_total: Type.Integer({ description: 'Bytes.' }),
        external: Type.Integer({ description: 'Bytes.' }),
      }),
      cpu: Type.Object({ user_ms: Milliseconds, system_ms: Milliseconds }),
    }),
    event_loop: Type.Object({
      delay: Type.Object(
        { p50_ms: Milliseconds, p99_ms: Milliseconds, max_ms: Milliseconds },
        { description: 'Event-loop delay since the previous snapshot.' },
      ),
    }),
    requests: Type.Object({
      total: Type.Integer({ description: 'Requests answered since start.' }),
      routes: Type.Array(RouteSummary, { description: 'Per route, busiest first; latencies over the most recent requests.' }),
    }),
    counts: Type.Object({
      users: Type.Integer(),
      packs: Type.Integer(),
      versions: Type.Integer(),
      pending_uploads: Type.Integer(),
      drafts: Type.Integer(),
      api_tokens: Type.Integer({ description: 'Tokens neither revoked nor expired.' }),
      downloads: Type.Integer({ description: 'Counted downloads of the packs on the site, all time: an archive fetched with download=1, once per client address, version and UTC day.' }),
      downloads_today: Type.Integer({ description: 'Downloads counted so far on the current UTC day. Counts are written in batches every few seconds.' }),
    }),
    storage: Type.Object({ files: Type.Integer(), bytes: Type.Integer() }),
  },
  { additionalProperties: true, title: 'StatsSnapshot' },
)

export type StatsSnapshotBody = Static<typeof StatsSnapshot>
