// Two servers of this very project: `upstream` (https://upstream.test) plays the OpenID Connect
// provider, `authz` (https://authz.test) federates it as scheme `corp`. authz reaches the upstream
// through app.inject (an injected fetch), and the browser is driven by hand, every hop asserted,
// each server with its own cookie jar. `partner` is a provider that does not exist on the network
// (its discovery fails at once), `off` a disabled one.
import { createHash, randomBytes } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import type { CustomFetch } from 'openid-client'
import { expect } from 'vitest'
import { applySeed } from '../../../src/seed/apply.js'
import { createTestApp, TEST_ISSUER, type TestApp } from '../../helpers/app.js'
import { postForm, withCookies } from '../../helpers/http.js'
import { signInWithForm } from '../../helpers/sign-in.js'

export const UPSTREAM = 'https://upstream.test'
export const WEB_CB = 'https://web.example/cb'
export const SIGNIN_CB = `${TEST_ISSUER}/federation/corp/signin`
export const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code'
export const CIBA_GRANT = 'urn:openid:params:grant-type:ciba'

export function upstreamSeed() {
  return {
    identityResources: ['openid', 'profile', 'email'],
    clients: [
      {
        clientId: 'authz-rp',
        clientName: 'Downstream authz',
        secrets: [{ value: 'rp-secret' }],
        allowedGrantTypes: ['authorization_code'],
        allowedScopes: ['openid', 'profile', 'email'],
        redirectUris: [SIGNIN_CB],
        postLogoutRedirectUris: [`${TEST_ISSUER}/federation/corp/signout-callback`],
        backChannelLogoutUri: `${TEST_ISSUER}/federation/corp/backchannel-logout`,
      },
    ],
    users: [
      {
        subjectId: 'up-alice',
        username: 'alice',
        password: 'alice-up-pw',
        claims: { name: 'Alice Upstream', given_name: 'Alice', email: 'alice@example.com', email_verified: true, locale: 'en' },
      },
      {
        subjectId: 'up-carol',
        username: 'carol',
        password: 'carol-up-pw',
        claims: { name: 'Carol', email: 'carol@local.example', email_verified: true },
      },
    ],
  }
}

export function authzSeed(provider: Record<string, unknown> = {}) {
  return {
    identityResources: ['openid', 'profile', 'email'],
    clients: [
      {
        clientId: 'web',
        clientName: 'Web app',
        secrets: [{ value: 'web-secret' }],
        allowedGrantTypes: ['authorization_code'],
        allowedScopes: ['openid', 'profile', 'email'],
        redirectUris: [WEB_CB],
        postLogoutRedirectUris: ['https://web.example/bye'],
        backChannelLogoutUri: 'https://web.example/backchannel-logout',
      },
      {
        clientId: 'corp-only',
        clientName: 'Corporate app',
        secrets: [{ value: 'corp-secret' }],
        allowedGrantTypes: ['authorization_code'],
        allowedScopes: ['openid', 'profile'],
        redirectUris: ['https://corp-app.example/cb'],
        identityProviderRestrictions: ['corp'],
        enableLocalLogin: false,
      },
      {
        clientId: 'tv',
        clientName: 'Living room TV',
        secrets: [{ value: 'tv-secret' }],
        allowedGrantTypes: [DEVICE_GRANT],
        allowedScopes: ['openid', 'profile'],
      },
      {
        clientId: 'bank',
        clientName: 'Bank',
        secrets: [{ value: 'bank-secret' }],
        allowedGrantTypes: [CIBA_GRANT],
        allowedScopes: ['openid', 'profile'],
      },
    ],
    users: [
      { subjectId: 'u-carol', username: 'carol', password: 'carol-pw', claims: { name: 'Carol Local', email: 'carol@local.example' } },
    ],
    identityProviders: [
      {
        scheme: 'corp',
        displayName: 'Corporate sign-in',
        type: 'oidc',
        authority: UPSTREAM,
        clientId: 'authz-rp',
        clientSecret: 'rp-secret',
        emailDomains: ['example.com'],
        ...provider,
      },
      { scheme: 'partner', displayName: 'Partner ID', type: 'oidc', authority: 'https://partner.test', clientId: 'authz' },
      { scheme: 'off', displayName: 'Old ID', type: 'oidc', authority: 'https://old.test', clientId: 'authz', enabled: false },
    ],
  }
}

/** fetch for authz: upstream.test answers through app.inject; any other host is unreachable. */
export function injectFetch(
  upstream: () => FastifyInstance,
  hang = new Set<string>(),
  tamper: { idToken?: ((token: string) => string) | undefined } = {},
): CustomFetch {
  return async (url, options) => {
    const u = new URL(url)
    if (hang.has(u.host)) {
      // An upstream that never answers: only the timeout ends the wait.
      return new Promise((_resolve, reject) => options.signal?.addEventListener('abort', () => reject(options.signal!.reason as Error)))
    }
    if (u.origin !== UPSTREAM) throw new TypeError('fetch failed')
    const res = await upstream().inject({
      method: options.method as 'GET' | 'POST',
      url: `${u.pathname}${u.search}`,
      headers: options.headers,
      ...(options.body !== undefined && options.body !== null ? { payload: String(options.body as string) } : {}),
    })
    const headers = new Headers()
    for (const [k, v] of Object.entries(res.headers)) for (const x of [v].flat()) if (x !== undefined) headers.append(k, String(x))
    if (tamper.idToken && u.pathname === '/connect/token' && res.statusCode === 200) {
      // A man in the middle, or a broken upstream: the ID token is not what the upstream signed.
      const body = res.json<Record<string, string>>()
      headers.delete('content-length')
      return new Response(JSON.stringify({ ...body, id_token: tamper.idToken(body.id_token!) }), { status: 200, headers })
    }
    return new Response(res.statusCode === 204 ? null : new Uint8Array(res.rawPayload), { status: res.statusCode, headers })
  }
}

export interface Federation {
  authz: TestApp
  upstream: TestApp
  /** Hosts whose requests never answer (the timeout test). */
  hang: Set<string>
  /** Changes the ID token of the upstream's token responses while set. */
  tamper: { idToken?: ((token: string) => string) | undefined }
  close(): Promise<void>
}

export async function createFederation(provider: Record<string, unknown> = {}, env: Record<string, string> = {}): Promise<Federation> {
  // The upstream's back-channel logouts reach authz through app.inject too (run by hand: runOnce).
  const to: { app?: FastifyInstance } = {}
  const deliver = (async (url: string | URL | Request, init?: RequestInit) => {
    const u = new URL(url instanceof Request ? url.url : url.toString())
    const res = await to.app!.inject({
      method: 'POST',
      url: `${u.pathname}${u.search}`,
      headers: init?.headers as Record<string, string>,
      payload: String(init?.body as string),
    })
    return new Response(res.body || null, { status: res.statusCode })
  }) as typeof fetch
  const upstream = await createTestApp({ env: { ISSUER: UPSTREAM }, backchannelLogout: { fetch: deliver, pollMs: 3_600_000 } })
  await applySeed(upstream.db, upstreamSeed())
  const hang = new Set<string>()
  const tamper: Federation['tamper'] = {}
  const authz = await createTestApp({ env, upstream: { fetch: injectFetch(() => upstream.app, hang, tamper), timeoutSeconds: 0.5 } })
  to.app = authz.app
  await applySeed(authz.db, authzSeed(provider), 'invalid seed', { keyEncryptionSecret: env.KEY_ENCRYPTION_SECRET })
  return {
    authz,
    upstream,
    hang,
    tamper,
    async close() {
      await authz.close()
      await upstream.close()
    },
  }
}

export function pkcePair() {
  const verifier = randomBytes(32).toString('base64url')
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') }
}

export function authorizeUrl(params: Record<string, string> = {}, challenge = pkcePair().challenge): string {
  const q = new URLSearchParams({
    client_id: 'web',
    redirect_uri: WEB_CB,
    response_type: 'code',
    scope: 'openid profile email',
    state: 'app-state',
    nonce: 'app-nonce',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    ...params,
  })
  return `/connect/authorize?${q}`
}

export type Res = Awaited<ReturnType<FastifyInstance['inject']>>

/** A browser: one cookie jar per server, requests by absolute or local URL. */
export function browser(f: Federation) {
  const jars = { authz: '', upstream: '' }
  async function get(url: string): Promise<Res> {
    const u = new URL(url, TEST_ISSUER)
    const side = u.origin === UPSTREAM ? 'upstream' : 'authz'
    const app = f[side].app
    const res = await app.inject({ method: 'GET', url: `${u.pathname}${u.search}`, headers: jars[side] ? { cookie: jars[side] } : {} })
    jars[side] = withCookies(jars[side], res.headers['set-cookie'])
    return res
  }
  return {
    federation: f,
    jars,
    get,
    /** GET `url` and follow 303s while they stay on our two servers; the last answer. */
    async follow(url: string, stopAt?: (u: URL) => boolean): Promise<Res> {
      let at = new URL(url, TEST_ISSUER)
      let res = await get(at.href)
      for (let i = 0; i < 10 && res.statusCode === 303; i++) {
        const next = new URL(String(res.headers.location), at)
        if (next.origin !== TEST_ISSUER && next.origin !== UPSTREAM) return res
        if (stopAt?.(next)) return res
        res = await get(next.href)
        at = next
      }
      return res
    },
    /** Signs in on the upstream's sign-in page at `location`; its answer (303 on success). */
    async signInUpstream(location: string, username = 'alice', password = 'alice-up-pw'): Promise<Res> {
      const u = new URL(location, UPSTREAM)
      const { res, cookie } = await signInWithForm(
        f.upstream.app,
        { location: `${u.pathname}${u.search}` },
        username,
        password,
        jars.upstream,
      )
      jars.upstream = cookie
      return res
    },
  }
}

/** The href of the link whose text is `text` on a page. */
export function linkTo(body: string, text: string): string {
  const m = new RegExp(`<a class="button [a-z]+" href="([^"]+)"[^>]*>${text}</a>`).exec(body)
  expect(m, `a link "${text}"`).not.toBeNull()
  return m![1]!.replace(/&amp;/g, '&')
}

export const located = (res: Res) => new URL(String(res.headers.location), TEST_ISSUER)

/** The whole way through: authorize at authz, the corp button, upstream sign-in, back, the code. */
export async function signInThroughCorp(
  b: ReturnType<typeof browser>,
  params: Record<string, string> = {},
  username = 'alice',
  password = 'alice-up-pw',
) {
  const { verifier, challenge } = pkcePair()
  const page = await b.follow(authorizeUrl(params, challenge))
  expect(page.statusCode).toBe(200)
  const upstreamAuthorize = await b.get(linkTo(page.body, 'Sign in with Corporate sign-in'))
  expect(upstreamAuthorize.statusCode).toBe(303)
  expect(located(upstreamAuthorize).origin).toBe(UPSTREAM)
  const back = await finishUpstream(b, upstreamAuthorize, username, password)
  return { back, verifier }
}

/**
 * From the 303 to the upstream's authorization endpoint: sign in there, and back at authz to the
 * app's redirect. `upstreamAmr`: the upstream's session says the person signed in so (as with a
 * second factor), and its ID token's amr says the same.
 */
export async function finishUpstream(
  b: ReturnType<typeof browser>,
  toUpstream: Res,
  username = 'alice',
  password = 'alice-up-pw',
  upstreamAmr?: string[],
) {
  const signInPage = await b.follow(located(toUpstream).href, (u) => u.pathname === '/account/sign-in')
  const signedIn = await b.signInUpstream(String(signInPage.headers.location), username, password)
  expect(signedIn.statusCode).toBe(303)
  if (upstreamAmr) {
    await b.federation.upstream.db.query(
      'UPDATE user_sessions SET amr = $1::text[] WHERE subject_id = (SELECT subject_id FROM users WHERE username = $2)',
      [upstreamAmr, username],
    )
  }
  return b.follow(new URL(String(signedIn.headers.location), UPSTREAM).href)
}

export function redeem(f: Federation, code: string, verifier: string) {
  return postForm(f.authz.app, '/connect/token', {
    grant_type: 'authorization_code',
    code,
    code_verifier: verifier,
    redirect_uri: WEB_CB,
    client_id: 'web',
    client_secret: 'web-secret',
  })
}
