// Polling for tests that wait on something another process or a timer does:
// a bound for a loaded machine, not a sleep. One place for it, so every test
// polls the same way.
import { setTimeout as sleep } from 'node:timers/promises'

/** Polls `probe` until it gives a value (not undefined), every `everyMs`; throws naming `what` after `timeoutMs`. */
export async function until<T>(probe: () => T | undefined | Promise<T | undefined>, what: string, timeoutMs = 15_000, everyMs = 20): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(everyMs)
  }
}

/** Polls until `check` holds or `ms` have passed; returns whether it held (for `assert.ok(await eventually(...), why)`). */
export async function eventually(check: () => boolean | Promise<boolean>, ms = 5000): Promise<boolean> {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    if (await check()) return true
    await sleep(20)
  }
  return check()
}
