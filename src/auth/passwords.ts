// Password hashing with scrypt (memory-hard). The cost, scrypt's N, is a
// setting (PACKS_PASSWORD_HASH_COST): the default 2^15 with r=8 costs 32 MiB
// and ~0.1 s a hash on this class of machine (OWASP's scrypt minimum is N=2^17
// with r=8 for 128 MiB; we trade a step of that for a login that stays quick on
// 2 cores), and tests lower it. Each hash stores its own N, r and p, so a hash
// made at another cost still verifies whatever the setting is now.
import { randomBytes, scrypt as scryptCallback, timingSafeEqual, type ScryptOptions } from 'node:crypto'
import { passwordWork, type PasswordWork } from './password-work.js'

const R = 8
const P = 1
const KEY_LENGTH = 32
const SALT_LENGTH = 16

export class PasswordHasher {
  /**
   * A well-formed hash at this cost that no password matches (its key is
   * random): verifying against it costs exactly what verifying a real password
   * costs, so a sign-in for a name that does not exist takes as long as one
   * with a wrong password, and needs no hashing of its own first.
   */
  private readonly decoy: string

  constructor(
    /** scrypt's N for new hashes: a power of two (the config checks it). */
    readonly cost: number,
    /** Every scrypt of the process waits for a slot of this, or is refused at once (password-work.ts). */
    private readonly work: PasswordWork = passwordWork,
  ) {
    this.decoy = format(cost, randomBytes(SALT_LENGTH), randomBytes(KEY_LENGTH))
  }

  async hash(password: string): Promise<string> {
    const salt = randomBytes(SALT_LENGTH)
    return format(this.cost, salt, await this.scrypt(password, salt, KEY_LENGTH, this.cost, R, P))
  }

  /** Whether `password` is the one `stored` was made from; false for anything that is not one of our hashes. */
  async verify(password: string, stored: string): Promise<boolean> {
    const [scheme, n, r, p, salt, expected] = stored.split('$')
    if (scheme !== 'scrypt' || !n || !r || !p || !salt || !expected) return false
    const expectedKey = Buffer.from(expected, 'base64url')
    const key = await this.scrypt(password, Buffer.from(salt, 'base64url'), expectedKey.length, Number(n), Number(r), Number(p))
    return timingSafeEqual(key, expectedKey)
  }

  /** The work of a verification that fails: for a username that does not exist. Always false. */
  async verifyNobody(password: string): Promise<false> {
    await this.verify(password, this.decoy)
    return false
  }

  private scrypt(password: string, salt: Buffer, keyLength: number, N: number, r: number, p: number): Promise<Buffer> {
    const options: ScryptOptions = { N, r, p, maxmem: 128 * N * r * p * 2 }
    return this.work.run(() => new Promise<Buffer>((resolve, reject) =>
      scryptCallback(password, salt, keyLength, options, (error, key) => (error ? reject(error) : resolve(key))),
    ))
  }
}

function format(N: number, salt: Buffer, key: Buffer): string {
  return ['scrypt', N, R, P, salt.toString('base64url'), key.toString('base64url')].join('$')
}
