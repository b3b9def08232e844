/** Current time in the one timestamp format the database stores (ISO 8601, UTC, ms, "Z"). */
export function nowIso(now: number = Date.now()): string {
  return new Date(now).toISOString()
}

let lastMonotonic = 0

/**
 * Now, but strictly later than the previous call in this process. Pending
 * uploads are ordered by creation time (media order, newest thumbnail); two
 * uploads in one millisecond must still have an order.
 */
export function monotonicNow(): number {
  lastMonotonic = Math.max(Date.now(), lastMonotonic + 1)
  return lastMonotonic
}
