// Staff → Statistics: the snapshot of GET /api/stats/ (the same cached
// snapshot, app.statsSnapshot()) made readable: headline numbers, database
// counts, per-route latency table, and charts of the busiest routes.
// Non-staff get the 403 page from the auth hook (access 'staff').
import type { StatsSnapshotBody } from '../api/stats.js'
import { sendPage } from '../web/respond.js'
import type { App } from '../http/types.js'
import { barChart } from '../web/charts.js'
import { formatBytes, formatCount, formatDuration, formatMiB, formatMs, timeTag } from '../web/format.js'
import { html, type SafeHtml } from '../web/html.js'

/** Routes drawn in the charts; the table lists them all. */
const CHART_ROUTES = 12

export default async function statsPages(app: App): Promise<void> {
  app.get('/staff/stats/', { config: { access: 'staff', heavy: true }, schema: { hide: true } }, async (request, reply) => {
    const snapshot = await app.statsSnapshot()
    return sendPage(app, request, reply, { title: 'Statistics', body: statsBody(snapshot) })
  })
}

function statsBody(s: StatsSnapshotBody): SafeHtml {
  const cpuMs = s.process.cpu.user_ms + s.process.cpu.system_ms
  const cpuShare = s.uptime_seconds > 0 ? (cpuMs / 1000 / s.uptime_seconds) * 100 : 0
  const routes = s.requests.routes
  const anyErrors = routes.some((r) => r.errors > 0)
  const charted = routes.slice(0, CHART_ROUTES)
  const more = routes.length > charted.length ? ` (the ${CHART_ROUTES} busiest of ${routes.length})` : ''

  return html`<h1>Statistics</h1>
<p class="muted stats-meta">Generated at ${timeTag(s.generated_at, true)}; the snapshot is reused for ${formatCount(s.cache_seconds)} s, so reloading within that window shows the same numbers.
The same data as JSON: <a href="/api/stats/">/api/stats/</a>.</p>

<h2>Server</h2>
<dl class="stat-grid">
${stat('Uptime', formatDuration(s.uptime_seconds))}
${stat('Version', `Packs ${s.version}`, `Node ${s.node_version}`)}
${stat('Memory (RSS)', formatMiB(s.process.memory.rss), `heap ${formatMiB(s.process.memory.heap_used)} of ${formatMiB(s.process.memory.heap_total)}`)}
${stat('CPU time', `${(cpuMs / 1000).toFixed(1)} s`, `user ${(s.process.cpu.user_ms / 1000).toFixed(1)} s, system ${(s.process.cpu.system_ms / 1000).toFixed(1)} s; ${cpuShare.toFixed(1)}% of one core on average`)}
${stat('Event-loop delay', `p50 ${formatMs(s.event_loop.delay.p50_ms)}`, `p99 ${formatMs(s.event_loop.delay.p99_ms)}, max ${formatMs(s.event_loop.delay.max_ms)} since the previous snapshot`)}
${stat('Requests', formatCount(s.requests.total), 'answered since start')}
</dl>

<h2>Content</h2>
<dl class="stat-grid">
${stat('Users', formatCount(s.counts.users))}
${stat('Packs', formatCount(s.counts.packs))}
${stat('Versions', formatCount(s.counts.versions))}
${stat('Downloads', formatCount(s.counts.downloads), `${formatCount(s.counts.downloads_today)} today (UTC)`)}
${stat('Drafts', formatCount(s.counts.drafts))}
${stat('Pending uploads', formatCount(s.counts.pending_uploads))}
${stat('API tokens', formatCount(s.counts.api_tokens), 'live')}
${stat('Stored files', formatCount(s.storage.files), formatBytes(s.storage.bytes))}
</dl>

<h2 id="routes-title">Requests by route</h2>
${routes.length === 0 ? html`<p class="muted">No requests recorded yet.</p>` : html`
<div class="charts">
<figure class="chart-figure">
${barChart({
  id: 'chart-requests',
  title: `Requests per route${more}`,
  description: 'Horizontal bars, one per route, longer is more requests. The table below has the same numbers.',
  series: [{ name: 'requests', className: 'bar-count' }],
  groups: charted.map((r) => ({ label: r.route, values: [r.count] })),
  format: formatCount,
})}
<figcaption>Requests per route since start${more}.</figcaption>
</figure>
<figure class="chart-figure">
${barChart({
  id: 'chart-latency',
  title: `Latency per route: p50, p90 and p99 in milliseconds${more}`,
  description: 'Three bars per route: the median, 90th and 99th percentile response time over its recent requests. The table below has the same numbers.',
  series: [
    { name: 'p50', className: 'bar-p50' },
    { name: 'p90', className: 'bar-p90' },
    { name: 'p99', className: 'bar-p99' },
  ],
  groups: charted.map((r) => ({ label: r.route, values: [r.p50_ms, r.p90_ms, r.p99_ms] })),
  format: formatMs,
})}
<figcaption>Response time per route over its most recent requests${more}.</figcaption>
</figure>
</div>
<div class="table-scroll">
<table class="route-table" aria-describedby="routes-title">
<thead><tr><th scope="col">Route</th><th scope="col" class="num">Requests</th>${anyErrors ? html`<th scope="col" class="num">5xx errors</th>` : null}<th scope="col" class="num">p50</th><th scope="col" class="num">p90</th><th scope="col" class="num">p99</th><th scope="col" class="num">max</th></tr></thead>
<tbody>
${routes.map((r) => html`<tr><th scope="row" class="route"><code>${r.route}</code></th><td class="num">${formatCount(r.count)}</td>${anyErrors ? html`<td class="num${r.errors > 0 ? ' has-errors' : ''}">${formatCount(r.errors)}</td>` : null}<td class="num">${formatMs(r.p50_ms)}</td><td class="num">${formatMs(r.p90_ms)}</td><td class="num">${formatMs(r.p99_ms)}</td><td class="num">${formatMs(r.max_ms)}</td></tr>`)}
</tbody></table></div>`}`
}

function stat(label: string, value: string, detail?: string): SafeHtml {
  return html`<div class="stat"><dt>${label}</dt><dd><span class="stat-value">${value}</span>${detail ? html`<span class="stat-detail">${detail}</span>` : null}</dd></div>`
}
