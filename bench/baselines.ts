// What our server is compared with: oidc-provider (bench/peer-oidc-provider.ts) in its own process;
// for JWT introspection, which oidc-provider refuses, jose and bare node:crypto verifying the token
// in a loop (bench/jose-verify.ts); and for JWT issuance, the limit: bare Fastify signing once per
// request (bench/sign-limit-server.ts). All run pinned to the server CPU, like our server.
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

/** Bare Fastify answering token requests with one node:crypto ES256 signature each. */
export async function startSignLimit(opts: { root: string; port: number; pinning: Pinning; cleanup: Cleanup }): Promise<Peer> {
  const url = `http://127.0.0.1:${opts.port}`
  const child = spawnNode('sign-limit', ['--import', 'tsx', join(opts.root, 'bench', 'sign-limit-server.ts')], {
    cwd: opts.root,
    env: childEnv({ LIMIT_PORT: String(opts.port) }),
    pinning: opts.pinning,
  })
  opts.cleanup.defer('stop sign-limit', () => child.stop())
  await waitForHttp(child, `${url}/.well-known/openid-configuration`)
  return { child, url, version: '' }
}

/** Bare Fastify verifying one JWT per introspection request with our JWKS (bench/verify-limit-server.ts). */
export async function startVerifyLimit(opts: {
  root: string
  port: number
  pinning: Pinning
  cleanup: Cleanup
  jwksUrl: string
  issuer: string
}): Promise<Peer> {
  const url = `http://127.0.0.1:${opts.port}`
  const child = spawnNode('verify-limit', ['--import', 'tsx', join(opts.root, 'bench', 'verify-limit-server.ts')], {
    cwd: opts.root,
    env: childEnv({ LIMIT_PORT: String(opts.port), JWKS_URL: opts.jwksUrl, ISSUER: opts.issuer }),
    pinning: opts.pinning,
  })
  opts.cleanup.defer('stop verify-limit', () => child.stop())
  await waitForHttp(child, `${url}/.well-known/openid-configuration`)
  return { child, url, version: '' }
}

export interface VerifyRates {
  /** jose jwtVerify, verifications per second. */
  jose: number
  /** node:crypto verify with a KeyObject prepared once, plus the claim checks: the limit. */
  crypto: number
}

/** How fast `token` is verified in one process by jose and by bare node:crypto, each for `durationMs` / 2. */
export async function measureJoseVerify(opts: {
  root: string
  pinning: Pinning
  jwksUrl: string
  issuer: string
  token: string
  durationMs: number
}): Promise<VerifyRates> {
  const child = spawnNode('jose-verify', ['--import', 'tsx', join(opts.root, 'bench', 'jose-verify.ts')], {
    cwd: opts.root,
    env: childEnv({ JWKS_URL: opts.jwksUrl, ISSUER: opts.issuer, TOKEN: opts.token, DURATION_MS: String(opts.durationMs) }),
    pinning: opts.pinning,
  })
  const code = await child.exited
  const last = child.output().split('\n').pop() ?? ''
  if (code !== 0) throw new Error(`jose-verify exited with ${code}:\n${child.output()}`)
  const rates = JSON.parse(last) as { rate: number; cryptoRate: number }
  return { jose: rates.rate, crypto: rates.cryptoRate }
}
