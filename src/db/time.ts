/** Current time in the one timestamp format the database stores (ISO 8601, UTC, ms, "Z"). */
export function nowIso(now: number = Date.now()): string {
  return new Date(now).toISOString()
}
