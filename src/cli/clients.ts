// authz clients list|show|add|disable|enable|remove|add-secret. Secret hashes are never printed:
// a hash of a weak secret can be brute-forced offline.
import { randomBytes } from 'node:crypto'
import type { Client } from '../domain/types.js'
import { ADMIN_CLIENTS_PATH } from '../endpoints.js'
import { applySeed } from '../seed/apply.js'
import { SeedError } from '../seed/errors.js'
import { createPgClientStore } from '../stores/clients.postgres.js'
import { secretHash } from '../tokens/handles.js'
import { changedMeanwhile, errorsOf, listAll, seedLines, seg, unexpected, type AdminApi } from './admin-api.js'
import {
  CliError,
  isoOrNull,
  parse,
  table,
  UsageError,
  commandGroup,
  type CliContext,
  type RemoteSubcommand,
  type Subcommand,
} from './context.js'

const usage = `Usage: authz clients list [--json]
       authz clients show CLIENT_ID [--json]
       authz clients add CLIENT_ID [--name NAME] [--grant TYPE]... [--scope SCOPE]... [--public]
                         [--token-type jwt|reference] [--redirect-uri URI]... [--offline-access]
       authz clients disable CLIENT_ID
       authz clients enable CLIENT_ID
       authz clients remove CLIENT_ID
       authz clients add-secret CLIENT_ID [--expires ISO_DATE] [--description TEXT]

  list         all clients, one per line (SELF-REGISTERED: registered through POST /connect/register)
  show         one client's settings (secrets by expiry and description; hashes are never shown)
  add          create a client; unless --public, generate its secret and print it once on stdout
               (every other setting: a seed file, see authz seed --schema)
  disable      refuse the client's requests from now on (its stored settings are kept)
  enable       accept them again
  remove       delete a client and its secrets
  add-secret   generate a strong secret (32 random bytes, base64url), store only its hash and
               print the secret once on stdout

Options:
  --json            machine-readable output (list, show)
  --name            the name people see (clientName)
  --grant           an allowed grant type, repeatable; default client_credentials
  --scope           an allowed scope, repeatable (it must exist: API scopes and identity resources)
  --public          a public client: no secret
  --token-type      jwt (default) or reference access tokens
  --redirect-uri    an allowed redirect URI, repeatable; required with --grant authorization_code;
                    https, http only for localhost, 127.0.0.1 or [::1], or a native app's
                    private-use scheme such as com.example.app:/callback
  --offline-access  may receive refresh tokens (offline_access)
  --expires         the secret's expiry, e.g. 2030-01-01T00:00:00Z
  --description     a note stored with the secret
  --help            show this help`

/** The client as printed: secret hashes left out, absent values as null. */
function toJson(c: Client) {
  const { secrets, ...rest } = c
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(rest)) out[k] = v ?? null
  out.secrets = secrets.map((s) => ({ expiresAt: isoOrNull(s.expiresAt), description: s.description ?? null }))
  return out
}

function one(positionals: string[], what: string): string {
  const [id, ...rest] = positionals
  if (!id || rest.length > 0) throw new UsageError(`expected exactly one ${what}`, usage)
  return id
}

async function list(args: string[], ctx: CliContext) {
  const { values, positionals } = parse(args, { json: { type: 'boolean' } }, usage)
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`, usage)
  printList(ctx, await createPgClientStore(await ctx.db()).list(), values.json)
}

function printList(ctx: CliContext, clients: Client[], json: boolean | undefined) {
  if (json) return ctx.out(JSON.stringify(clients.map(toJson), null, 2))
  if (clients.length === 0) return ctx.out('no clients')
  // A client a stranger registered (RFC 7591) is removed when idle and nobody vouches for it.
  const rows = clients.map((c) => [
    c.clientId,
    c.enabled ? 'yes' : 'no',
    c.selfRegistered ? 'yes' : 'no',
    String(c.secrets.length),
    c.allowedGrantTypes.join(' '),
    c.allowedScopes.join(' '),
  ])
  table(['CLIENT ID', 'ENABLED', 'SELF-REGISTERED', 'SECRETS', 'GRANT TYPES', 'SCOPES'], rows).forEach((l) => ctx.out(l))
}

async function show(args: string[], ctx: CliContext) {
  const { values, positionals } = parse(args, { json: { type: 'boolean' } }, usage)
  const id = one(positionals, 'CLIENT_ID')
  const client = await createPgClientStore(await ctx.db()).findById(id)
  if (!client) throw new CliError(`no client "${id}"`)
  printOne(ctx, client, values.json)
}

function printOne(ctx: CliContext, client: Client, asJson: boolean | undefined) {
  const json = toJson(client)
  if (asJson) return ctx.out(JSON.stringify(json, null, 2))
  for (const [k, v] of Object.entries(json)) {
    if (k === 'secrets') continue
    ctx.out(`${k}: ${Array.isArray(v) ? v.join(' ') : typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v)}`)
  }
  ctx.out(`secrets: ${client.secrets.length}`)
  client.secrets.forEach((s, i) =>
    ctx.out(`  ${i + 1}. expires ${isoOrNull(s.expiresAt) ?? 'never'}${s.description ? ` (${s.description})` : ''}`),
  )
}

async function remove(args: string[], ctx: CliContext) {
  const id = one(parse(args, {}, usage).positionals, 'CLIENT_ID')
  if (!(await createPgClientStore(await ctx.db()).remove(id))) throw new CliError(`no client "${id}"`)
  ctx.out(`removed client "${id}"`)
}

async function addSecret(args: string[], ctx: CliContext) {
  const { id, expiresAt, description } = secretArgs(args, ctx)
  const secret = randomBytes(32).toString('base64url')
  const added = await createPgClientStore(await ctx.db()).addSecret(id, {
    valueHash: secretHash(secret),
    ...(expiresAt !== undefined ? { expiresAt } : {}),
    ...(description !== undefined ? { description } : {}),
  })
  if (!added) throw new CliError(`no client "${id}"`)
  printSecret(ctx, id, secret)
}

function secretArgs(args: string[], ctx: CliContext) {
  const { values, positionals } = parse(args, { expires: { type: 'string' }, description: { type: 'string' } }, usage)
  const id = one(positionals, 'CLIENT_ID')
  let expiresAt: number | undefined
  if (values.expires !== undefined) {
    expiresAt = Date.parse(values.expires)
    if (!/^\d{4}-\d{2}-\d{2}/.test(values.expires) || Number.isNaN(expiresAt))
      throw new CliError(`--expires: not an ISO 8601 date: ${values.expires}`)
    if (expiresAt <= ctx.clock.now()) throw new CliError('--expires: the date is in the past')
  }
  return { id, expiresAt, description: values.description }
}

function printSecret(ctx: CliContext, id: string, secret: string) {
  // The secret alone on stdout (SECRET=$(authz clients add-secret …)); the notice on stderr.
  ctx.err(`new secret for client "${id}" (shown once; only its hash is stored):`)
  ctx.out(secret)
}

const ADD_OPTIONS = {
  name: { type: 'string' },
  grant: { type: 'string', multiple: true },
  scope: { type: 'string', multiple: true },
  public: { type: 'boolean' },
  'token-type': { type: 'string' },
  'redirect-uri': { type: 'string', multiple: true },
  'offline-access': { type: 'boolean' },
} as const

/** The seed file client `add` creates, and its secret (none for a public client). */
function newClient(args: string[]) {
  const { values, positionals } = parse(args, ADD_OPTIONS, usage)
  const id = one(positionals, 'CLIENT_ID')
  const tokenType = values['token-type'] ?? 'jwt'
  if (tokenType !== 'jwt' && tokenType !== 'reference') throw new UsageError('--token-type must be jwt or reference', usage)
  // The seed rules refuse it too; said here in the command's own terms.
  if (values.grant?.includes('authorization_code') && !values['redirect-uri']?.length) {
    throw new UsageError('--grant authorization_code needs at least one --redirect-uri (the exact redirect_uri the app sends)', usage)
  }
  const secret = values.public ? undefined : randomBytes(32).toString('base64url')
  const client = {
    clientId: id,
    ...(values.name !== undefined ? { clientName: values.name } : {}),
    allowedGrantTypes: values.grant ?? ['client_credentials'],
    allowedScopes: values.scope ?? [],
    requireClientSecret: !values.public,
    secrets: secret ? [{ value: secret }] : [],
    accessTokenType: tokenType,
    redirectUris: values['redirect-uri'] ?? [],
    allowOfflineAccess: values['offline-access'] ?? false,
  }
  return { id, client, secret }
}

const exists = (id: string) => new CliError(`client "${id}" exists: change it with a seed file (authz seed FILE)`)
const cannotAdd = (id: string) => `cannot add client "${id}"`

function printAdded(ctx: CliContext, id: string, secret: string | undefined) {
  if (!secret) return ctx.out(`created public client "${id}"`)
  ctx.err(`created client "${id}"; its secret (shown once; only its hash is stored):`)
  ctx.out(secret)
}

async function add(args: string[], ctx: CliContext) {
  const { id, client, secret } = newClient(args)
  const db = await ctx.db()
  if (await createPgClientStore(db).findById(id)) throw exists(id)
  // The seed file's validation and upsert: one set of rules for both ways of adding a client.
  await applySeed(db, { clients: [client] }, cannotAdd(id))
  printAdded(ctx, id, secret)
}

async function setEnabled(enabled: boolean, args: string[], ctx: CliContext) {
  const id = one(parse(args, {}, usage).positionals, 'CLIENT_ID')
  if (!(await createPgClientStore(await ctx.db()).setEnabled(id, enabled))) throw new CliError(`no client "${id}"`)
  ctx.out(`${enabled ? 'enabled' : 'disabled'} client "${id}"`)
}

// Through the running server's admin API (src/cli/admin-api.ts): the same arguments, checks and output.

const noClient = (id: string) => new CliError(`no client "${id}"`)
const clientPath = (id: string) => `${ADMIN_CLIENTS_PATH}/${seg(id)}`

/** Client's members in the order its store builds them: the order `show` and --json print them in. */
// In the order the store reads them (src/stores/clients.postgres.ts toClient), so that both forms print alike.
const CLIENT_MEMBERS = {
  clientId: 0,
  clientName: 0,
  enabled: 0,
  secrets: 0,
  requireClientSecret: 0,
  allowedGrantTypes: 0,
  allowedScopes: 0,
  redirectUris: 0,
  postLogoutRedirectUris: 0,
  requirePkce: 0,
  requireDPoP: 0,
  allowOfflineAccess: 0,
  accessTokenType: 0,
  accessTokenLifetime: 0,
  refreshTokenUsage: 0,
  refreshTokenExpiration: 0,
  absoluteRefreshTokenLifetime: 0,
  slidingRefreshTokenLifetime: 0,
  cibaLifetime: 0,
  pollingInterval: 0,
  identityProviderRestrictions: 0,
  enableLocalLogin: 0,
  allowedTenants: 0,
  requireMfa: 0,
  allowedCorsOrigins: 0,
  allowedSubjectTokenClients: 0,
  allowedExchangeAudiences: 0,
  backChannelLogoutUri: 0,
  backChannelLogoutSessionRequired: 0,
  requireConsent: 0,
  alwaysIncludeUserClaimsInIdToken: 0,
  jwks: 0,
  jwksUri: 0,
  tokenEndpointAuthMethod: 0,
  backchannelTokenDeliveryMode: 0,
  backchannelClientNotificationEndpoint: 0,
  selfRegistered: 0,
  requirePushedAuthorization: 0,
  requireRequestObject: 0,
  profile: 0,
} satisfies Record<keyof Client, 0>

type SecretInfo = { expiration?: string; description?: string }

/** The client as the admin API answers it, with its secrets' expiry and note (a hash is never answered, nor printed). */
function fromAdmin(view: Record<string, unknown>, secrets: SecretInfo[]): Client {
  const client = Object.fromEntries(Object.keys(CLIENT_MEMBERS).map((k) => [k, view[k]])) as unknown as Client
  client.secrets = secrets.map((s) => ({
    valueHash: '',
    expiresAt: s.expiration === undefined ? undefined : Date.parse(s.expiration),
    description: s.description,
  }))
  return client
}

async function fetchClient(api: AdminApi, id: string, view?: Record<string, unknown>): Promise<Client | undefined> {
  if (!view) {
    const answer = await api.call('GET', clientPath(id))
    if (answer.status === 404) return undefined
    if (answer.status !== 200) throw unexpected(answer)
    view = answer.body as Record<string, unknown>
  }
  const secrets = await api.call('GET', `${clientPath(id)}/secrets`)
  if (secrets.status === 404) return undefined
  if (secrets.status !== 200) throw unexpected(secrets)
  return fromAdmin(view, (secrets.body as { items: SecretInfo[] }).items)
}

const remoteList: RemoteSubcommand = async (args, ctx, api) => {
  const { values, positionals } = parse(args, { json: { type: 'boolean' } }, usage)
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`, usage)
  const clients: Client[] = []
  for (const view of await listAll<Record<string, unknown>>(api, ADMIN_CLIENTS_PATH)) {
    const client = await fetchClient(api, String(view.clientId), view)
    if (client) clients.push(client) // one removed meanwhile is gone from the list
  }
  printList(ctx, clients, values.json)
}

const remoteShow: RemoteSubcommand = async (args, ctx, api) => {
  const { values, positionals } = parse(args, { json: { type: 'boolean' } }, usage)
  const id = one(positionals, 'CLIENT_ID')
  const client = await fetchClient(api, id)
  if (!client) throw noClient(id)
  printOne(ctx, client, values.json)
}

const remoteAdd: RemoteSubcommand = async (args, ctx, api) => {
  const { id, client, secret } = newClient(args)
  const found = await api.call('GET', clientPath(id))
  if (found.status === 200) throw exists(id)
  if (found.status !== 404) throw unexpected(found)
  const put = await api.call('PUT', clientPath(id), { body: client, ifNoneMatch: '*' })
  if (put.status === 412) throw exists(id)
  // The server's seed rules, with the paths of the seed document the database form checks.
  if (put.status === 400) throw new SeedError(seedLines(errorsOf(put), 'clients[0]'), cannotAdd(id))
  if (put.status !== 201) throw unexpected(put)
  printAdded(ctx, id, secret)
}

async function remoteSetEnabled(enabled: boolean, args: string[], ctx: CliContext, api: AdminApi) {
  const id = one(parse(args, {}, usage).positionals, 'CLIENT_ID')
  const found = await api.call('GET', clientPath(id))
  if (found.status === 404) throw noClient(id)
  if (found.status !== 200) throw unexpected(found)
  const put = await api.call('PUT', clientPath(id), { body: { ...(found.body as object), enabled }, ifMatch: found.etag })
  if (put.status === 412 || put.status === 404) throw changedMeanwhile(`client "${id}"`)
  if (put.status !== 200) throw unexpected(put)
  ctx.out(`${enabled ? 'enabled' : 'disabled'} client "${id}"`)
}

const remoteRemove: RemoteSubcommand = async (args, ctx, api) => {
  const id = one(parse(args, {}, usage).positionals, 'CLIENT_ID')
  const answer = await api.call('DELETE', clientPath(id))
  if (answer.status === 404) throw noClient(id)
  if (answer.status !== 204) throw unexpected(answer)
  ctx.out(`removed client "${id}"`)
}

const remoteAddSecret: RemoteSubcommand = async (args, ctx, api) => {
  const { id, expiresAt, description } = secretArgs(args, ctx)
  const body = {
    ...(expiresAt !== undefined ? { expiration: new Date(expiresAt).toISOString() } : {}),
    ...(description !== undefined ? { description } : {}),
  }
  const answer = await api.call('POST', `${clientPath(id)}/secrets`, { body })
  if (answer.status === 404) throw noClient(id)
  if (answer.status !== 201) throw unexpected(answer)
  printSecret(ctx, id, (answer.body as { value: string }).value)
}

const SUBCOMMANDS: Record<string, Subcommand> = {
  list,
  show,
  add,
  disable: (args, ctx) => setEnabled(false, args, ctx),
  enable: (args, ctx) => setEnabled(true, args, ctx),
  remove,
  'add-secret': addSecret,
}

export const clientsCommand = commandGroup({
  name: 'clients',
  summary: 'list, show, add, disable, enable and remove clients; add a generated secret',
  usage,
  subcommands: SUBCOMMANDS,
  remote: {
    list: remoteList,
    show: remoteShow,
    add: remoteAdd,
    disable: (args, ctx, api) => remoteSetEnabled(false, args, ctx, api),
    enable: (args, ctx, api) => remoteSetEnabled(true, args, ctx, api),
    remove: remoteRemove,
    'add-secret': remoteAddSecret,
  },
})
