// The admin API's writes, one at a time across every replica: each takes this transaction-scoped
// advisory lock first, so that the version a write checked its If-Match against is the one it
// replaces (src/admin/etag.ts). Admin writes are rare; the token and sign-in paths never take it.
import type { Queryable } from '../db/db.js'

/** Fixed key for pg_advisory_xact_lock, distinct from the others: "authadm" in ASCII. */
const LOCK_KEY = 0x61757468_61646dn

export async function lockAdminWrites(tx: Queryable): Promise<void> {
  await tx.query('SELECT pg_advisory_xact_lock($1)', [LOCK_KEY.toString()])
}
