// authz providers list: the upstream OpenID Connect providers of the seed file (identityProviders),
// with the URIs to register at each. The client secret is never printed, only whether there is one.
import { createPgIdentityProviderStore } from '../stores/identity-providers.postgres.js'
import { commandGroup, parse, table, UsageError, type CliContext } from './context.js'

const usage = `Usage: authz providers list [--json]

list   every identity provider: scheme, whether it is enabled, its display name and authority,
       and the redirect URI to register at the upstream ({ISSUER}/federation/{scheme}/signin).
       They are configured in the seed file (identityProviders); see docs/federation.md.

Options:
  --json   list as JSON (with the post-logout redirect URI and the back-channel logout URI)
  --help   show this help`

async function list(args: string[], ctx: CliContext) {
  const { values, positionals } = parse(args, { json: { type: 'boolean' } }, usage)
  if (positionals.length > 0) throw new UsageError('list takes no arguments', usage)
  const providers = await createPgIdentityProviderStore(await ctx.db()).list()
  const issuer = ctx.config().issuer
  const uri = (scheme: string, what: string) => `${issuer}/federation/${encodeURIComponent(scheme)}/${what}`
  if (values.json) {
    const out = providers.map((p) => ({
      scheme: p.scheme,
      displayName: p.displayName,
      type: p.type,
      authority: p.authority,
      clientId: p.clientId,
      hasClientSecret: p.clientSecret !== undefined,
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
})
