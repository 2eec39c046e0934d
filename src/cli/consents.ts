// authz consents list USERNAME | revoke USERNAME [CLIENT_ID]: what a person has allowed which
// client (remembered consent, OpenID Connect Core §3.1.2.4), and forgetting it on their behalf.
import { createConsentService, type ConsentService } from '../interaction/consent.js'
import { createPgConsentStore } from '../stores/consents.postgres.js'
import { createPgUserStore } from '../stores/users.postgres.js'
import { CliError, parse, table, UsageError, commandGroup, type CliContext } from './context.js'

const usage = `Usage: authz consents list USERNAME [--json]
       authz consents revoke USERNAME [CLIENT_ID]

list     the clients USERNAME has allowed, the scopes and when they were last granted
revoke   forget USERNAME's consent for CLIENT_ID, or for every client when CLIENT_ID is
         omitted: the user is asked again the next time the client needs consent. Tokens
         already issued stay valid until they expire or are revoked.

Options:
  --json   list as JSON
  --help   show this help`

/** The user's subject id and the consent service, or a CliError naming the unknown user. */
async function open(ctx: CliContext, username: string): Promise<{ subjectId: string; consents: ConsentService }> {
  const db = await ctx.db()
  const user = await createPgUserStore(db).findByUsername(username)
  if (!user) throw new CliError(`no user "${username}"`)
  return { subjectId: user.subjectId, consents: createConsentService({ clock: ctx.clock, consents: createPgConsentStore(db) }) }
}

const iso = (ms: number) => new Date(ms).toISOString()

async function list(args: string[], ctx: CliContext) {
  const { values, positionals } = parse(args, { json: { type: 'boolean' } }, usage)
  const [username, ...rest] = positionals
  if (!username || rest.length > 0) throw new UsageError('expected exactly one USERNAME', usage)
  const { subjectId, consents } = await open(ctx, username)
  const all = await consents.list(subjectId)
  if (values.json) {
    const out = all.map((c) => ({ clientId: c.clientId, scopes: c.scopes, createdAt: iso(c.createdAt), updatedAt: iso(c.updatedAt) }))
    return ctx.out(JSON.stringify(out, null, 2))
  }
  if (all.length === 0) return ctx.out(`user "${username}" has no remembered consents`)
  const rows = all.map((c) => [c.clientId, iso(c.updatedAt), c.scopes.join(' ')])
  table(['CLIENT', 'GRANTED', 'SCOPES'], rows).forEach((l) => ctx.out(l))
}

async function revoke(args: string[], ctx: CliContext) {
  const { positionals } = parse(args, {}, usage)
  const [username, clientId, ...rest] = positionals
  if (!username || rest.length > 0) throw new UsageError('expected USERNAME and at most one CLIENT_ID', usage)
  const { subjectId, consents } = await open(ctx, username)
  const n = await consents.revoke(subjectId, clientId)
  if (clientId !== undefined) {
    if (n === 0) throw new CliError(`user "${username}" has no consent for client "${clientId}"`)
    return ctx.out(`revoked the consent of user "${username}" for client "${clientId}"`)
  }
  ctx.out(n === 0 ? `user "${username}" has no remembered consents` : `revoked ${n} consent(s) of user "${username}"`)
}

export const consentsCommand = commandGroup({
  name: 'consents',
  summary: "list or revoke a user's remembered consents",
  usage,
  subcommands: { list, revoke },
})
