// passport-openidconnect: sign-in with the code flow, the user on /, sign-out of the app and authz.
import express from 'express'
import session from 'express-session'
import passport from 'passport'
import OpenIDConnectStrategy from 'passport-openidconnect'

const issuer = process.env.ISSUER ?? 'http://localhost:5000' // authz's ISSUER, exactly
const port = Number(process.env.PORT ?? 3000)
const baseURL = `http://localhost:${port}`

passport.use(
  new OpenIDConnectStrategy(
    {
      issuer,
      authorizationURL: `${issuer}/connect/authorize`,
      tokenURL: `${issuer}/connect/token`,
      userInfoURL: `${issuer}/connect/userinfo`,
      clientID: 'todos',
      clientSecret: 'todos-secret',
      callbackURL: `${baseURL}/cb`,
      scope: ['profile', 'email'],
    },
    // With these five parameters the profile comes from the ID token alone (no userinfo call);
    // the ID token is kept for signing out of authz.
    function verify(issuer, profile, context, idToken, cb) {
      cb(null, { id: profile.id, name: profile.displayName, email: profile.emails?.[0]?.value, idToken })
    },
  ),
)
passport.serializeUser((user, cb) => cb(null, user))
passport.deserializeUser((user, cb) => cb(null, user))

const app = express()
app.use(session({ secret: 'a long random string that signs the session cookie', resave: false, saveUninitialized: false }))
app.use(passport.authenticate('session'))
app.get('/', (req, res) => {
  res.send(
    req.user
      ? `<p>Signed in as <span id="user">${escape(req.user.name)}</span> (${escape(req.user.email)}).</p><a href="/logout">Sign out</a>`
      : '<p>Signed out.</p><a href="/login">Sign in</a>',
  )
})
app.get('/login', passport.authenticate('openidconnect'))
app.get('/cb', passport.authenticate('openidconnect', { failureRedirect: '/', failureMessage: true }), (req, res) => res.redirect('/'))
// Ends the app's session, then authz's (RP-Initiated Logout 1.0), which sends the person back to /.
app.get('/logout', (req, res, next) => {
  const idToken = req.user?.idToken
  req.logout((err) => {
    if (err) return next(err)
    if (!idToken) return res.redirect('/')
    const endSession = new URL(`${issuer}/connect/endsession`)
    endSession.search = new URLSearchParams({ id_token_hint: idToken, post_logout_redirect_uri: `${baseURL}/` }).toString()
    res.redirect(endSession.href)
  })
})
app.listen(port, () => console.log(`Todos on ${baseURL}`))

function escape(text) {
  return String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
}
