// Auth.js (@auth/express): sign-in with the code flow, the user on /, sign-out of the app.
import { ExpressAuth, getSession } from '@auth/express'
import express from 'express'

const issuer = process.env.ISSUER ?? 'http://localhost:5000' // authz's ISSUER, exactly
const port = Number(process.env.PORT ?? 3000)
if (!process.env.AUTH_SECRET) {
  console.error('Set AUTH_SECRET to 32 or more random characters: AUTH_SECRET=$(openssl rand -base64 32) npm start')
  process.exit(1)
}

const authConfig = {
  // The redirect URI is <app origin>/auth/callback/<provider id>.
  providers: [{ id: 'authz', name: 'authz', type: 'oidc', issuer, clientId: 'authjs-app', clientSecret: 'authjs-secret' }],
  secret: process.env.AUTH_SECRET, // encrypts the session cookie
  trustHost: true,
}

const app = express()
// Auth.js's pages and endpoints: /auth/signin, /auth/signout, /auth/callback/authz, /auth/session.
app.use('/auth', ExpressAuth(authConfig))
app.get('/', async (req, res) => {
  // The session holds the ID token's claims: { user: { name, email }, expires }.
  const session = await getSession(req, authConfig)
  res.send(
    session?.user
      ? `<p>Signed in as <span id="user">${escape(session.user.name)}</span> (${escape(session.user.email)}).</p><a href="/auth/signout">Sign out</a>`
      : '<p>Signed out.</p><a href="/auth/signin">Sign in</a>',
  )
})
app.listen(port, () => console.log(`Auth.js app on http://localhost:${port}`))

function escape(text) {
  return String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
}
