// Failed password attempts, counted per client (src/auth/addresses.ts) in a
// fixed window that starts at the first failure. Three limiters run side by
// side, one for the gate password, one for account passwords (sign-in and
// password change) and one for feed tokens (./feed-tokens.ts), so guessing one
// never locks anyone out of the others: a feed reader left polling with a
// revoked token must not block its household's players at the gate.
//
// Count first, then check: an attempt whose answer needs scrypt reserves its
// place in the count before the check runs, and gives it back when the
// password was right. Thirty wrong guesses sent at once therefore meet the
// limit as thirty sent one by one would: at most `maxFailures` are checked.
// Correct passwords never accumulate, so a player's mod that knows the
// password is not slowed down, except from an address that is itself blocked
// (the answer must not tell a guesser that the password was right).

export type AttemptKind = 'gate' | 'login' | 'feed'

/** An attempt that may go ahead: `refund` gives its place in the count back (the password was right, or the check never ran). */
export interface Reservation {
  retryAfter: 0
  refund(): Promise<void>
}

/** A refused attempt: the client is blocked for `retryAfter` seconds more. Nothing was counted. */
export interface Refusal {
  retryAfter: number
}

export interface AttemptLimiter {
  /**
   * Reserves one attempt for `key` before an expensive check. Refused (and
   * not counted) when `key` already has maxFailures in its window. A store in
   * memory answers at once.
   */
  reserve(key: string): Reservation | Refusal | Promise<Reservation | Refusal>
  /**
   * For a check whose answer was known at once (no scrypt): seconds `key` is
   * still blocked, in which case nothing is counted; else 0, having counted
   * a failure when `succeeded` is false. One atomic step, so concurrent
   * failures cannot slip past the limit either.
   */
  settle(key: string, succeeded: boolean): number | Promise<number>
  /**
   * settle(key, true) when it can be answered at once (the update-check's fast path): the seconds `key`
   * is still blocked, or 0; undefined when only an asynchronous check can tell.
   */
  blockedNow?(key: string): number | undefined
}

/** Clients tracked per limiter in memory; see MemoryAttemptLimiter for what happens beyond. */
export const MAX_TRACKED_CLIENTS = 20_000

interface Window {
  readonly key: string
  /** Failures plus attempts in flight. */
  count: number
  readonly resetAt: number
}

/**
 * The limiter of a single instance. Memory is bounded by `maxTracked` windows:
 * a flood from many addresses cannot grow it, and the eviction it forces
 * cannot be used to unblock an address cheaply. Expired windows go first;
 * then the window with the fewest failures (the earliest to reach that count
 * among equals). A blocked window is evicted only when every tracked window
 * is blocked, that is after maxTracked × maxFailures counted failures in the
 * window, so freeing one address costs more guesses than it gives back.
 * (Least-recently-used eviction would let a guesser free its own address with
 * one request from each of maxTracked other addresses.)
 */
export class MemoryAttemptLimiter implements AttemptLimiter {
  /** Every window, in creation order, which is also the order of their ends (the window length is fixed). */
  private readonly windows = new Map<string, Window>()
  /** The same windows grouped by count, each group in the order its members reached that count. */
  private readonly byCount = new Map<number, Set<Window>>()

  constructor(
    private readonly maxFailures: number,
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
    private readonly maxTracked: number = MAX_TRACKED_CLIENTS,
  ) {}

  reserve(key: string): Reservation | Refusal {
    const now = this.now()
    const blocked = this.blockedFor(key, now)
    if (blocked > 0) return { retryAfter: blocked }
    let window: Window | undefined = this.count(key, now)
    return {
      retryAfter: 0,
      refund: async () => {
        // Once only; and a window that ended (or was evicted) meanwhile is not this attempt's to change.
        if (window && this.windows.get(key) === window && window.count > 0) this.move(window, window.count - 1)
        window = undefined
      },
    }
  }

  blockedNow(key: string): number {
    return this.blockedFor(key, this.now())
  }

  settle(key: string, succeeded: boolean): number {
    const now = this.now()
    const blocked = this.blockedFor(key, now)
    if (blocked === 0 && !succeeded) this.count(key, now)
    return blocked
  }

  /** How many clients are tracked (for tests and the bound). */
  get size(): number {
    return this.windows.size
  }

  private blockedFor(key: string, now: number): number {
    const window = this.windows.get(key)
    if (!window) return 0
    if (window.resetAt <= now) {
      this.remove(window)
      return 0
    }
    return window.count >= this.maxFailures ? Math.max(1, Math.ceil((window.resetAt - now) / 1000)) : 0
  }

  /** Adds one to `key`'s count, opening its window if it has none (blockedFor has dropped an expired one). */
  private count(key: string, now: number): Window {
    const existing = this.windows.get(key)
    if (existing) {
      this.move(existing, existing.count + 1)
      return existing
    }
    if (this.windows.size >= this.maxTracked) this.evict(now)
    const window: Window = { key, count: 0, resetAt: now + this.windowMs }
    this.windows.set(key, window)
    this.move(window, 1)
    return window
  }

  private move(window: Window, count: number): void {
    const from = this.byCount.get(window.count)
    if (from) {
      from.delete(window)
      if (from.size === 0) this.byCount.delete(window.count)
    }
    window.count = count
    let to = this.byCount.get(count)
    if (!to) this.byCount.set(count, (to = new Set()))
    to.add(window)
  }

  private remove(window: Window): void {
    this.windows.delete(window.key)
    const group = this.byCount.get(window.count)
    group?.delete(window)
    if (group?.size === 0) this.byCount.delete(window.count)
  }

  private evict(now: number): void {
    // Expired windows sit at the front of the creation order: each is removed once, so this is O(1) amortised.
    for (const window of this.windows.values()) {
      if (window.resetAt > now) break
      this.remove(window)
    }
    if (this.windows.size < this.maxTracked) return
    // At most maxFailures + 1 distinct counts exist (a blocked window is never counted further).
    let lowest: number | undefined
    for (const count of this.byCount.keys()) if (lowest === undefined || count < lowest) lowest = count
    const victim = this.byCount.get(lowest!)!.values().next().value!
    this.remove(victim)
  }
}
