// Running packs-sync as a player does, for its tests: `node packages/packs-sync/bin/packs-sync.js <folder> --site …`
// in a child process, its exit code, its two streams, and (for the size limits) its peak memory.
import assert from 'node:assert/strict'
import { spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { ROOT } from '../helpers/server.js'

export const BIN = path.join(ROOT, 'packages', 'packs-sync', 'bin', 'packs-sync.js')

export interface Run {
  code: number | null
  stdout: string
  stderr: string
  /** The child's peak resident set, in KiB, when asked for (`measure`). */
  maxRssKiB?: number
}

/** Reports the process's peak RSS on fd 3 as it exits, whatever way it exits (process.exit included). */
const MEASURE = `data:text/javascript,${encodeURIComponent("import { writeSync } from 'node:fs'; process.on('exit', () => writeSync(3, String(process.resourceUsage().maxRSS)))")}`

export interface RunOptions {
  password?: string
  measure?: boolean
  /** Called with the child as soon as it is spawned (to plant something before it gets far). */
  spawned?: (child: ChildProcess) => void
}

export function runSync(folder: string, args: string[], options: RunOptions = {}): Promise<Run> {
  const child = spawn(process.execPath, [...(options.measure ? ['--import', MEASURE] : []), BIN, folder, ...args], {
    env: { ...process.env, PACKS_MASTER_PASSWORD: options.password ?? 'sync-site-password' },
    stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
  })
  options.spawned?.(child)
  let stdout = ''
  let stderr = ''
  let measured = ''
  child.stdout!.on('data', (chunk: Buffer) => { stdout += chunk })
  child.stderr!.on('data', (chunk: Buffer) => { stderr += chunk })
  ;(child.stdio[3] as NodeJS.ReadableStream).on('data', (chunk: Buffer) => { measured += chunk })
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr, ...(options.measure ? { maxRssKiB: Number(measured) } : {}) })))
}

/** Exit 1 and one line on stderr about it (besides the progress lines of downloads): what a player sees. */
export function failed(run: Run, pattern: RegExp): void {
  assert.equal(run.code, 1, `exit 1 expected: ${run.stdout} ${run.stderr}`)
  const lines = run.stderr.split('\n').filter((line) => line !== '' && !line.startsWith('downloading '))
  assert.equal(lines.length, 1, `one line: ${run.stderr}`)
  assert.match(lines[0]!, pattern)
  assert.doesNotMatch(run.stderr, /^\s+at /m)
}

export function readLockFile(folder: string): { site: string; key: { id: string } | null; retired_keys?: Record<string, string>; packs: Record<string, { namespace: string; pack_id: string; version: string; sha256: string }>; signed_at?: Record<string, number> } {
  return JSON.parse(fs.readFileSync(path.join(folder, '.packs-sync.json'), 'utf8')) as ReturnType<typeof readLockFile>
}
