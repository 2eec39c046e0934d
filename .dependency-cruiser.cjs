// The layer rule (DESIGN.md "Shape"): imports point one way,
//   routes → services (incl. interaction) → grants / tokens → store interfaces → stores/postgres → db
// with domain/ and errors.ts at the bottom for everyone. `npm run lint` runs this; CI runs lint.
// Only the composition roots (app.ts, main.ts, cli*, seed/) may wire concrete stores and drivers.
/** @type {import('dependency-cruiser').IConfiguration} */
const ROUTES = '^src/routes/'
const HTTP = '^src/http/'
const PAGES = '^src/pages/'
const SERVICES = '^src/(services|interaction)/'
const GRANTS = '^src/grants/'
const TOKENS = '^src/tokens/'
const PG_STORES = '^src/stores/postgres/'
const DB = '^src/db/'
const OBSERVE = '^src/observe/'

const forbid = (name, comment, from, to) => ({ name, comment, severity: 'error', from: { path: from }, to: { path: to } })

module.exports = {
  forbidden: [
    forbid('errors-import-nothing', 'errors.ts is the bottom of every layer', '^src/errors\\.ts$', '^src/'),
    forbid('domain-is-the-bottom', 'domain types depend on nothing but errors', '^src/domain/', `${ROUTES}|${HTTP}|${PAGES}|${SERVICES}|${GRANTS}|${TOKENS}|^src/stores/|${DB}`),
    forbid('routes-no-stores-or-sql', 'routes call services; they never reach stores or SQL', ROUTES, `^src/stores/|${DB}|${GRANTS}`),
    forbid('services-no-http', 'services have no Fastify types and no HTTP glue', SERVICES, `${ROUTES}|${HTTP}|${PAGES}|^node_modules/fastify/|^node_modules/@fastify/`),
    forbid('services-no-sql', 'services use store interfaces, never a store implementation or the driver', SERVICES, `${PG_STORES}|${DB}`),
    forbid('grants-below-services', 'grants never import services: what both need moves down', GRANTS, `${SERVICES}|${ROUTES}|${HTTP}|${PAGES}|${PG_STORES}|${DB}`),
    forbid('tokens-below-grants', 'tokens depend on store interfaces at most', TOKENS, `${SERVICES}|${GRANTS}|${ROUTES}|${HTTP}|${PAGES}|${PG_STORES}`),
    forbid('store-interfaces-below-tokens', 'store interfaces know no tokens, services or HTTP', '^src/stores/', `${TOKENS}|${SERVICES}|${GRANTS}|${ROUTES}|${HTTP}|${PAGES}`),
    forbid('pages-render-only', 'pages render page models; they reach no stores, SQL or HTTP', PAGES, `^src/stores/|${DB}|${ROUTES}|${HTTP}|${GRANTS}`),
    forbid('observe-below-everything', 'audit events and metrics are called from every layer and call none', OBSERVE, `${ROUTES}|${HTTP}|${PAGES}|${SERVICES}|${GRANTS}|${TOKENS}|^src/stores/|${DB}`),
    forbid('http-glue-no-sql', 'HTTP glue uses store interfaces, never SQL', HTTP, `${PG_STORES}|${DB}|${ROUTES}`),
    forbid('only-roots-wire-postgres', 'only the composition roots import concrete stores', `^src/(?!app\\.ts|main\\.ts|cli\\.ts|cli/|seed/|stores/postgres/|db/)`, PG_STORES),
    { name: 'no-circular', severity: 'error', from: { path: '^src/' }, to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } } },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'], extensions: ['.ts', '.js'] },
  },
}
