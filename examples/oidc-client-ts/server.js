// Serves the browser app (index.html) and the library's browser build on http://localhost:3000.
// Everything else happens in the browser: the page talks to authz directly (CORS).
import { readFile } from 'node:fs/promises'
import { createServer } from 'node:http'

const issuer = process.env.ISSUER ?? 'http://localhost:5000' // authz's ISSUER, exactly
const port = Number(process.env.PORT ?? 3000)
// The package's self-contained browser build (defines the global `oidc`), beside its ES module.
const bundle = new URL('../browser/oidc-client-ts.min.js', import.meta.resolve('oidc-client-ts'))

const files = {
  '/config.js': () => ['text/javascript', `const ISSUER = ${JSON.stringify(issuer)}`],
  '/oidc-client-ts.js': async () => ['text/javascript', await readFile(bundle)],
}
const page = async () => ['text/html; charset=utf-8', await readFile(new URL('index.html', import.meta.url))]

createServer(async (req, res) => {
  const path = new URL(req.url, 'http://localhost').pathname
  const [type, body] = await (files[path] ?? page)()
  res.writeHead(200, { 'content-type': type }).end(body)
}).listen(port, () => console.log(`My SPA on http://localhost:${port}`))
