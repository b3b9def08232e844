// Client-supplied file names: cleaned for storage, encoded for Content-Disposition.
import path from 'node:path'

const MAX_FILENAME_LENGTH = 200

/**
 * The base name of what the client sent, with directory parts (either slash),
 * control characters and bidi overrides removed. Never empty.
 */
export function sanitizeFilename(raw: string | undefined, fallback = 'file'): string {
  const base = path.posix.basename((raw ?? '').replace(/\\/g, '/'))
  const cleaned = base
    // C0/C1 controls, and bidi controls that can make "gpj.exe" read as "exe.jpg" (the same set src/http/text-input.ts refuses).
    .replace(/[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, '')
    .trim()
  const name = cleaned === '.' || cleaned === '..' ? '' : cleaned
  return (name || fallback).slice(0, MAX_FILENAME_LENGTH)
}

/**
 * Content-Disposition with an ASCII fallback `filename` and the exact name in
 * RFC 5987 `filename*` (RFC 6266 section 4.3), so every browser gets a usable name.
 */
export function contentDisposition(type: 'inline' | 'attachment', filename: string): string {
  // Decompose and drop the combining marks, so "Grüße" falls back to "Gru_e" rather than "Gru__e".
  const ascii = filename.normalize('NFKD').replace(/[\u0300-\u036f]/g, '').replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_')
  const encoded = encodeURIComponent(filename).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
  return `${type}; filename="${ascii}"; filename*=UTF-8''${encoded}`
}
