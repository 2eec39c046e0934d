// GET /admin/openapi.json: an OpenAPI 3.1 document made from the zod schemas that check the
// requests. Every route the admin listener registers is an operation of it and every operation a
// route, so that the document cannot leave one out or promise one that is not there.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { seedJsonSchema } from '../../src/seed/schema.js'
import type { TestApp } from '../helpers/app.js'
import { admin, createAdminTestApp, readToken } from './admin-fixtures.js'

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
