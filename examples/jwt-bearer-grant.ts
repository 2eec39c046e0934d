// An extension grant (RFC 6749 §4.5): the JWT bearer assertion grant of RFC 7523 §2.1. The client
// signs a short-lived JWT with a key from its registered `jwks`, naming one of our users as `sub`;
// we check it as RFC 7523 §3 says and issue an access token for that user.
import { createLocalJWKSet, jwtVerify } from 'jose'
import { z } from 'zod'
import { OAuthError } from '../src/errors.js'
import type { GrantDeps, GrantHandler } from '../src/grants/registry.js'

const Params = z.object({ assertion: z.string().min(1), scope: z.string().optional() })

export function createJwtBearerGrant(deps: GrantDeps): GrantHandler<z.infer<typeof Params>> {
  const { config, clock } = deps
  return {
    grantType: 'urn:ietf:params:oauth:grant-type:jwt-bearer',
    params: Params,
    async handle(client, { assertion, scope }) {
      const invalid = new OAuthError('invalid_grant', 'assertion is not valid') // §3.1
      if (!client.jwks) throw invalid
      const verified = await jwtVerify(assertion, createLocalJWKSet(client.jwks), {
        algorithms: ['ES256', 'PS256', 'RS256'],
        issuer: client.clientId, // §3 item 1: the client asserts
        audience: [config.issuer, `${config.issuer}/connect/token`], // §3 item 3
        requiredClaims: ['sub', 'exp', 'iat'], // §3 items 2 and 4
        maxTokenAge: '5 minutes',
        currentDate: new Date(clock.now()),
      }).catch(() => undefined)
      const user = verified && (await deps.users.findBySubjectId(verified.payload.sub!))
      if (!user || !user.enabled) throw invalid
      const granted = await deps.scopes.resolve(client, scope, { allowIdentity: false })
      return deps.tokenIssuer.issue({ client, subjectId: user.subjectId, granted })
    },
  }
}
