// The authorization code flow (RFC 6749 §4.1, OpenID Connect Core §3.1, PKCE RFC 7636, RFC 9207):
// the authorization endpoint on the shared sign-in, session and consent, and its token grant.
// Requests may come as request objects (RFC 9101) or by a pushed request's request_uri (RFC 9126).
import type { Core, Flow } from '../../core.js'
import { AUTHORIZE_PATH } from '../../endpoints.js'
import { createAuthorizationInputs } from '../../interaction/pushed-authorization.js'
import { createRequestObjectVerifier, REQUEST_OBJECT_SIGNING_ALGS } from '../../interaction/request-object.js'
import { createAuthorizationCodeGrant } from './grant.js'
import { authorizeRoutes } from './routes.js'
import { createAuthorizeService } from './service.js'
import { createLevelCheck } from '../../interaction/authentication-level.js'

export const authorizationCodeFlow: Flow = {
  name: 'authorization-code',
  async register(core: Core) {
    const { config, clock, stores, scopes, keys } = core
    const requestObjects = createRequestObjectVerifier({
      clock,
      issuer: config.issuer,
      usedJtis: stores.usedJtis,
      keys: core.clientKeys,
    })
    const authorize = createAuthorizeService({
      issuer: config.issuer,
      codeLifetime: config.authorizationCodeLifetime,
      clock,
      // A URL client id's document that fails is a page naming why (src/client-auth/metadata-document.ts).
      clients: core.metadataClients ? { findById: core.metadataClients.find } : stores.clients,
      resources: stores.resources,
      scopes,
      consent: core.consent,
      sessions: core.interaction.sessions,
      grants: stores.grants,
      keys,
      secret: await core.serverSecret('authorize'),
      providers: core.interaction.providers,
      inputs: createAuthorizationInputs({ clock, clients: stores.clients, pushed: stores.pushedRequests, requestObjects }),
      pushed: stores.pushedRequests,
      parRequired: config.parRequired,
      levels: createLevelCheck({ users: stores.users, factors: stores.userFactors, passkeys: core.passkeys }),
    })
    core.interaction.returnTargets.allow({ path: AUTHORIZE_PATH, describe: authorize.describe, fail: authorize.fail })
    await core.app.register(authorizeRoutes, { authorize, pages: core.interaction.pages })
    core.grants.add(
      createAuthorizationCodeGrant({
        clock,
        grants: stores.grants,
        oneTimeUse: core.oneTimeUse,
        users: stores.users,
        scopes,
        tokenIssuer: core.tokenIssuer,
      }),
    )
    core.discovery.contribute(() => ({
      authorization_endpoint: `${config.issuer}${AUTHORIZE_PATH}`,
      response_types_supported: ['code'],
      response_modes_supported: ['query', 'form_post'],
      code_challenge_methods_supported: ['S256'],
      authorization_response_iss_parameter_supported: true,
      prompt_values_supported: ['none', 'login', 'consent'],
      claims_parameter_supported: false,
      // RFC 9101 §10.1: request objects by value; request_uri only as the pushed requests' own
      // (RFC 9126 §2.2), never a URI the server would fetch.
      request_parameter_supported: true,
      request_uri_parameter_supported: false,
      // draft-ietf-oauth-client-id-metadata-document §5: a URL client id names its metadata document.
      ...(config.clientIdMetadataDocuments ? { client_id_metadata_document_supported: true } : {}),
      request_object_signing_alg_values_supported: [...REQUEST_OBJECT_SIGNING_ALGS],
    }))
  },
}
