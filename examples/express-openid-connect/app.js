// express-openid-connect: sign-in with the code flow, the user on /, sign-out of the app and authz.
import express from 'express'
// The package is CommonJS without named exports Node can detect: import it whole.
import expressOpenidConnect from 'express-openid-connect'

const { auth, requiresAuth } = expressOpenidConnect
const issuer = process.env.ISSUER ?? 'http://localhost:5000' // authz's ISSUER, exactly
const port = Number(process.env.PORT ?? 3000)
const baseURL = `http://localhost:${port}` // the redirect URI is baseURL + /callback

const app = express()
app.use(
  auth({
    issuerBaseURL: issuer,
    baseURL,
    clientID: 'shop',
    clientSecret: 'shop-secret',
    secret: 'a long random string that encrypts the session cookie',
    authRequired: false,
    idpLogout: true,
    authorizationParams: { response_type: 'code', scope: 'openid profile email' },
  }),
)
// /login, /callback and /logout come from auth().
app.get('/', (req, res) => {
  res.send(
    req.oidc.isAuthenticated()
      ? `<p>Signed in as <span id="user">${escape(req.oidc.user.name)}</span>.</p><a href="/profile">Profile</a> <a href="/logout">Sign out</a>`
      : '<p>Signed out.</p><a href="/login">Sign in</a>',
  )
})
app.get('/profile', requiresAuth(), async (req, res) => {
  // req.oidc.user: the ID token's claims; fetchUserInfo: authz's userinfo endpoint.
  res.json({ user: req.oidc.user, userinfo: await req.oidc.fetchUserInfo() })
})
app.listen(port, () => console.log(`Acme Shop on ${baseURL}`))

function escape(text) {
  return String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
}
