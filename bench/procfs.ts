// Memory of another process, read from Linux's /proc/<pid>/status, and its CPU time from /proc/<pid>/stat.
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'

export interface Memory {
  /** Resident set size now, in bytes. */
  rss: number
  /** Peak resident set size since start (or since the last resetPeak), in bytes. */
  hwm: number
}

export function readMemory(pid: number): Memory {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8')
  const kib = (field: string) => {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(status)
    if (!match) throw new Error(`/proc/${pid}/status has no ${field}`)
    return Number(match[1]) * 1024
  }
  return { rss: kib('VmRSS'), hwm: kib('VmHWM') }
}

/**
 * Resets VmHWM to the current RSS (writing 5 to clear_refs, Linux >= 4.0), so the
 * peak measured afterwards belongs to what follows, not to start-up.
 * Returns false where that is not permitted; the caller then relies on sampling.
 */
export function resetPeak(pid: number): boolean {
  try {
    fs.writeFileSync(`/proc/${pid}/clear_refs`, '5')
    return true
  } catch {
    return false
  }
}

/** Samples RSS every `intervalMs` until stopped; returns the highest RSS seen. */
export function sampleRss(pid: number, intervalMs = 50): { stop(): number } {
  let max = 0
  const take = () => {
    try {
      max = Math.max(max, readMemory(pid).rss)
    } catch {
      // The process is gone; the caller notices through its exit.
    }
  }
  take()
  const timer = setInterval(take, intervalMs)
  return {
    stop() {
      clearInterval(timer)
      take()
      return max
    },
  }
}

export const MiB = 1024 * 1024

/** Clock ticks per second of /proc's CPU times (getconf CLK_TCK; 100 on Linux's usual builds). */
let ticksPerSecond: number | undefined

/** CPU time another process has used so far, user and system, all its threads: /proc/<pid>/stat's utime + stime. */
export function readCpuSeconds(pid: number): number {
  ticksPerSecond ??= Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
  // The command name in parentheses may hold spaces; the fields after it start with the state (field 3).
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond
}
