// What our server is compared with: oidc-provider (bench/peer-oidc-provider.ts) in its own process,
// and, for JWT introspection which oidc-provider refuses, jose verifying the token in a loop
// (bench/jose-verify.ts). Both run pinned to the server CPU, like our server.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Cleanup } from './cleanup.js'
import { spawnNode, waitForHttp, type Child, type Pinning } from './processes.js'

export interface Peer {
  child: Child
  url: string
  version: string
}

const childEnv = (extra: Record<string, string>): NodeJS.ProcessEnv => ({ PATH: process.env.PATH, HOME: process.env.HOME, ...extra })

export async function startPeer(opts: { root: string; port: number; pinning: Pinning; cleanup: Cleanup }): Promise<Peer> {
  const url = `http://127.0.0.1:${opts.port}`
  const child = spawnNode('oidc-provider', ['--import', 'tsx', join(opts.root, 'bench', 'peer-oidc-provider.ts')], {
    cwd: opts.root,
    env: childEnv({ PEER_PORT: String(opts.port) }),
    pinning: opts.pinning,
  })
  opts.cleanup.defer('stop oidc-provider', () => child.stop())
  const discoveryUrl = `${url}/.well-known/openid-configuration`
  await waitForHttp(child, discoveryUrl)
  // Confirm it runs as configured, not just that it listens.
  const discovery = (await (await fetch(discoveryUrl)).json()) as Record<string, unknown>
  const missing = ['token_endpoint', 'introspection_endpoint'].filter((k) => typeof discovery[k] !== 'string')
  if (discovery.issuer !== url || missing.length > 0) {
    throw new Error(`oidc-provider discovery is not as configured (issuer ${String(discovery.issuer)}, missing ${missing.join(', ')})`)
  }
  const pkg = JSON.parse(readFileSync(join(opts.root, 'node_modules', 'oidc-provider', 'package.json'), 'utf8')) as { version: string }
  return { child, url, version: pkg.version }
}

/** jose's jwtVerify rate for `token` (verifications per second), measured for `durationMs`. */
export async function measureJoseVerify(opts: {
  root: string
  pinning: Pinning
  jwksUrl: string
  issuer: string
  token: string
  durationMs: number
}): Promise<number> {
  const child = spawnNode('jose-verify', ['--import', 'tsx', join(opts.root, 'bench', 'jose-verify.ts')], {
    cwd: opts.root,
    env: childEnv({ JWKS_URL: opts.jwksUrl, ISSUER: opts.issuer, TOKEN: opts.token, DURATION_MS: String(opts.durationMs) }),
    pinning: opts.pinning,
  })
  const code = await child.exited
  const last = child.output().split('\n').pop() ?? ''
  if (code !== 0) throw new Error(`jose-verify exited with ${code}:\n${child.output()}`)
  return (JSON.parse(last) as { rate: number }).rate
}
