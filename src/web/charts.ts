// Server-rendered SVG charts for the staff pages. Charts are built with the `html` tag, so every label is
// escaped; colours come from classes (src/web/styles/stats.css) and SVG
// presentation attributes, never style="" (the CSP forbids inline style).
// Each chart carries a <title> and an aria-label; the page shows the same
// numbers in a table, which is what a screen reader should read.
import { html, type SafeHtml } from './html.js'

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
