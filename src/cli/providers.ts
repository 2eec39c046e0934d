// authz providers list: the upstream OpenID Connect providers of the seed file (identityProviders),
// with the URIs to register at each. The client secret is never printed, only whether there is one.
import type { IdentityProvider } from '../domain/types.js'
import { ADMIN_IDENTITY_PROVIDERS_PATH } from '../endpoints.js'
import { createPgIdentityProviderStore } from '../stores/identity-providers.postgres.js'
import { listAll, seg, unexpected } from './admin-api.js'
import { commandGroup, parse, table, UsageError, type CliContext, type RemoteSubcommand } from './context.js'

const usage = `Usage: authz providers list [--json]

list   every identity provider: scheme, whether it is enabled, its display name and authority,
       and the redirect URI to register at the upstream ({ISSUER}/federation/{scheme}/signin).
       They are configured in the seed file (identityProviders); see docs/federation.md.

Options:
  --json   list as JSON (with the post-logout redirect URI and the back-channel logout URI)
  --help   show this help`

/** A provider as both forms read it: the admin API's view, and whether a client secret is stored. */
type ProviderRow = Omit<IdentityProvider, 'clientSecret'> & { hasClientSecret: boolean }

function listArgs(args: string[]) {
  const { values, positionals } = parse(args, { json: { type: 'boolean' } }, usage)
  if (positionals.length > 0) throw new UsageError('list takes no arguments', usage)
  return values
}

async function list(args: string[], ctx: CliContext) {
  const values = listArgs(args)
  const providers = await createPgIdentityProviderStore(await ctx.db()).list()
  print(
    ctx,
    providers.map(({ clientSecret, ...p }) => ({ ...p, hasClientSecret: clientSecret !== undefined })),
    values.json,
  )
}

// Through the running server's admin API (src/cli/admin-api.ts): the same arguments and output.
const remoteList: RemoteSubcommand = async (args, ctx, api) => {
  const values = listArgs(args)
  const providers = await listAll<Omit<ProviderRow, 'hasClientSecret'>>(api, ADMIN_IDENTITY_PROVIDERS_PATH)
  const rows: ProviderRow[] = []
  for (const p of providers) {
    const secret = await api.call('GET', `${ADMIN_IDENTITY_PROVIDERS_PATH}/${seg(p.scheme)}/client-secret`)
    if (secret.status !== 200) throw unexpected(secret)
    rows.push({ ...p, hasClientSecret: (secret.body as { set: boolean }).set })
  }
  print(ctx, rows, values.json)
}

function print(ctx: CliContext, providers: ProviderRow[], json: boolean | undefined) {
  const issuer = ctx.config().issuer
  const uri = (scheme: string, what: string) => `${issuer}/federation/${encodeURIComponent(scheme)}/${what}`
  if (json) {
    const out = providers.map((p) => ({
      scheme: p.scheme,
      displayName: p.displayName,
      type: p.type,
      authority: p.authority,
      clientId: p.clientId,
      hasClientSecret: p.hasClientSecret,
      scope: p.scope,
      enabled: p.enabled,
      emailDomains: p.emailDomains,
      linkByVerifiedEmail: p.linkByVerifiedEmail,
      redirectUri: uri(p.scheme, 'signin'),
      postLogoutRedirectUri: uri(p.scheme, 'signout-callback'),
      backchannelLogoutUri: uri(p.scheme, 'backchannel-logout'),
    }))
    return ctx.out(JSON.stringify(out, null, 2))
  }
  if (providers.length === 0) return ctx.out('no identity providers (add them to the seed file: identityProviders)')
  const rows = providers.map((p) => [p.scheme, p.enabled ? 'yes' : 'no', p.displayName, p.authority, uri(p.scheme, 'signin')])
  table(['SCHEME', 'ENABLED', 'NAME', 'AUTHORITY', 'REDIRECT URI'], rows).forEach((l) => ctx.out(l))
}

export const providersCommand = commandGroup({
  name: 'providers',
  summary: 'list the upstream identity providers people may sign in through',
  usage,
  subcommands: { list },
  remote: { list: remoteList },
})
