// The baselines of scenarios (c) and (c2), run as their own process pinned to the server CPU: how
// fast is our JWT access token verified in one process, by jose (what an API would use) and by a
// bare node:crypto loop (the limit: a KeyObject prepared once, one signature check, the payload
// parsed and its iss, exp and typ compared)? Same token, the public key from our JWKS. No HTTP, no
// parsing of forms: the cost floor of "is this JWT valid", which introspection should approach.
// Input: JWKS_URL, TOKEN, ISSUER, DURATION_MS. Output: one JSON line {rate, cryptoRate}, per second.
import { createPublicKey, verify as cryptoVerify, type JsonWebKeyInput } from 'node:crypto'
import { decodeProtectedHeader, importJWK, jwtVerify, type JWK } from 'jose'

const WARMUP_MS = 500

async function verifyFor(ms: number, verify: () => Promise<unknown>): Promise<{ verifies: number; seconds: number }> {
  let verifies = 0
  const start = performance.now()
  const end = start + ms
  while (performance.now() < end) {
    await verify()
    verifies++
  }
  return { verifies, seconds: (performance.now() - start) / 1000 }
}

async function main() {
  const { JWKS_URL, TOKEN, ISSUER, DURATION_MS } = process.env
  if (!JWKS_URL || !TOKEN || !ISSUER) throw new Error('JWKS_URL, TOKEN and ISSUER are required')
  const { kid } = decodeProtectedHeader(TOKEN)
  const jwks = (await (await fetch(JWKS_URL)).json()) as { keys: JWK[] }
  const jwk = jwks.keys.find((k) => k.kid === kid)
  if (!jwk) throw new Error(`kid ${kid} not in ${JWKS_URL}`)
  const key = await importJWK(jwk, 'ES256') // imported once, as a long-running API would
  const verify = () => jwtVerify(TOKEN, key, { issuer: ISSUER, typ: 'at+jwt', algorithms: ['ES256'] })
  const durationMs = Number(DURATION_MS ?? 3000)
  await verifyFor(WARMUP_MS, verify) // JIT and WebCrypto warm-up, discarded
  const jose = await verifyFor(durationMs / 2, verify)

  const publicKey = createPublicKey({ key: jwk as JsonWebKeyInput['key'], format: 'jwk' })
  const verifyCrypto = async () => {
    const [h, p, s] = TOKEN.split('.') as [string, string, string]
    const ok = cryptoVerify('sha256', Buffer.from(`${h}.${p}`), { key: publicKey, dsaEncoding: 'ieee-p1363' }, Buffer.from(s, 'base64url'))
    const header = JSON.parse(Buffer.from(h, 'base64url').toString('utf8')) as { typ?: string }
    const claims = JSON.parse(Buffer.from(p, 'base64url').toString('utf8')) as { iss?: string; exp?: number }
    if (!ok || header.typ !== 'at+jwt' || claims.iss !== ISSUER || !(Number(claims.exp) > Date.now() / 1000)) throw new Error('invalid')
  }
  await verifyFor(WARMUP_MS, verifyCrypto)
  const crypto = await verifyFor(durationMs / 2, verifyCrypto)
  process.stdout.write(`${JSON.stringify({ rate: jose.verifies / jose.seconds, cryptoRate: crypto.verifies / crypto.seconds })}\n`)
}

main().catch((err: unknown) => {
  process.stderr.write(`jose-verify failed: ${err instanceof Error ? err.message : String(err)}\n`)
  process.exit(1)
})
