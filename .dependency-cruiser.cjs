// The dependency rules of ARCHITECTURE.md, checked by `npm run lint` (CI runs it):
//   composition roots (app.ts, create-core.ts, create-admin.ts, main.ts, cli, seed)
//     → flows (src/flows/<flow>/: never each other) and the admin API (src/admin/: the seed's schema, no flow)
//       → http/ (Fastify glue) and pages/ (rendering)
//         → the kits: grants/, client-auth/, interaction/, jobs/
//           → tokens/, keys/
//             → store interfaces (src/stores/<name>.ts) → PostgreSQL stores (<name>.postgres.ts) → db/
// with domain/, errors.ts, endpoints.ts, config.ts and observe/ at the bottom for everyone.
// Fastify only in routes, http/ and the roots; SQL (db/ and the drivers) only in stores/ and db/.
// test/lint/layers.test.ts plants a wrong import for each rule and sees it fail.
/** @type {import('dependency-cruiser').IConfiguration} */
const ROOTS = '^src/(app|main|cli|create-core|create-admin)\\.ts$|^src/cli/|^src/seed/'
const FLOWS = '^src/flows/'
const ADMIN = '^src/admin/'
/** What the admin API takes of the seed: its schema and its error paths (no database in them). */
const SEED_CONTRACT = '^src/seed/(schema|errors|client-checks)\\.ts$'
const HTTP = '^src/http/'
const PAGES = '^src/pages/'
const KITS = '^src/(grants|client-auth|interaction|jobs)/'
const TOKENS = '^src/(tokens|keys)/'
const STORE_INTERFACES = '^src/stores/(?!.*\\.postgres\\.ts$)'
const PG_STORES = '^src/stores/.*\\.postgres\\.ts$'
const DB = '^src/db/'
const SQL = `${DB}|^node_modules/(pg|pg-[a-z-]+|@electric-sql)/`
const FASTIFY = '^node_modules/(fastify|@fastify)/'
const BOTTOM = '^src/(domain/|errors\\.ts$|endpoints\\.ts$)'
const OBSERVE = '^src/observe/'
/** Where Fastify may be imported: route plugins (routes.ts, *-routes.ts), http/, the roots, the Core contract and the admin listener. */
const FASTIFY_ALLOWED = `${HTTP}|^src/flows/[^/]+/[a-z-]*routes\\.ts$|^src/admin/([a-z-]*-routes|server|request)\\.ts$|${ROOTS}|^src/core\\.ts$`

const forbid = (name, comment, from, to) => ({
  name,
  comment,
  severity: 'error',
  from: typeof from === 'string' ? { path: from } : from,
  to: typeof to === 'string' ? { path: to } : to,
})

module.exports = {
  forbidden: [
    forbid(
      'flows-do-not-import-each-other',
      'a flow uses the Core and the shared folders; what two flows share moves down',
      '^src/flows/([^/]+)/',
      { path: FLOWS, pathNot: '^src/flows/$1/' },
    ),
    forbid(
      'no-fastify-outside-routes-and-http',
      'protocol logic has no Fastify types: only route plugins, http/ and the roots import Fastify',
      { pathNot: FASTIFY_ALLOWED, path: '^src/' },
      FASTIFY,
    ),
    forbid(
      'no-sql-outside-stores-and-db',
      'only stores/ and db/ (and the roots that wire them) reach the database driver or db/',
      { pathNot: `^src/stores/|${DB}|${ROOTS}`, path: '^src/' },
      SQL,
    ),
    forbid(
      'only-roots-wire-postgres',
      'only the composition roots import concrete stores',
      { pathNot: `${ROOTS}|${PG_STORES}`, path: '^src/' },
      PG_STORES,
    ),
    forbid('bottom-imports-nothing-above', 'domain/, errors.ts and endpoints.ts are the bottom of every layer', BOTTOM, {
      path: '^src/',
      pathNot: BOTTOM,
    }),
    forbid('observe-below-everything', 'audit events and metrics are called from every layer and call none', OBSERVE, {
      path: '^src/',
      pathNot: `${BOTTOM}|${OBSERVE}|^src/config\\.ts$`,
    }),
    forbid('core-contract-knows-no-flow', 'src/core.ts is what flows import; it cannot name them', '^src/core\\.ts$', `${FLOWS}|${ROOTS}`),
    forbid(
      'shared-folders-below-flows',
      'nothing shared imports a flow or a root',
      { pathNot: `${FLOWS}|${ROOTS}|${ADMIN}`, path: '^src/' },
      `${FLOWS}|${ROOTS}`,
    ),
    forbid(
      'admin-beside-flows',
      'the admin API uses the Core services and the shared folders, and of the roots only the seed contract; no flow',
      ADMIN,
      { path: `${FLOWS}|${ROOTS}`, pathNot: SEED_CONTRACT },
    ),
    forbid(
      'only-roots-build-admin',
      'the admin API is built by its root (create-admin.ts); below it nothing knows it (core.ts names its listener type)',
      { path: '^src/', pathNot: `${ROOTS}|${ADMIN}|^src/core\\.ts$` },
      ADMIN,
    ),
    forbid('http-below-flows', 'HTTP glue serves every flow and knows none', HTTP, `${FLOWS}|^src/core\\.ts$`),
    forbid(
      'pages-render-only',
      'pages render page models; they reach no stores, SQL, HTTP or kits',
      PAGES,
      `^src/stores/|${DB}|${HTTP}|^src/(grants|client-auth|jobs)/|${TOKENS}`,
    ),
    forbid('kits-below-http-and-pages', 'the shared kits know no HTTP glue and render nothing', KITS, `${HTTP}|${PAGES}`),
    forbid('tokens-below-kits', 'tokens and keys depend on store interfaces at most', TOKENS, `${KITS}|${HTTP}|${PAGES}`),
    forbid(
      'store-interfaces-below-tokens',
      'store interfaces know no tokens, kits or HTTP',
      STORE_INTERFACES,
      `${TOKENS}|${KITS}|${HTTP}|${PAGES}|${PG_STORES}`,
    ),
    {
      name: 'no-circular',
      comment: 'no cycle anywhere, type-only imports included',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default'],
      extensions: ['.ts', '.js'],
    },
  },
}
