// Every malformed input gets a 4xx OAuth error in JSON, never a 500 or a hang,
// at every POST endpoint.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, FORM, type TestApp } from '../helpers/app.js'

let authz: TestApp
beforeAll(async () => {
  authz = await createTestApp()
})
afterAll(() => authz.close())

const ENDPOINTS = ['/connect/token', '/connect/introspect', '/connect/revocation', '/connect/ciba']
const NOT_FORM = { error: 'invalid_request', error_description: 'the request body must be application/x-www-form-urlencoded' }
const UNSUPPORTED = { error: 'invalid_request', error_description: 'unsupported content type: use application/x-www-form-urlencoded' }
const basicOf = (bytes: number[]) => `Basic ${Buffer.from(bytes).toString('base64')}`

const CASES: Array<{ name: string; headers: Record<string, string>; payload: string; status: number; body?: object; error?: string }> = [
  {
    name: 'text/plain body',
    headers: { 'content-type': 'text/plain' },
    payload: 'grant_type=client_credentials',
    status: 400,
    body: NOT_FORM,
  },
  {
    name: 'JSON body',
    headers: { 'content-type': 'application/json' },
    payload: '{"grant_type":"client_credentials"}',
    status: 400,
    body: NOT_FORM,
  },
  {
    name: 'broken JSON',
    headers: { 'content-type': 'application/json' },
    payload: '{"a":',
    status: 400,
    body: { error: 'invalid_request', error_description: 'malformed request body' },
  },
  {
    name: 'multipart body',
    headers: { 'content-type': 'multipart/form-data; boundary=x' },
    payload: '--x\r\n',
    status: 400,
    body: UNSUPPORTED,
  },
  { name: 'no content type', headers: {}, payload: 'grant_type=client_credentials', status: 400, body: UNSUPPORTED },
  {
    name: 'repeated parameter',
    headers: FORM,
    payload: 'client_id=a&client_id=b',
    status: 400,
    body: { error: 'invalid_request', error_description: 'parameter client_id is repeated' },
  },
  // Credentials that cannot be decoded are simply wrong credentials.
  { name: 'broken percent-encoding', headers: FORM, payload: 'client_id=%E0%A4%A&client_secret=%ZZ', status: 401, error: 'invalid_client' },
  {
    name: 'Basic with invalid UTF-8',
    headers: { ...FORM, authorization: basicOf([0xff, 0xfe, 0x3a, 0x41]) },
    payload: 'token=x',
    status: 401,
    error: 'invalid_client',
  },
  { name: 'Basic not base64', headers: { ...FORM, authorization: 'Basic !!!' }, payload: 'token=x', status: 401, error: 'invalid_client' },
  { name: 'prototype keys', headers: FORM, payload: '__proto__=x&constructor=y&toString=z', status: 401, error: 'invalid_client' },
]

describe('malformed requests', () => {
  for (const c of CASES) {
    it(`answers a ${c.name} with ${c.status} at every endpoint`, async () => {
      for (const url of ENDPOINTS) {
        const res = await authz.app.inject({ method: 'POST', url, headers: c.headers, payload: c.payload })
        expect({ url, status: res.statusCode }).toEqual({ url, status: c.status })
        expect(res.headers['content-type']).toBe('application/json; charset=utf-8')
        expect(res.headers['cache-control']).toBe('no-store')
        if (c.body) expect(res.json()).toEqual(c.body)
        else expect(res.json().error).toBe(c.error)
      }
    })
  }
})
