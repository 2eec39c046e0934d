// The approval page on the shared foundation: to the sign-in page and back, the session cookie,
// the decision screen, CSRF, wrong user, already decided / unknown requests, headers and escaping.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { PAGE_HEADERS } from '../../../src/pages/html.js'
import { SIGN_IN_FAILED } from '../../../src/pages/sign-in.js'
import { handleHash } from '../../../src/stores/columns.postgres.js'
import { approvalPath, decide, decideWith, lastRequestId, signIn } from './approve-helper.js'
import { FORM, form } from '../../helpers/app.js'
import { BANK, createCibaTestApp, startCiba, type CibaTestApp } from './harness.js'
import { cookieValue, csrfIn, withCookies } from '../../helpers/http.js'
import { signInPath } from '../../helpers/sign-in.js'

let authz: CibaTestApp
beforeAll(async () => {
  authz = await createCibaTestApp()
})
afterAll(() => authz.close())
// At most 5 pending requests per user: each test starts from none.
afterEach(async () => {
  await authz.db.query('DELETE FROM ciba_requests')
})

async function start(params: Record<string, string> = {}) {
  const res = await startCiba(authz, { ...BANK, scope: 'openid email orders.read', login_hint: 'alice', ...params })
  expect(res.statusCode).toBe(200)
  return lastRequestId(authz)
}

const status = async (id: string) => (await authz.db.query('SELECT status FROM ciba_requests WHERE id = $1', [id])).rows

describe('approval page', () => {
  it('sends a person without a session to the sign-in page, which names the application first', async () => {
    const id = await start()
    const res = await authz.app.inject({ method: 'GET', url: approvalPath(id) })
    expect(res.statusCode).toBe(303)
    expect(res.headers.location).toBe(`/account/sign-in?return_to=%2Fciba%2Fapprove%3Frequest%3D${id}`)
    const page = await authz.app.inject({ method: 'GET', url: res.headers.location! })
    expect(page.statusCode).toBe(200)
    expect(page.headers).toMatchObject(PAGE_HEADERS)
    expect(page.body).toContain('<p class="lead">to continue to <strong id="client-name">Bank &lt;App&gt;</strong></p>')
    expect(page.body).toContain('<label for="username">Username</label>')
    expect(page.body).toContain('<label for="password">Password</label>')
    expect(page.body).toContain(`<form method="post" action="${signInPath(approvalPath(id))}">`)
    expect(page.body).not.toMatch(/<script|<style| style=/)
    expect([page.headers['set-cookie']].flat()).toEqual([
      expect.stringMatching(/^__Host-authz-csrf=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; Secure; SameSite=Lax$/),
    ])
    expect(csrfIn(page.body)).toMatch(/^[A-Za-z0-9_-]{43}$/)
  })

  it('signs in with a hashed session cookie and shows the decision screen, escaped', async () => {
    const id = await start({ binding_message: '<b>A1</b>', acr_values: 'idp:local' })
    const { res, cookie } = await signIn(authz, id, 'alice', 'alice-pw')
    expect(res.statusCode).toBe(303)
    expect(res.headers.location).toBe(approvalPath(id))
    const set = [res.headers['set-cookie']].flat()
    expect(set).toContainEqual(
      expect.stringMatching(/^__Host-authz-session=[A-Za-z0-9_-]{43}; Max-Age=36000; Path=\/; HttpOnly; Secure; SameSite=Lax$/),
    )
    expect(set).toContainEqual(expect.stringMatching(/^__Host-authz-csrf=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; Secure; SameSite=Lax$/))
    const value = cookieValue(cookie, '__Host-authz-session')!
    const { rows } = await authz.db.query('SELECT id_hash, subject_id, amr, client_ids FROM user_sessions WHERE id_hash = $1', [
      handleHash(value),
    ])
    expect(rows).toEqual([{ id_hash: handleHash(value), subject_id: 'u-alice', amr: ['pwd'], client_ids: [] }])
    const page = await authz.app.inject({ method: 'GET', url: approvalPath(id), headers: { cookie } })
    expect(page.statusCode).toBe(200)
    expect(page.headers).toMatchObject(PAGE_HEADERS)
    expect(page.body).toContain('<h1>Bank &lt;App&gt; asks for your approval</h1>')
    expect(page.body).toContain('Signed in as <strong id="signed-in-as">alice</strong>')
    expect(page.body).toContain('<p class="code" id="binding-message">&lt;b&gt;A1&lt;/b&gt;</p>')
    expect(page.body).toContain(
      '<li data-scope="email"><strong>Your e-mail address</strong><span>Including whether it is verified</span></li>',
    )
    expect(page.body).toContain('<li data-scope="orders.read"><strong>Read your orders</strong></li>')
    expect(page.body).toContain('<dt>Identity provider</dt><dd>local</dd>')
    expect(page.body).toContain('<button class="button primary" type="submit" name="decision" value="approve">Approve</button>')
    expect(page.body).toContain('<button class="button secondary" type="submit" name="decision" value="deny">Deny</button>')
    expect(page.body).toContain(`<form method="post" action="${approvalPath(id)}">`)
  })

  it('refuses a wrong password (401, username kept) and tells another user the request is not theirs', async () => {
    const id = await start()
    const bad = await signIn(authz, id, 'alice', 'nope')
    expect(bad.res.statusCode).toBe(401)
    expect(bad.res.body).toContain(SIGN_IN_FAILED)
    expect(bad.res.body).toContain('value="alice"')
    expect(cookieValue(bad.cookie, '__Host-authz-session')).toBeUndefined()
    const other = await signIn(authz, id, 'bob', 'bob-pw')
    expect(other.res.statusCode).toBe(303)
    const page = await authz.app.inject({ method: 'GET', url: approvalPath(id), headers: { cookie: other.cookie } })
    expect(page.statusCode).toBe(403)
    expect(page.body).toContain('<h1>This request is for another account</h1>')
    expect(page.body).toContain('You are signed in as <strong>bob</strong>, but Bank &lt;App&gt; asked for someone else&#39;s approval.')
    expect(page.body).toContain(`href="${signInPath(approvalPath(id))}"`)
    const forged = await decideWithout(id, other.cookie, 'approve')
    expect(forged.statusCode).toBe(403)
    expect(await status(id)).toEqual([{ status: 'pending' }])
  })

  it('refuses a sign-in or a decision without the right CSRF token, and changes nothing', async () => {
    const id = await start()
    const page = await authz.app.inject({ method: 'GET', url: signInPath(approvalPath(id)) })
    const pre = withCookies('', page.headers['set-cookie'])
    const forged = await authz.app.inject({
      method: 'POST',
      url: signInPath(approvalPath(id)),
      headers: { ...FORM, cookie: pre },
      payload: form({ csrf: 'x'.repeat(43), username: 'alice', password: 'alice-pw' }),
    })
    expect(forged.statusCode).toBe(403)
    expect(forged.headers).toMatchObject(PAGE_HEADERS)
    expect(forged.body).toContain('<h1>Form not accepted</h1>')
    expect(forged.body).toContain('This form has expired or did not come from the page you have open here')
    expect(forged.body).toContain('Nothing was changed.')
    expect(forged.headers['set-cookie']).toBeUndefined()
    const { cookie } = await signIn(authz, id, 'alice', 'alice-pw')
    // The token of the page shown before the sign-in: the binding was replaced at sign-in.
    const stale = await authz.app.inject({
      method: 'POST',
      url: approvalPath(id),
      headers: { ...FORM, cookie },
      payload: form({ csrf: csrfIn(page.body), decision: 'approve' }),
    })
    expect(stale.statusCode).toBe(403)
    expect(stale.body).toContain(`<a class="button primary" href="${approvalPath(id)}">Start again</a>`)
    const missing = await authz.app.inject({
      method: 'POST',
      url: approvalPath(id),
      headers: { ...FORM, cookie },
      payload: form({ decision: 'approve' }),
    })
    expect(missing.statusCode).toBe(403)
    expect(missing.body).toContain('<h1>Form not accepted</h1>')
    expect(await status(id)).toEqual([{ status: 'pending' }])
  })

  it('answers a decision posted after the session ended with a page that leads to sign-in', async () => {
    const id = await start()
    const { cookie } = await signIn(authz, id, 'alice', 'alice-pw')
    const shown = await authz.app.inject({ method: 'GET', url: approvalPath(id), headers: { cookie } })
    await authz.db.query('DELETE FROM user_sessions WHERE id_hash = $1', [handleHash(cookieValue(cookie, '__Host-authz-session')!)])
    const res = await authz.app.inject({
      method: 'POST',
      url: approvalPath(id),
      headers: { ...FORM, cookie },
      payload: form({ csrf: csrfIn(shown.body), decision: 'approve' }),
    })
    expect(res.statusCode).toBe(401)
    expect(res.body).toContain('<h1>Your session has ended</h1>')
    expect(res.body).toContain(`<a class="button primary" href="${signInPath(approvalPath(id))}">Sign in</a>`)
    expect(await status(id)).toEqual([{ status: 'pending' }])
  })

  it('asks again when the form carries neither Approve nor Deny', async () => {
    const id = await start()
    const { cookie } = await signIn(authz, id, 'alice', 'alice-pw')
    const res = await decideWithout(id, cookie, undefined)
    expect(res.statusCode).toBe(400)
    expect(res.body).toContain('<div class="alert" role="alert"><p>Choose Approve or Deny.</p></div>')
    expect(await status(id)).toEqual([{ status: 'pending' }])
    expect((await decideWith(authz, id, 'deny', cookie)).statusCode).toBe(200)
    expect(await status(id)).toEqual([{ status: 'denied' }])
  })

  it('says so for unknown, decided and expired requests', async () => {
    const unknown = await authz.app.inject({ method: 'GET', url: '/ciba/approve?request=nope' })
    expect(unknown.statusCode).toBe(404)
    expect(unknown.body).toContain('<h1>Request not found</h1>')
    expect((await authz.app.inject({ method: 'GET', url: '/ciba/approve' })).statusCode).toBe(404)
    const id = await start()
    expect((await decide(authz, id, 'approve')).statusCode).toBe(200)
    const again = await authz.app.inject({ method: 'GET', url: approvalPath(id) })
    expect(again.statusCode).toBe(410)
    expect(again.body).toContain('<h1>This request was already approved</h1>')
    expect(again.headers).toMatchObject(PAGE_HEADERS)
    const late = await start()
    authz.clock.advance(121)
    const expired = await authz.app.inject({ method: 'GET', url: approvalPath(late) })
    expect(expired.statusCode).toBe(410)
    expect(expired.body).toContain('<h1>This request has expired</h1>')
  })
})

/** Posts a decision with the token of the page that cookie's browser is shown (whatever it is). */
async function decideWithout(id: string, cookie: string, decision: string | undefined) {
  const token = await authz.app.inject({ method: 'GET', url: '/account', headers: { cookie } })
  const jar = withCookies(cookie, token.headers['set-cookie'])
  return authz.app.inject({
    method: 'POST',
    url: approvalPath(id),
    headers: { ...FORM, cookie: jar },
    payload: form({ csrf: csrfIn(token.body), ...(decision ? { decision } : {}) }),
  })
}
