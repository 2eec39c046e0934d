// openid-client v6: sign-in with the code flow (PKCE, state, nonce), the user on /, sign-out of
// the app and authz.
import express from 'express'
import session from 'express-session'
import * as client from 'openid-client'

const issuer = process.env.ISSUER ?? 'http://localhost:5000' // authz's ISSUER, exactly
const port = Number(process.env.PORT ?? 3000)
const baseURL = `http://localhost:${port}`

// Discovery on first use, so the app starts before authz does; tried again after a failure.
let discovered
function config() {
  discovered ??= client
    .discovery(new URL(issuer), 'notes', 'notes-secret', client.ClientSecretBasic('notes-secret'), {
      execute: issuer.startsWith('http:') ? [client.allowInsecureRequests] : [], // local development only
    })
    .catch((err) => {
      discovered = undefined
      throw err
    })
  return discovered
}

const app = express()
app.use(session({ secret: 'a long random string that signs the session cookie', resave: false, saveUninitialized: false }))
app.get('/', (req, res) => {
  const user = req.session.user
  res.send(
    user
      ? `<p>Signed in as <span id="user">${escape(user.name)}</span> (${escape(user.email)}).</p><a href="/logout">Sign out</a>`
      : '<p>Signed out.</p><a href="/login">Sign in</a>',
  )
})
app.get('/login', async (req, res) => {
  const pkceCodeVerifier = client.randomPKCECodeVerifier()
  const state = client.randomState()
  const nonce = client.randomNonce()
  req.session.signIn = { pkceCodeVerifier, state, nonce }
  const url = client.buildAuthorizationUrl(await config(), {
    redirect_uri: `${baseURL}/cb`,
    scope: 'openid profile email',
    code_challenge: await client.calculatePKCECodeChallenge(pkceCodeVerifier),
    code_challenge_method: 'S256',
    state,
    nonce,
  })
  res.redirect(url.href)
})
app.get('/cb', async (req, res) => {
  const { pkceCodeVerifier, state, nonce } = req.session.signIn ?? {}
  delete req.session.signIn
  // Checks state, iss (RFC 9207) and the ID token (nonce, aud, exp), then redeems the code.
  const tokens = await client.authorizationCodeGrant(await config(), new URL(req.originalUrl, baseURL), {
    pkceCodeVerifier,
    expectedState: state,
    expectedNonce: nonce,
    idTokenExpected: true,
  })
  const claims = tokens.claims()
  const userinfo = await client.fetchUserInfo(await config(), tokens.access_token, claims.sub)
  // A new session id once signed in (no session fixation).
  await new Promise((resolve, reject) => req.session.regenerate((err) => (err ? reject(err) : resolve())))
  req.session.user = { sub: claims.sub, name: userinfo.name, email: userinfo.email, idToken: tokens.id_token }
  res.redirect('/')
})
// Ends the app's session, then authz's (RP-Initiated Logout 1.0), which sends the person back to /.
app.get('/logout', async (req, res) => {
  const idToken = req.session.user?.idToken
  await new Promise((resolve, reject) => req.session.destroy((err) => (err ? reject(err) : resolve())))
  if (!idToken) return res.redirect('/')
  res.redirect(client.buildEndSessionUrl(await config(), { id_token_hint: idToken, post_logout_redirect_uri: `${baseURL}/` }).href)
})
app.listen(port, () => console.log(`Notes on ${baseURL}`))

function escape(text) {
  return String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
}
