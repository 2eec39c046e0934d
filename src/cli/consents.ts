// authz consents list USERNAME | revoke USERNAME [CLIENT_ID]: what a person has allowed which
// client (remembered consent, OpenID Connect Core §3.1.2.4), and forgetting it on their behalf.
import { ADMIN_USERS_PATH } from '../endpoints.js'
import { createConsentService, type ConsentService } from '../interaction/consent.js'
import { createPgConsentStore } from '../stores/consents.postgres.js'
import { createPgUserStore } from '../stores/users.postgres.js'
import { detailOf, listAll, seg, unexpected } from './admin-api.js'
import { CliError, parse, table, UsageError, commandGroup, type CliContext, type RemoteSubcommand } from './context.js'

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

type Listed = { clientId: string; scopes: string[]; createdAt: string; updatedAt: string }

function listArgs(args: string[]) {
  const { values, positionals } = parse(args, { json: { type: 'boolean' } }, usage)
  const [username, ...rest] = positionals
  if (!username || rest.length > 0) throw new UsageError('expected exactly one USERNAME', usage)
  return { username, json: values.json }
}

function printList(ctx: CliContext, username: string, all: Listed[], json: boolean | undefined) {
  if (json) return ctx.out(JSON.stringify(all, null, 2))
  if (all.length === 0) return ctx.out(`user "${username}" has no remembered consents`)
  const rows = all.map((c) => [c.clientId, c.updatedAt, c.scopes.join(' ')])
  table(['CLIENT', 'GRANTED', 'SCOPES'], rows).forEach((l) => ctx.out(l))
}

async function list(args: string[], ctx: CliContext) {
  const { username, json } = listArgs(args)
  const { subjectId, consents } = await open(ctx, username)
  const all = await consents.list(subjectId)
  printList(
    ctx,
    username,
    all.map((c) => ({ clientId: c.clientId, scopes: c.scopes, createdAt: iso(c.createdAt), updatedAt: iso(c.updatedAt) })),
    json,
  )
}

function revokeArgs(args: string[]) {
  const { positionals } = parse(args, {}, usage)
  const [username, clientId, ...rest] = positionals
  if (!username || rest.length > 0) throw new UsageError('expected USERNAME and at most one CLIENT_ID', usage)
  return { username, clientId }
}

const noConsent = (username: string, clientId: string) => new CliError(`user "${username}" has no consent for client "${clientId}"`)

function printRevoked(ctx: CliContext, username: string, clientId: string | undefined, n: number) {
  if (clientId !== undefined) return ctx.out(`revoked the consent of user "${username}" for client "${clientId}"`)
  ctx.out(n === 0 ? `user "${username}" has no remembered consents` : `revoked ${n} consent(s) of user "${username}"`)
}

async function revoke(args: string[], ctx: CliContext) {
  const { username, clientId } = revokeArgs(args)
  const { subjectId, consents } = await open(ctx, username)
  const n = await consents.revoke(subjectId, clientId)
  if (clientId !== undefined && n === 0) throw noConsent(username, clientId)
  printRevoked(ctx, username, clientId, n)
}

// Through the running server's admin API (src/cli/admin-api.ts): the same arguments, checks and output.

const consentsPath = (username: string) => `${ADMIN_USERS_PATH}/${seg(username)}/consents`
const noUser = (username: string) => new CliError(`no user "${username}"`)

const remoteList: RemoteSubcommand = async (args, ctx, api) => {
  const { username, json } = listArgs(args)
  printList(ctx, username, await listAll<Listed>(api, consentsPath(username), () => noUser(username)), json)
}

const remoteRevoke: RemoteSubcommand = async (args, ctx, api) => {
  const { username, clientId } = revokeArgs(args)
  const path = clientId === undefined ? consentsPath(username) : `${consentsPath(username)}/${seg(clientId)}`
  const answer = await api.call('DELETE', path)
  // 404 names what was not found (src/admin/keys-consents.ts): the user, or their consent for the client.
  if (answer.status === 404)
    throw clientId !== undefined && detailOf(answer) === 'no such consent' ? noConsent(username, clientId) : noUser(username)
  if (answer.status !== (clientId === undefined ? 200 : 204)) throw unexpected(answer)
  printRevoked(ctx, username, clientId, clientId === undefined ? (answer.body as { revoked: number }).revoked : 1)
}

export const consentsCommand = commandGroup({
  name: 'consents',
  summary: "list or revoke a user's remembered consents",
  usage,
  subcommands: { list, revoke },
  remote: { list: remoteList, revoke: remoteRevoke },
})
