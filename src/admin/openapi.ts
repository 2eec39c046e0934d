// The OpenAPI 3.1 document of the admin API (GET /admin/openapi.json), made from the same zod
// schemas that check the requests (the seed file's, src/seed/schema.ts, and the admin API's own),
// so that it cannot say another shape than the code takes. test/admin/openapi.test.ts checks that
// every route the admin listener registers is an operation here, and every operation a route.
import { z } from 'zod'
import {
  ADMIN_API_RESOURCES_PATH,
  ADMIN_API_SCOPES_PATH,
  ADMIN_CIBA_REQUESTS_PATH,
  ADMIN_CLIENTS_PATH,
  ADMIN_IDENTITY_PROVIDERS_PATH,
  ADMIN_IDENTITY_RESOURCES_PATH,
  ADMIN_KEYS_PATH,
  ADMIN_LOCKOUTS_PATH,
  ADMIN_MIGRATIONS_PATH,
  ADMIN_OPENAPI_PATH,
  ADMIN_REGISTRATION_TOKENS_PATH,
  ADMIN_SEED_PATH,
  ADMIN_USERS_PATH,
} from '../endpoints.js'
import {
  SeedApiResource,
  SeedApiScope,
  SeedClient,
  SeedFile,
  SeedIdentityProvider,
  SeedIdentityResource,
  SeedUser,
} from '../seed/schema.js'
import { ADMIN_READ_SCOPE, ADMIN_SCOPE } from '../domain/admin-scopes.js'
import { CibaListQuery, CibaRequestView } from './ciba.js'
import { NewSecret } from './clients.js'
import { ConsentList, KeyList, Revoked, RotateKeys } from './keys-consents.js'
import { SeedAppliedView } from './seed.js'
import { CreatedRegistrationToken, NewRegistrationToken, RegistrationTokenView } from './registration-tokens.js'
import { FactorsReset, FactorsView } from './user-factors.js'
import { ListQuery, PageQuery } from './paging.js'

type Json = Record<string, unknown>

/** JSON Schema 2020-12 (OpenAPI 3.1's dialect) of `schema`, without the members answers never carry. */
function schemaOf(schema: z.ZodType, io: 'input' | 'output', omit: string[] = []): Json {
  const { $schema: _dialect, ...json } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Json
  const props = json.properties as Json | undefined
  if (props) for (const k of omit) delete props[k]
  if (Array.isArray(json.required)) json.required = (json.required as string[]).filter((k) => !omit.includes(k))
  return json
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` })
const json = (schema: Json) => ({ 'application/json': { schema } })
const problem = (description: string) => ({ description, content: { 'application/problem+json': { schema: ref('Problem') } } })
const page = (item: string) => ({
  type: 'object',
  properties: { items: { type: 'array', items: ref(item) }, nextCursor: { type: 'string', description: 'absent on the last page' } },
  required: ['items'],
})
const etag = { ETag: { description: 'the version of the resource, for If-Match', schema: { type: 'string' } } }
const location = { Location: { description: 'the path of the resource created', schema: { type: 'string' } } }
const conditional = [
  { name: 'If-Match', in: 'header', required: false, schema: { type: 'string' }, description: 'write only this version (412 otherwise)' },
  {
    name: 'If-None-Match',
    in: 'header',
    required: false,
    schema: { type: 'string' },
    description: '"*": create only (412 when it exists)',
  },
]

interface Operation {
  method: 'get' | 'put' | 'post' | 'delete'
  path: string
  summary: string
  scope: 'read' | 'write'
  /** The list's query (default: ListQuery). */
  query?: z.ZodObject | true
  body?: Json
  ok: { status: number; description: string; schema?: Json; etag?: boolean }
  /** A PUT that may create: 201 with Location, and the same body and ETag as `ok`. */
  creates?: boolean
  conditional?: boolean
  /** Other refusals than the common ones, by status. */
  refusals?: Record<number, string>
}

/** A collection of seed-shaped resources: list, and GET / PUT / DELETE one. */
function collection(path: string, param: string, schema: string, what: string): Operation[] {
  const one = `${path}/{${param}}`
  return [
    {
      method: 'get',
      path,
      summary: `List ${what}s`,
      scope: 'read',
      query: true,
      ok: { status: 200, description: 'a page', schema: page(schema) },
    },
    {
      method: 'get',
      path: one,
      summary: `One ${what}`,
      scope: 'read',
      ok: { status: 200, description: `the ${what}`, schema: ref(schema), etag: true },
    },
    {
      method: 'put',
      path: one,
      summary: `Create or replace a ${what} (a seed file entry)`,
      scope: 'write',
      body: ref(`${schema}Input`),
      conditional: true,
      ok: { status: 200, description: 'replaced', schema: ref(schema), etag: true },
      creates: true,
    },
    {
      method: 'delete',
      path: one,
      summary: `Remove a ${what}`,
      scope: 'write',
      conditional: true,
      ok: { status: 204, description: 'removed' },
    },
  ]
}

const USER = `${ADMIN_USERS_PATH}/{username}`
const WRITE_ONLY_USER = ['password', 'cibaUserCode']
/** What a user action did, beside the user after it (src/admin/users.ts act). */
const ACTION_RESULTS = {
  sessionsEnded: z.number().int().min(0).describe('how many sessions of the user were ended'),
  failuresCleared: z.number().int().min(0).describe('how many failed-check counters were cleared'),
}
const userAction = (action: string, summary: string, result?: keyof typeof ACTION_RESULTS): Operation => ({
  method: 'post',
  path: `${USER}/${action}`,
  summary,
  scope: 'write',
  conditional: true,
  ok: {
    status: 200,
    description: result ? 'the user after it, with what was done' : 'the user after it',
    schema: result ? schemaOf(SeedUser.extend({ [result]: ACTION_RESULTS[result] }), 'output', WRITE_ONLY_USER) : ref('User'),
    etag: true,
  },
})

export const OPERATIONS: readonly Operation[] = [
  ...collection(ADMIN_CLIENTS_PATH, 'clientId', 'Client', 'client'),
  {
    method: 'get',
    path: `${ADMIN_CLIENTS_PATH}/{clientId}/secrets`,
    summary: "A client's secrets: expiry and description, never a value or hash",
    scope: 'read',
    ok: {
      status: 200,
      description: 'the secrets, oldest first',
      schema: { type: 'object', properties: { items: { type: 'array', items: schemaOf(NewSecret, 'output') } }, required: ['items'] },
    },
  },
  {
    method: 'post',
    path: `${ADMIN_CLIENTS_PATH}/{clientId}/secrets`,
    summary: 'Generate a client secret, shown once',
    scope: 'write',
    body: schemaOf(NewSecret, 'input'),
    conditional: true,
    ok: {
      status: 201,
      description: 'the secret: the only time it is shown',
      schema: schemaOf(NewSecret.extend({ value: z.string() }), 'output'),
      etag: true,
    },
  },
  ...collection(ADMIN_USERS_PATH, 'username', 'User', 'user'),
  userAction('disable', 'Disable a user, ending their sessions', 'sessionsEnded'),
  userAction('enable', 'Enable a user again'),
  userAction('unlock', "End a user's lockout", 'failuresCleared'),
  userAction('sign-out', 'End every session of a user', 'sessionsEnded'),
  {
    method: 'get',
    path: ADMIN_LOCKOUTS_PATH,
    summary: 'The password lockouts in force, by subject',
    scope: 'read',
    query: PageQuery,
    ok: {
      status: 200,
      description: 'each locked-out subject and when its lock ends',
      schema: {
        type: 'object',
        properties: {
          items: {
            type: 'array',
            items: {
              type: 'object',
              properties: { subjectId: { type: 'string' }, lockedUntil: { type: 'string', format: 'date-time' } },
              required: ['subjectId', 'lockedUntil'],
            },
          },
          nextCursor: { type: 'string', description: 'absent on the last page' },
        },
        required: ['items'],
      },
    },
  },
  {
    method: 'get',
    path: `${USER}/consents`,
    summary: "A user's remembered consents, by client",
    scope: 'read',
    query: PageQuery,
    ok: { status: 200, description: 'the consents', schema: schemaOf(ConsentList, 'output') },
  },
  {
    method: 'delete',
    path: `${USER}/consents`,
    summary: "Forget all of a user's consents",
    scope: 'write',
    ok: { status: 200, description: 'how many consents were forgotten', schema: schemaOf(Revoked, 'output') },
  },
  {
    method: 'delete',
    path: `${USER}/consents/{clientId}`,
    summary: "Forget a user's consent for one client",
    scope: 'write',
    ok: { status: 204, description: 'forgotten' },
  },
  {
    method: 'get',
    path: `${USER}/links`,
    summary: 'The upstream identities a user is linked to (federation)',
    scope: 'read',
    ok: {
      status: 200,
      description: 'each link: the identity provider, the subject there, when it was made and last used',
      schema: {
        type: 'object',
        properties: {
          items: {
            type: 'array',
            items: {
              type: 'object',
              properties: {
                scheme: { type: 'string' },
                upstreamSub: { type: 'string' },
                linkedAt: { type: 'string', format: 'date-time' },
                lastSignInAt: { type: 'string', format: 'date-time' },
              },
              required: ['scheme', 'upstreamSub', 'linkedAt', 'lastSignInAt'],
            },
          },
        },
        required: ['items'],
      },
    },
  },
  ...collection(ADMIN_API_SCOPES_PATH, 'name', 'ApiScope', 'API scope'),
  ...collection(ADMIN_API_RESOURCES_PATH, 'name', 'ApiResource', 'API resource'),
  ...collection(ADMIN_IDENTITY_RESOURCES_PATH, 'name', 'IdentityResource', 'identity resource'),
  ...collection(ADMIN_IDENTITY_PROVIDERS_PATH, 'scheme', 'IdentityProvider', 'identity provider'),
  {
    method: 'get',
    path: `${ADMIN_IDENTITY_PROVIDERS_PATH}/{scheme}/client-secret`,
    summary: 'Whether an identity provider has a client secret (never the secret)',
    scope: 'read',
    ok: {
      status: 200,
      description: 'set: a client secret is stored',
      schema: { type: 'object', properties: { set: { type: 'boolean' } }, required: ['set'] },
    },
  },
  {
    method: 'get',
    path: ADMIN_MIGRATIONS_PATH,
    summary: 'The database migrations applied, in order',
    scope: 'read',
    ok: {
      status: 200,
      description: 'each applied migration: version, name and the checksum of its file',
      schema: {
        type: 'object',
        properties: {
          items: {
            type: 'array',
            items: {
              type: 'object',
              properties: { version: { type: 'string' }, name: { type: 'string' }, checksum: { type: 'string' } },
              required: ['version', 'name', 'checksum'],
            },
          },
        },
        required: ['items'],
      },
    },
  },
  {
    method: 'put',
    path: ADMIN_SEED_PATH,
    summary: 'Apply a whole seed document in one transaction',
    scope: 'write',
    body: ref('SeedDocument'),
    ok: { status: 200, description: 'the entries of each kind, and the warnings', schema: schemaOf(SeedAppliedView, 'output') },
  },
  {
    method: 'get',
    path: ADMIN_KEYS_PATH,
    summary: 'The signing keys',
    scope: 'read',
    ok: { status: 200, description: 'the keys, never key material', schema: ref('KeyList') },
  },
  {
    method: 'post',
    path: `${ADMIN_KEYS_PATH}/rotate`,
    summary: 'Add a signing key per algorithm (or one)',
    scope: 'write',
    body: schemaOf(RotateKeys, 'input'),
    ok: { status: 201, description: 'the new keys', schema: ref('KeyList') },
  },
  {
    method: 'get',
    path: ADMIN_CIBA_REQUESTS_PATH,
    summary: 'List CIBA requests, oldest first',
    scope: 'read',
    query: CibaListQuery,
    ok: { status: 200, description: 'a page', schema: page('CibaRequest') },
  },
  {
    method: 'get',
    path: `${ADMIN_CIBA_REQUESTS_PATH}/{requestId}`,
    summary: 'One CIBA request, by the id of its approval URL',
    scope: 'read',
    ok: { status: 200, description: 'the request (never its auth_req_id)', schema: ref('CibaRequest') },
  },
  ...(['approve', 'deny'] as const).map((decision): Operation => ({
    method: 'post',
    path: `${ADMIN_CIBA_REQUESTS_PATH}/{requestId}/${decision}`,
    summary:
      decision === 'approve'
        ? 'Approve a pending CIBA request with every scope it asked for: the next poll gets tokens'
        : 'Deny a pending CIBA request: the next poll gets access_denied',
    scope: 'write',
    ok: { status: 200, description: 'the request as decided', schema: ref('CibaRequest') },
    refusals: { 409: 'the request has expired or was decided already' },
  })),
  {
    method: 'get',
    path: `${USER}/factors`,
    summary: "A user's second factors: when set up and last used, recovery codes left (never a secret)",
    scope: 'read',
    ok: { status: 200, description: 'the factors', schema: schemaOf(FactorsView, 'output') },
  },
  {
    method: 'post',
    path: `${USER}/reset-factors`,
    summary: "Remove a user's second factors and end their sessions (a lost device)",
    scope: 'write',
    ok: { status: 200, description: 'whether there were factors, and the sessions ended', schema: schemaOf(FactorsReset, 'output') },
  },
  {
    method: 'get',
    path: ADMIN_REGISTRATION_TOKENS_PATH,
    summary: 'The initial access tokens of client registration, oldest first (never a token)',
    scope: 'read',
    query: PageQuery,
    ok: { status: 200, description: 'a page', schema: page('RegistrationToken') },
  },
  {
    method: 'post',
    path: ADMIN_REGISTRATION_TOKENS_PATH,
    summary: 'Make an initial access token for client registration (REGISTRATION=token), shown once',
    scope: 'write',
    body: schemaOf(NewRegistrationToken, 'input'),
    ok: { status: 201, description: 'the token: the only time it is shown', schema: schemaOf(CreatedRegistrationToken, 'output') },
  },
  {
    method: 'post',
    path: `${ADMIN_REGISTRATION_TOKENS_PATH}/{id}/revoke`,
    summary: 'Revoke an initial access token: it registers no more clients (those it registered stay)',
    scope: 'write',
    ok: { status: 200, description: 'the token as revoked', schema: ref('RegistrationToken') },
    refusals: { 409: 'the token was revoked already' },
  },
  { method: 'get', path: ADMIN_OPENAPI_PATH, summary: 'This document', scope: 'read', ok: { status: 200, description: 'OpenAPI 3.1' } },
]

function operation(op: Operation): Json {
  const params = [...op.path.matchAll(/\{([^}]+)\}/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: { type: 'string' } }))
  const query = op.query
    ? Object.entries((op.query === true ? ListQuery : op.query).shape).map(([name, s]) => ({
        name,
        in: 'query',
        required: false,
        schema: schemaOf(s as z.ZodType, 'input'),
      }))
    : []
  return {
    summary: op.summary,
    security: [{ bearer: [op.scope === 'read' ? ADMIN_READ_SCOPE : ADMIN_SCOPE] }],
    parameters: [...params, ...query, ...(op.conditional ? conditional : [])],
    ...(op.body ? { requestBody: { required: op.method === 'put', content: json(op.body) } } : {}),
    responses: {
      [op.ok.status]: {
        description: op.ok.description,
        ...(op.ok.schema ? { content: json(op.ok.schema) } : {}),
        ...(op.ok.etag ? { headers: etag } : {}),
      },
      ...(op.creates
        ? {
            201: {
              description: 'created',
              ...(op.ok.schema ? { content: json(op.ok.schema) } : {}),
              headers: { ...location, ...(op.ok.etag ? etag : {}) },
            },
          }
        : {}),
      400: problem('the request is not valid: each problem with its JSON path'),
      401: problem('no access token, or one that is not valid (WWW-Authenticate: Bearer, or DPoP for a DPoP-bound token)'),
      403: problem('the token lacks the scope (WWW-Authenticate: Bearer error="insufficient_scope")'),
      ...(op.path.includes('{') ? { 404: problem('no such resource') } : {}),
      ...(op.conditional ? { 412: problem('If-Match or If-None-Match does not hold') } : {}),
      ...Object.fromEntries(Object.entries(op.refusals ?? {}).map(([status, description]) => [status, problem(description)])),
    },
  }
}

const SECRETS = ['secrets']

/** The document, built once per listener. */
export function openApiDocument(): Json {
  const paths: Record<string, Json> = {}
  for (const op of OPERATIONS) (paths[op.path] ??= {})[op.method] = operation(op)
  return {
    openapi: '3.1.0',
    info: {
      title: 'authz admin API',
      version: '1',
      description: 'Clients, users and the catalogue in the seed file shapes; secrets and passwords are write-only.',
    },
    components: {
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description: `an access token of this server with ${ADMIN_SCOPE} or ${ADMIN_READ_SCOPE}`,
        },
      },
      schemas: {
        Client: schemaOf(SeedClient, 'output', SECRETS),
        ClientInput: schemaOf(SeedClient, 'input'),
        User: schemaOf(SeedUser, 'output', WRITE_ONLY_USER),
        UserInput: schemaOf(SeedUser, 'input'),
        ApiScope: schemaOf(SeedApiScope, 'output'),
        ApiScopeInput: schemaOf(SeedApiScope, 'input'),
        ApiResource: schemaOf(SeedApiResource, 'output', SECRETS),
        ApiResourceInput: schemaOf(SeedApiResource, 'input'),
        IdentityResource: schemaOf(SeedIdentityResource, 'output'),
        IdentityResourceInput: schemaOf(SeedIdentityResource, 'input'),
        IdentityProvider: schemaOf(SeedIdentityProvider, 'output', ['clientSecret']),
        IdentityProviderInput: schemaOf(SeedIdentityProvider, 'input'),
        SeedDocument: schemaOf(SeedFile, 'input'),
        CibaRequest: schemaOf(CibaRequestView, 'output'),
        KeyList: schemaOf(KeyList, 'output'),
        RegistrationToken: schemaOf(RegistrationTokenView, 'output'),
        Problem: {
          type: 'object',
          description: 'RFC 9457 problem details',
          properties: {
            type: { type: 'string' },
            title: { type: 'string' },
            status: { type: 'integer' },
            detail: { type: 'string' },
            errors: {
              type: 'array',
              items: { type: 'object', properties: { path: { type: 'string' }, detail: { type: 'string' } }, required: ['path', 'detail'] },
            },
          },
          required: ['type', 'title', 'status', 'detail'],
        },
      },
    },
    paths,
  }
}
