// Counts failed gate and login attempts per client address in a fixed window.
// Successful requests are never counted, so a player's mod that knows the
// password is never slowed down by someone else guessing.

export interface AttemptLimiter {
  /** Seconds until `key` may try again, or 0 when it is not blocked. A store in memory answers at once. */
  retryAfter(key: string): number | Promise<number>
  recordFailure(key: string): Promise<void>
}

export class MemoryAttemptLimiter implements AttemptLimiter {
  private readonly windows = new Map<string, { failures: number; resetAt: number }>()

  constructor(
    private readonly maxFailures: number,
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  retryAfter(key: string): number {
    const window = this.current(key)
    if (!window || window.failures < this.maxFailures) return 0
    return Math.max(1, Math.ceil((window.resetAt - this.now()) / 1000))
  }

  async recordFailure(key: string): Promise<void> {
    const window = this.current(key)
    if (window) window.failures += 1
    else this.windows.set(key, { failures: 1, resetAt: this.now() + this.windowMs })
    if (this.windows.size > 10_000) this.prune()
  }

  private current(key: string) {
    const window = this.windows.get(key)
    if (window && window.resetAt <= this.now()) {
      this.windows.delete(key)
      return undefined
    }
    return window
  }

  /** Bounds memory under a flood of distinct addresses. */
  private prune(): void {
    const now = this.now()
    for (const [key, window] of this.windows) if (window.resetAt <= now) this.windows.delete(key)
  }
}
