// GET /admin/openapi.json: an OpenAPI 3.1 document made from the zod schemas that check the
// requests. Every route the admin listener registers is an operation of it and every operation a
// route, so that the document cannot leave one out or promise one that is not there.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { seedJsonSchema } from '../../src/seed/schema.js'
import type { TestApp } from '../helpers/app.js'
import { admin, adminToken, createAdminTestApp, readToken } from './admin-fixtures.js'

let t: TestApp
let doc: {
  openapi: string
  paths: Record<string, Record<string, { security: unknown }>>
  components: { schemas: Record<string, { properties: Record<string, unknown> }> }
}
beforeAll(async () => {
  t = await createAdminTestApp()
  const res = await admin(t, await readToken(t))('GET', '/admin/openapi.json')
  expect(res.statusCode).toBe(200)
  expect(res.headers['content-type']).toBe('application/json; charset=utf-8')
  doc = res.json()
})
afterAll(async () => t.close())

/** Fastify's /admin/clients/:clientId as OpenAPI's /admin/clients/{clientId}. */
const openApiPath = (url: string) => url.replace(/:([A-Za-z]+)/g, '{$1}')

describe('admin API: OpenAPI document', () => {
  it('is OpenAPI 3.1 and needs an admin token', async () => {
    expect(doc.openapi).toBe('3.1.0')
    expect((await admin(t, undefined)('GET', '/admin/openapi.json')).statusCode).toBe(401)
  })

  it('has an operation for every registered route, and a route for every operation', () => {
    const registered = t.app.authz.admin!.routes.map((r) => `${r.method} ${openApiPath(r.url)}`).sort()
    const documented = Object.entries(doc.paths)
      .flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`))
      .sort()
    expect(registered.length).toBeGreaterThan(30)
    expect(documented).toEqual(registered)
  })

  it('takes in a PUT exactly what a seed file takes, and answers no secret or password', () => {
    const seed = seedJsonSchema() as { properties: Record<string, { items: unknown }> }
    const { schemas } = doc.components
    expect(schemas.ClientInput).toEqual(seed.properties.clients!.items)
    expect(schemas.UserInput).toEqual(seed.properties.users!.items)
    expect(schemas.ApiResourceInput).toEqual(seed.properties.apiResources!.items)
    expect(schemas.IdentityProviderInput).toEqual(seed.properties.identityProviders!.items)
    expect(Object.keys(schemas.IdentityProvider!.properties)).not.toContain('clientSecret')
    expect(Object.keys(schemas.Client!.properties)).not.toContain('secrets')
    expect(Object.keys(schemas.ApiResource!.properties)).not.toContain('secrets')
    expect(Object.keys(schemas.User!.properties)).not.toEqual(expect.arrayContaining(['password']))
    expect(Object.keys(schemas.User!.properties)).not.toContain('cibaUserCode')
  })

  it('names the scope each operation needs', () => {
    expect(doc.paths['/admin/clients']!.get!.security).toEqual([{ bearer: ['authz:admin:read'] }])
    expect(doc.paths['/admin/clients/{clientId}']!.put!.security).toEqual([{ bearer: ['authz:admin'] }])
    expect(doc.paths['/admin/identity-providers/{scheme}']!.put!.security).toEqual([{ bearer: ['authz:admin'] }])
    expect(doc.paths['/admin/identity-providers']!.get!.security).toEqual([{ bearer: ['authz:admin:read'] }])
    expect(doc.paths['/admin/ciba-requests']!.get!.security).toEqual([{ bearer: ['authz:admin:read'] }])
    expect(doc.paths['/admin/ciba-requests/{requestId}/approve']!.post!.security).toEqual([{ bearer: ['authz:admin'] }])
    expect(doc.paths['/admin/ciba-requests/{requestId}/deny']!.post!.security).toEqual([{ bearer: ['authz:admin'] }])
  })

  it('says the shape of every answer of the keys, consents and seed routes', () => {
    const ok = (path: string, method: string, status: string) =>
      (doc.paths[path]![method] as unknown as { responses: Record<string, { content?: unknown }> }).responses[status]!.content
    expect(ok('/admin/keys', 'get', '200')).toEqual({ 'application/json': { schema: { $ref: '#/components/schemas/KeyList' } } })
    expect(ok('/admin/keys/rotate', 'post', '201')).toEqual({ 'application/json': { schema: { $ref: '#/components/schemas/KeyList' } } })
    for (const [path, method] of [
      ['/admin/users/{username}/consents', 'get'],
      ['/admin/users/{username}/consents', 'delete'],
      ['/admin/seed', 'put'],
    ] as const) {
      const schema = (ok(path, method, '200') as { 'application/json': { schema: { required: string[] } } })['application/json'].schema
      expect(schema.required.length).toBeGreaterThan(0)
    }
    expect(Object.keys(doc.components.schemas.KeyList!.properties)).toEqual(['items'])
  })

  it('lists the CIBA list filters, and answers CIBA requests without their auth_req_id', () => {
    const list = doc.paths['/admin/ciba-requests']!.get as unknown as { parameters: { name: string; in: string }[] }
    expect(list.parameters.map((p) => `${p.in}:${p.name}`)).toEqual([
      'query:limit',
      'query:cursor',
      'query:clientId',
      'query:subjectId',
      'query:username',
      'query:status',
    ])
    const props = Object.keys(doc.components.schemas.CibaRequest!.properties)
    expect(props).toContain('requestId')
    expect(props.filter((p) => /authreq/i.test(p))).toEqual([])
  })
})

type Schema = Record<string, unknown>

/**
 * The ways `value` does not fit `schema`, each with its JSON path: a structural JSON Schema check
 * of what the document uses ($ref, type, required, properties, additionalProperties, items, enum,
 * const, anyOf, oneOf, allOf, date-time), enough to hold real answers against the document.
 */
function misfits(schema: Schema, value: unknown, path = '(root)'): string[] {
  if (typeof schema.$ref === 'string') {
    const name = schema.$ref.replace('#/components/schemas/', '')
    return misfits(doc.components.schemas[name] as Schema, value, path)
  }
  const out: string[] = []
  const of = (key: string) => (Array.isArray(schema[key]) ? (schema[key] as Schema[]) : undefined)
  const fitting = (list: Schema[]) => list.filter((s) => misfits(s, value, path).length === 0).length
  if (of('anyOf') && fitting(of('anyOf')!) === 0) out.push(`${path}: fits none of anyOf`)
  if (of('oneOf') && fitting(of('oneOf')!) !== 1) out.push(`${path}: does not fit exactly one of oneOf`)
  for (const s of of('allOf') ?? []) out.push(...misfits(s, value, path))
  if ('const' in schema && value !== schema.const) out.push(`${path}: is not ${JSON.stringify(schema.const)}`)
  if (of('enum') && !(schema.enum as unknown[]).includes(value)) out.push(`${path}: is not one of the enum`)
  const isObject = typeof value === 'object' && value !== null && !Array.isArray(value)
  const is: Record<string, boolean> = {
    object: isObject,
    array: Array.isArray(value),
    string: typeof value === 'string',
    integer: Number.isInteger(value),
    number: typeof value === 'number',
    boolean: typeof value === 'boolean',
    null: value === null,
  }
  if (schema.type !== undefined && ![schema.type].flat().some((t) => is[t as string]))
    return [...out, `${path}: is not ${JSON.stringify(schema.type)}`]
  if (isObject) {
    const props = (schema.properties ?? {}) as Record<string, Schema>
    for (const key of (schema.required ?? []) as string[]) if (!(key in value)) out.push(`${path}.${key}: is required`)
    for (const [key, v] of Object.entries(value)) {
      if (props[key]) out.push(...misfits(props[key], v, `${path}.${key}`))
      else if (schema.additionalProperties === false) out.push(`${path}.${key}: is not in the schema`)
      else if (typeof schema.additionalProperties === 'object')
        out.push(...misfits(schema.additionalProperties as Schema, v, `${path}.${key}`))
    }
  }
  if (Array.isArray(value) && schema.items) value.forEach((v, i) => out.push(...misfits(schema.items as Schema, v, `${path}[${i}]`)))
  if (typeof value === 'string' && schema.format === 'date-time' && Number.isNaN(Date.parse(value))) out.push(`${path}: is not a date-time`)
  return out
}

describe('admin API: real answers fit the OpenAPI document', () => {
  let call: ReturnType<typeof admin>
  beforeAll(async () => {
    call = admin(t, await adminToken(t))
  })

  /** The answer's status is documented for the operation, with the headers it names, and its body fits the schema. */
  function fits(res: { statusCode: number; headers: Record<string, unknown>; body: string }, method: string, path: string): void {
    const op = doc.paths[path]?.[method] as unknown as
      { responses: Record<string, { content?: Record<string, { schema: Schema }>; headers?: Record<string, unknown> }> } | undefined
    expect(op, `${method} ${path}`).toBeDefined()
    const documented = op!.responses[String(res.statusCode)]
    expect(documented, `${method} ${path} answers ${res.statusCode}`).toBeDefined()
    for (const header of Object.keys(documented!.headers ?? {}))
      expect(res.headers[header.toLowerCase()], `${method} ${path} ${header}`).toBeDefined()
    const schema = documented!.content?.['application/json']?.schema
    if (schema === undefined) return
    expect(misfits(schema, JSON.parse(res.body)), `${method} ${path} ${res.statusCode}`).toEqual([])
  }

  it("each resource kind's GET and list", async () => {
    const provider = { displayName: 'Corp SSO', type: 'oidc', authority: 'https://sso.corp.example', clientId: 'authz-rp' }
    expect((await call('PUT', '/admin/identity-providers/corp', { body: provider })).statusCode).toBe(201)
    for (const [url, path] of [
      ['/admin/clients/backend', '/admin/clients/{clientId}'],
      ['/admin/clients', '/admin/clients'],
      ['/admin/clients/backend/secrets', '/admin/clients/{clientId}/secrets'],
      ['/admin/users/alice', '/admin/users/{username}'],
      ['/admin/users', '/admin/users'],
      ['/admin/api-scopes/orders.read', '/admin/api-scopes/{name}'],
      ['/admin/api-scopes', '/admin/api-scopes'],
      ['/admin/api-resources/orders-api', '/admin/api-resources/{name}'],
      ['/admin/api-resources', '/admin/api-resources'],
      ['/admin/identity-resources/openid', '/admin/identity-resources/{name}'],
      ['/admin/identity-resources', '/admin/identity-resources'],
      ['/admin/identity-providers/corp', '/admin/identity-providers/{scheme}'],
      ['/admin/identity-providers', '/admin/identity-providers'],
      ['/admin/identity-providers/corp/client-secret', '/admin/identity-providers/{scheme}/client-secret'],
      ['/admin/keys', '/admin/keys'],
      ['/admin/migrations', '/admin/migrations'],
      ['/admin/lockouts', '/admin/lockouts'],
      ['/admin/users/alice/consents', '/admin/users/{username}/consents'],
      ['/admin/users/alice/factors', '/admin/users/{username}/factors'],
      ['/admin/users/alice/links', '/admin/users/{username}/links'],
      ['/admin/ciba-requests', '/admin/ciba-requests'],
      ['/admin/registration-tokens', '/admin/registration-tokens'],
    ] as const) {
      const res = await call('GET', url)
      expect(res.statusCode, url).toBe(200)
      fits(res, 'get', path)
    }
  })

  it('a PUT that creates (201 with Location) and one that replaces (200)', async () => {
    for (const [url, path, body] of [
      ['/admin/clients/fresh', '/admin/clients/{clientId}', { allowedScopes: ['orders.read'] }],
      ['/admin/users/bob', '/admin/users/{username}', { password: 'bob-pw' }],
      ['/admin/api-scopes/orders.write', '/admin/api-scopes/{name}', {}],
    ] as const) {
      const created = await call('PUT', url, { body })
      expect(created.statusCode, url).toBe(201)
      fits(created, 'put', path)
      const replaced = await call('PUT', url, { body })
      expect(replaced.statusCode, url).toBe(200)
      fits(replaced, 'put', path)
    }
  })

  it('the user actions, a new client secret, a new registration token and new signing keys', async () => {
    for (const action of ['disable', 'enable', 'unlock', 'sign-out', 'reset-factors']) {
      const res = await call('POST', `/admin/users/alice/${action}`)
      expect(res.statusCode, action).toBe(200)
      fits(res, 'post', `/admin/users/{username}/${action}`)
    }
    fits(await call('POST', '/admin/clients/backend/secrets'), 'post', '/admin/clients/{clientId}/secrets')
    fits(await call('POST', '/admin/registration-tokens', { body: {} }), 'post', '/admin/registration-tokens')
    fits(await call('POST', '/admin/keys/rotate', { body: {} }), 'post', '/admin/keys/rotate')
  })
})
