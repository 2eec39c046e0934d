// authz ciba list | approve REQUEST_ID | deny REQUEST_ID: operators (and tests) answer CIBA
// requests without the approval page. Same single-statement decision as the page: only a
// pending, unexpired request changes.
import { createPgCibaRequestStore } from '../stores/ciba-requests.postgres.js'
import { createPgUserStore } from '../stores/users.postgres.js'
import { CliError, parse, table, UsageError, commandGroup, type CliContext } from './context.js'

const usage = `Usage: authz ciba list [--json]
       authz ciba approve REQUEST_ID
       authz ciba deny REQUEST_ID

list     pending, unexpired CIBA requests (oldest first, at most 1000)
approve  approve a pending request with all the scopes it asked for (auth_time = now)
deny     deny a pending request; the client's next poll gets access_denied

REQUEST_ID is the id in the approval URL (/ciba/approve?request=REQUEST_ID), not the auth_req_id.

Options:
  --json   list as JSON lines
  --help   show this help`

async function list(args: string[], ctx: CliContext) {
  const { values, positionals } = parse(args, { json: { type: 'boolean' } }, usage)
  if (positionals.length > 0) throw new UsageError('list takes no arguments', usage)
  const db = await ctx.db()
  const requests = await createPgCibaRequestStore(db).listPending(ctx.clock.now(), 1000)
  // Who is asked, by username: what an operator knows people by.
  const users = createPgUserStore(db)
  const usernames = new Map<string, string | undefined>()
  for (const s of new Set(requests.map((r) => r.subjectId))) usernames.set(s, (await users.findBySubjectId(s))?.username)
  if (values.json) {
    for (const r of requests) {
      ctx.out(
        JSON.stringify({
          request_id: r.id,
          client_id: r.clientId,
          subject: r.subjectId,
          username: usernames.get(r.subjectId) ?? null,
          scopes: r.requestedScopes,
          binding_message: r.bindingMessage ?? null,
          created_at: new Date(r.createdAt).toISOString(),
          expires_at: new Date(r.expiresAt).toISOString(),
        }),
      )
    }
    return
  }
  if (requests.length === 0) return ctx.out('no pending CIBA requests')
  const rows = requests.map((r) => [
    r.id,
    r.clientId,
    usernames.get(r.subjectId) ?? '-',
    r.subjectId,
    new Date(r.expiresAt).toISOString(),
    r.requestedScopes.join(' '),
    r.bindingMessage ?? '',
  ])
  for (const line of table(['REQUEST_ID', 'CLIENT', 'USER', 'SUBJECT', 'EXPIRES', 'SCOPES', 'BINDING_MESSAGE'], rows)) ctx.out(line)
}

async function decide(decision: 'approve' | 'deny', args: string[], ctx: CliContext) {
  const { positionals } = parse(args, {}, usage)
  const [id, ...rest] = positionals
  if (!id || rest.length > 0) throw new UsageError('expected exactly one REQUEST_ID', usage)
  const store = createPgCibaRequestStore(await ctx.db())
  const req = await store.findById(id)
  if (!req) throw new CliError(`no CIBA request "${id}"`)
  const now = ctx.clock.now()
  const done = await store.decide(
    id,
    decision === 'approve' ? { status: 'approved', approvedScopes: req.requestedScopes, authTime: now } : { status: 'denied' },
    now,
  )
  if (!done) {
    throw new CliError(req.status !== 'pending' ? `request "${id}" was already ${req.status}` : `request "${id}" has expired`)
  }
  ctx.out(`${done.status} request "${id}" (client ${done.clientId}, subject ${done.subjectId})`)
}

export const cibaCommand = commandGroup({
  name: 'ciba',
  summary: 'list pending CIBA requests, approve or deny one',
  usage,
  subcommands: { list, approve: (args, ctx) => decide('approve', args, ctx), deny: (args, ctx) => decide('deny', args, ctx) },
})
