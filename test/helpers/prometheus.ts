// GET /metrics as a scraper reads it: the exposition parsed by a third-party
// parser of Prometheus' text format (prom2javascript), so a test checks what
// Prometheus would take from it rather than what our own code thinks it wrote.
import assert from 'node:assert/strict'
import { getMetricsFromIterator, type PromHistogramData, type PromMetrics } from 'prom2javascript'
import type { TestSite } from './app.js'

/** A scrape token of the length PACKS_METRICS_TOKEN asks for. */
export const METRICS_TOKEN = 'test-scrape-token-0123456789abcdef0123456789abcdef'

export const scrapeHeaders = { authorization: `Bearer ${METRICS_TOKEN}` }

/**
 * The exposition as a Prometheus parser reads it. prom-client reports the event loop's delay from a histogram
 * it empties at every scrape; with no sample since the last one (two scrapes close together, or a loaded
 * machine where the monitor's tick is late) the mean is NaN, written "Nan". Prometheus reads that (Go's
 * ParseFloat takes NaN in any case) and a panel shows a gap; this parser throws on it. So a sample whose value
 * is NaN is left out here: its family stays, named by its HELP and TYPE lines, and every other value is read.
 */
export function parseExposition(text: string): Promise<PromMetrics> {
  const lines = text.split('\n').filter((line) => line.startsWith('#') || !/ nan$/i.test(line))
  return getMetricsFromIterator(lines[Symbol.iterator]())
}

/** GET /metrics through app.inject() with the token; asserts a 200 in the text format. */
export async function scrape(site: TestSite): Promise<PromMetrics> {
  const res = await site.app.inject({ method: 'GET', url: '/metrics', headers: scrapeHeaders })
  assert.equal(res.statusCode, 200, res.body)
  assert.equal(res.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8')
  return parseExposition(res.body)
}

/** Whether every label of `want` has that value in `labels`. */
function matches(labels: Record<string, string>, want: Record<string, string>): boolean {
  return Object.entries(want).every(([name, value]) => labels[name] === value)
}

/** The sum of a counter's or gauge's samples whose labels include `labels`; 0 when there is none. */
export function valueOf(metrics: PromMetrics, name: string, labels: Record<string, string> = {}): number {
  const family = metrics[name]
  if (family === undefined) return 0
  return (family.data as { labels: Record<string, string>; value: number }[])
    .filter((sample) => matches(sample.labels, labels))
    .reduce((sum, sample) => sum + sample.value, 0)
}

/** A histogram's series whose labels include `labels`. */
export function histogramOf(metrics: PromMetrics, name: string, labels: Record<string, string>): PromHistogramData[] {
  const family = metrics[name]
  assert.equal(family?.type, 'histogram', `${name} is a histogram`)
  return (family.data as PromHistogramData[]).filter((series) => matches(series.labels, labels))
}

/** The values one label takes across a family's samples. */
export function labelValues(metrics: PromMetrics, name: string, label: string): Set<string> {
  const family = metrics[name]
  return new Set((family?.data ?? []).map((sample) => sample.labels[label]).filter((value): value is string => value !== undefined))
}
