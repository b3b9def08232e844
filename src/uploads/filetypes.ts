// Which file types each upload kind accepts (docs/decisions.md#accepted-types). The type is always
// decided from the bytes (file-type's signatures), never from the name or the
// client's declared Content-Type.
import { fileTypeFromBuffer } from 'file-type'
import type { UploadKind } from '../api/constants.js'

const IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp']
const VIDEO_TYPES = ['video/mp4', 'video/webm']
export const ZIP_TYPE = 'application/zip'

export const ALLOWED_TYPES: Record<UploadKind, readonly string[]> = {
  thumbnail: IMAGE_TYPES,
  media: [...IMAGE_TYPES, ...VIDEO_TYPES],
  version: [ZIP_TYPE],
}

/** Enough leading bytes for every signature above (file-type reads at most this many for them). */
export const SNIFF_BYTES = 4100

/** The MIME type the leading bytes show, or undefined when file-type knows none. */
export async function sniffType(head: Uint8Array): Promise<string | undefined> {
  return (await fileTypeFromBuffer(head))?.mime
}

export function describeAllowed(kind: UploadKind): string {
  return kind === 'version' ? 'a ZIP archive' : ALLOWED_TYPES[kind].map((t) => t.split('/')[1]!.toUpperCase()).join(', ')
}
