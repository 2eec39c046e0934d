// The baseline of scenario (c), run as its own process pinned to the server CPU: how fast does
// jose alone verify our JWT access token in one process? Same token, the public key from our JWKS,
// the checks an API would make (signature, alg, typ, iss, exp). No HTTP, no parsing of forms: the
// cost floor of "is this JWT valid", which introspection of a JWT should approach (issue 3 item 12).
// Input: JWKS_URL, TOKEN, ISSUER, DURATION_MS. Output: one JSON line {verifies, seconds, rate}.
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
  await verifyFor(WARMUP_MS, verify) // JIT and WebCrypto warm-up, discarded
  const { verifies, seconds } = await verifyFor(Number(DURATION_MS ?? 3000), verify)
  process.stdout.write(`${JSON.stringify({ verifies, seconds, rate: verifies / seconds })}\n`)
}

main().catch((err: unknown) => {
  process.stderr.write(`jose-verify failed: ${err instanceof Error ? err.message : String(err)}\n`)
  process.exit(1)
})
