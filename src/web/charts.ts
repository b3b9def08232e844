// Server-rendered SVG charts and the number formatting they and the staff
// pages share. Charts are built with the `html` tag, so every label is
// escaped; colours come from classes (src/web/styles/stats.css) and SVG
// presentation attributes, never style="" (the CSP forbids inline style).
// Each chart carries a <title> and an aria-label; the page shows the same
// numbers in a table, which is what a screen reader should read.
import { html, type SafeHtml } from './html.js'

// ---- formatting ----------------------------------------------------------

/** `<time datetime="…">2025-01-31 14:05 UTC</time>`: the same text on every machine. */
export function timeTag(iso: string): SafeHtml {
  return html`<time datetime="${iso}">${formatUtc(iso)}</time>`
}

export function formatUtc(iso: string): string {
  const date = new Date(iso)
  if (Number.isNaN(date.getTime())) return iso
  return `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`
}

const BYTE_UNITS = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB']

/** 1536 → "1.5 KiB"; whole bytes below 1 KiB. */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 1024) return `${Math.max(0, Math.round(bytes || 0))} ${bytes === 1 ? 'byte' : 'bytes'}`
  let value = bytes
  let unit = 0
  while (value >= 1024 && unit < BYTE_UNITS.length - 1) {
    value /= 1024
    unit++
  }
  return `${value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1) : value.toFixed(2)} ${BYTE_UNITS[unit]}`
}

/** Bytes as MiB with one decimal: memory figures read best on one scale. */
export function formatMiB(bytes: number): string {
  return `${(bytes / 1_048_576).toFixed(1)} MiB`
}

/** 93784 → "1 d 2 h 3 min"; under a minute, seconds. */
export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds))
  if (s < 60) return `${s} s`
  const days = Math.floor(s / 86_400)
  const hours = Math.floor((s % 86_400) / 3600)
  const minutes = Math.floor((s % 3600) / 60)
  const parts: string[] = []
  if (days) parts.push(`${days} d`)
  if (hours || days) parts.push(`${hours} h`)
  parts.push(`${minutes} min`)
  return parts.join(' ')
}

/** Milliseconds with sensible precision: 0.042 ms, 3.1 ms, 250 ms. */
export function formatMs(ms: number): string {
  if (!Number.isFinite(ms)) return '–'
  if (ms === 0) return '0 ms'
  if (ms < 1) return `${ms.toFixed(3).replace(/0+$/, '')} ms`
  if (ms < 100) return `${ms.toFixed(1)} ms`
  return `${Math.round(ms)} ms`
}

export function formatCount(value: number): string {
  return value.toLocaleString('en-US')
}

// ---- horizontal bar chart --------------------------------------------------

export interface BarSeries {
  /** Shown in the legend. */
  name: string
  /** A class for the bars' fill (stats.css), e.g. "bar-a". */
  className: string
}

export interface BarGroup {
  label: string
  /** One value per series, in the series' order. */
  values: number[]
}

export interface BarChartOptions {
  id: string
  title: string
  /** One sentence for the chart's <desc>. */
  description: string
  series: BarSeries[]
  groups: BarGroup[]
  format: (value: number) => string
}

// Geometry in viewBox units. The SVG scales to its container (stats.css), so
// at 360 px it shrinks instead of overflowing; the label sits above its bars
// so a long route name gets the full width.
const WIDTH = 360
const PAD = 8
const LABEL_H = 16
const BAR_H = 10
const BAR_GAP = 3
const GROUP_GAP = 12
const LEGEND_H = 24
const VALUE_W = 64

/**
 * Horizontal bars, one group per row (a label, then one bar per series), on a
 * linear scale from zero to the largest value. Bars of zero get a hairline so
 * the row is still visibly there.
 */
export function barChart(options: BarChartOptions): SafeHtml {
  const { series, groups } = options
  const max = Math.max(0, ...groups.flatMap((g) => g.values.filter((v) => Number.isFinite(v))))
  const barArea = WIDTH - PAD * 2 - VALUE_W
  const groupH = LABEL_H + series.length * (BAR_H + BAR_GAP) + GROUP_GAP
  const legend = series.length > 1
  const top = PAD + (legend ? LEGEND_H : 0)
  const height = top + groups.length * groupH + PAD
  const titleId = `${options.id}-title`
  const descId = `${options.id}-desc`

  const legendItems = legend
    ? series.map((s, i) => html`<g transform="translate(${PAD + i * 72} ${PAD})">
<rect class="${s.className}" x="0" y="2" width="10" height="10" rx="2"></rect>
<text class="chart-legend" x="15" y="11">${s.name}</text></g>`)
    : null

  const rows = groups.map((group, g) => {
    const y = top + g * groupH
    const bars = series.map((s, i) => {
      const value = group.values[i] ?? 0
      const width = max > 0 ? Math.max(1, (value / max) * barArea) : 1
      const barY = y + LABEL_H + i * (BAR_H + BAR_GAP)
      return html`<rect class="${s.className}" x="${PAD}" y="${barY}" width="${round(width)}" height="${BAR_H}" rx="2"><title>${group.label}: ${s.name} ${options.format(value)}</title></rect>
<text class="chart-value" x="${round(PAD + width + 6)}" y="${barY + BAR_H - 1}">${options.format(value)}</text>`
    })
    return html`<g class="chart-row"><text class="chart-label" x="${PAD}" y="${y + LABEL_H - 5}">${group.label}</text>${bars}</g>`
  })

  return html`<svg class="chart" id="${options.id}" viewBox="0 0 ${WIDTH} ${height}" width="${WIDTH}" height="${height}" role="img" aria-labelledby="${titleId}" aria-describedby="${descId}" preserveAspectRatio="xMinYMin meet" xmlns="http://www.w3.org/2000/svg">
<title id="${titleId}">${options.title}</title><desc id="${descId}">${options.description}</desc>
${legendItems}${rows}
</svg>`
}

const round = (value: number) => Math.round(value * 10) / 10
