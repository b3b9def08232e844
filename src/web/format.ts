// How the pages show numbers and times: one formatting for the whole site.
import { formatUtc } from './dates.js'
import { html, type SafeHtml } from './html.js'

/** `<time datetime="2026-11-22T21:45:00.000Z">22 Nov 2026</time>` (with the time of day when asked); the exact instant in its title. */
export function timeTag(iso: string, withTime = false): SafeHtml {
  if (Number.isNaN(new Date(iso).getTime())) return html`<time>${iso}</time>`
  return html`<time datetime="${iso}" title="${formatUtc(iso, true)}">${formatUtc(iso, withTime)}</time>`
}

const BYTE_UNITS = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB']

/**
 * A byte count for people: the one way the site writes a size, on its pages
 * and in the API's messages. Whole bytes below 1 KiB; above, binary units:
 * - `figures` (the default): three significant figures, 1536 → "1.50 KiB";
 * - `exact`, for a limit, which a rounded figure would misstate: the largest
 *   unit that holds it whole, 5 MiB → "5 MiB", 1536 → "1536 bytes";
 * - `tenths`, one decimal, 100 KiB → "100.0 KiB": an amount in a message
 *   (a quota's use, a file the consistency check reports).
 */
export function formatBytes(bytes: number, style: 'figures' | 'exact' | 'tenths' = 'figures'): string {
  if (!Number.isFinite(bytes) || bytes < 1024) return `${Math.max(0, Math.round(bytes || 0))} ${bytes === 1 ? 'byte' : 'bytes'}`
  let value = bytes
  let unit = 0
  while (value >= 1024 && unit < BYTE_UNITS.length - 1 && (style !== 'exact' || Number.isInteger(value / 1024))) {
    value /= 1024
    unit++
  }
  if (style === 'exact') return `${value} ${BYTE_UNITS[unit]}`
  if (style === 'tenths') return `${value.toFixed(1)} ${BYTE_UNITS[unit]}`
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
