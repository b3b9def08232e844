// The site's public signing keys (GET /api/update-check/keys/): what an
// updater verifies the Packs-Signature header of an update-check answer with.
// The protocol is written out in docs/update-protocol.md.
import { Type, type Static } from 'typebox'

/** The response header that carries an answer's signature. */
export const SIGNATURE_HEADER = 'packs-signature'

/** The first line of the statement a key signs when the site rotates to its successor. */
export const ENDORSEMENT_PREFIX = 'packs-signing-key-v1'

export const SigningKey = Type.Object(
  {
    id: Type.String({ description: 'The first 16 hex digits of the SHA-256 of the raw public key; the keyid a signature names.' }),
    algorithm: Type.Literal('ed25519'),
    public_key: Type.String({ description: 'The raw 32-byte Ed25519 public key, base64.' }),
    created_at: Type.String({ format: 'date-time' }),
    status: Type.Union([Type.Literal('current'), Type.Literal('previous'), Type.Literal('retired')], {
      description: 'current signs new answers; previous still signs answers until expires_at (the grace period after a rotation); '
        + 'retired is past it, listed only so a client can follow the endorsements from a key it pinned long ago.',
    }),
    expires_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: 'When signatures by this key stop being valid; null for the current key.',
    }),
    endorsement: Type.Union([
      Type.Object({
        by: Type.String({ description: 'The id of the key that was current before this one.' }),
        previous_expires_at: Type.String({ format: 'date-time', description: 'When that key stops being valid.' }),
        sig: Type.String({
          description: `Its Ed25519 signature (base64) over the UTF-8 lines "${ENDORSEMENT_PREFIX}", this key's id, this key's public_key, `
            + 'by and previous_expires_at, joined by \\n.',
        }),
      }),
      Type.Null(),
    ], { description: 'How the previous key vouched for this one when the site rotated to it; null for the site\'s first key.' }),
  },
  { title: 'SigningKey' },
)

export const SigningKeys = Type.Object(
  { keys: Type.Array(SigningKey, { description: 'The current key first, then older ones, newest first.' }) },
  { title: 'SigningKeys' },
)

export type SigningKeyBody = Static<typeof SigningKey>
export type SigningKeysBody = Static<typeof SigningKeys>
