// User passwords and CIBA user codes: scrypt (node:crypto) with a per-user salt.
// Stored as scrypt$N$r$p$salt$hash with base64url salt and hash, so a hash made at one cost
// still verifies after the cost changes.
import { randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto'

/** log2 of scrypt's N for new hashes: 14 (N = 16384, 16 MiB and tens of milliseconds a check). */
export const DEFAULT_PASSWORD_HASH_COST = 14
const R = 8
const P = 1
const KEYLEN = 32

/**
 * The cost of new hashes, and of the check spent on a missing hash, for this process: set once
 * at start from PASSWORD_HASH_COST by the server and the CLI, before any hash is made.
 */
let N = 2 ** DEFAULT_PASSWORD_HASH_COST

export function configurePasswordHashing(cost: number): void {
  N = 2 ** cost
}

function scrypt(password: string, salt: Buffer, keylen: number, opts: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => scryptCb(password, salt, keylen, opts, (err, key) => (err ? reject(err) : resolve(key))))
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16)
  const hash = await scrypt(password, salt, KEYLEN, { N, r: R, p: P })
  return ['scrypt', N, R, P, salt.toString('base64url'), hash.toString('base64url')].join('$')
}

export async function verifyPassword(password: string, stored: string | undefined): Promise<boolean> {
  const parts = stored?.split('$')
  if (!parts || parts.length !== 6 || parts[0] !== 'scrypt') {
    // Spend the same time as a real check so a missing user is not told apart by timing.
    await scrypt(password, Buffer.alloc(16), KEYLEN, { N, r: R, p: P })
    return false
  }
  const [, n, r, p, salt, hash] = parts as [string, string, string, string, string, string]
  const expected = Buffer.from(hash, 'base64url')
  const actual = await scrypt(password, Buffer.from(salt, 'base64url'), expected.length, {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    maxmem: 256 * Number(n) * Number(r) + 1024 * 1024,
  })
  return actual.length === expected.length && timingSafeEqual(actual, expected)
}
