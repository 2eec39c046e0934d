// authz ciba list | approve REQUEST_ID | deny REQUEST_ID: operators (and tests) answer CIBA
// requests without the approval page. Same single-statement decision as the page: only a
// pending, unexpired request changes.
import { MAX_LIMIT } from '../admin/paging.js'
import { ADMIN_CIBA_REQUESTS_PATH } from '../endpoints.js'
import { decideCibaRequest, openCibaRequest } from '../grants/ciba-decision.js'
import { createPgCibaRequestStore } from '../stores/ciba-requests.postgres.js'
import { createPgUserStore } from '../stores/users.postgres.js'
import { detailOf, seg, unexpected, type AdminApi } from './admin-api.js'
import { CliError, parse, table, UsageError, commandGroup, type CliContext, type RemoteSubcommand } from './context.js'

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

/** A request as the list shows it, read from the database or from the server's admin API. */
interface Listed {
  id: string
  clientId: string
  subjectId: string
  username: string | undefined
  scopes: string[]
  bindingMessage: string | undefined
  createdAt: number
  expiresAt: number
}

/** At most this many are listed, oldest first. */
const LIST_MAX = 1000

function listArgs(args: string[]): { json: boolean } {
  const { values, positionals } = parse(args, { json: { type: 'boolean' } }, usage)
  if (positionals.length > 0) throw new UsageError('list takes no arguments', usage)
  return { json: values.json === true }
}

function printList(ctx: CliContext, requests: Listed[], json: boolean) {
  if (json) {
    for (const r of requests) {
      ctx.out(
        JSON.stringify({
          request_id: r.id,
          client_id: r.clientId,
          subject: r.subjectId,
          username: r.username ?? null,
          scopes: r.scopes,
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
    r.username ?? '-',
    r.subjectId,
    new Date(r.expiresAt).toISOString(),
    r.scopes.join(' '),
    r.bindingMessage ?? '',
  ])
  for (const line of table(['REQUEST_ID', 'CLIENT', 'USER', 'SUBJECT', 'EXPIRES', 'SCOPES', 'BINDING_MESSAGE'], rows)) ctx.out(line)
}

async function list(args: string[], ctx: CliContext) {
  const { json } = listArgs(args)
  const db = await ctx.db()
  const requests = await createPgCibaRequestStore(db).listPending(ctx.clock.now(), LIST_MAX)
  // Who is asked, by username: what an operator knows people by.
  const users = createPgUserStore(db)
  const usernames = new Map<string, string | undefined>()
  for (const s of new Set(requests.map((r) => r.subjectId))) usernames.set(s, (await users.findBySubjectId(s))?.username)
  printList(
    ctx,
    requests.map((r) => ({
      id: r.id,
      clientId: r.clientId,
      subjectId: r.subjectId,
      username: usernames.get(r.subjectId),
      scopes: r.requestedScopes,
      bindingMessage: r.bindingMessage,
      createdAt: r.createdAt,
      expiresAt: r.expiresAt,
    })),
    json,
  )
}

function decideArgs(args: string[]): string {
  const { positionals } = parse(args, {}, usage)
  const [id, ...rest] = positionals
  if (!id || rest.length > 0) throw new UsageError('expected exactly one REQUEST_ID', usage)
  return id
}

const printDecided = (ctx: CliContext, id: string, r: { status: string; clientId: string; subjectId: string }) =>
  ctx.out(`${r.status} request "${id}" (client ${r.clientId}, subject ${r.subjectId})`)

async function decide(decision: 'approve' | 'deny', args: string[], ctx: CliContext) {
  const id = decideArgs(args)
  // The rule the approval page and the admin API follow (src/grants/ciba-decision.ts): an
  // operator's approval grants every requested scope, with auth_time now.
  const deps = { clock: ctx.clock, requests: createPgCibaRequestStore(await ctx.db()) }
  const opened = await openCibaRequest(deps, id)
  const done = 'id' in opened ? await decideCibaRequest(deps, opened, decision, { signIn: { authTime: ctx.clock.now() } }) : opened
  if (done.kind === 'unknown') throw new CliError(`no CIBA request "${id}"`)
  if (done.kind === 'expired') throw new CliError(`request "${id}" has expired`)
  if (done.kind === 'decided') throw new CliError(`request "${id}" was already ${done.status}`)
  printDecided(ctx, id, done.request)
}

// Through the running server's admin API (src/cli/admin-api.ts): the same arguments, checks and output.

type RemoteRequest = Omit<Listed, 'id' | 'scopes' | 'createdAt' | 'expiresAt'> & {
  requestId: string
  status: string
  requestedScopes: string[]
  createdAt: string
  expiresAt: string
}

const remoteList: RemoteSubcommand = async (args, ctx, api) => {
  const { json } = listArgs(args)
  const found: RemoteRequest[] = []
  let cursor: string | undefined
  do {
    const query = `status=pending&limit=${Math.min(MAX_LIMIT, LIST_MAX - found.length)}${cursor ? `&cursor=${cursor}` : ''}`
    const answer = await api.call('GET', `${ADMIN_CIBA_REQUESTS_PATH}?${query}`)
    if (answer.status !== 200) throw unexpected(answer)
    const page = answer.body as { items: RemoteRequest[]; nextCursor?: string }
    found.push(...page.items)
    cursor = page.nextCursor
  } while (cursor !== undefined && found.length < LIST_MAX)
  printList(
    ctx,
    found.map((r) => ({
      id: r.requestId,
      clientId: r.clientId,
      subjectId: r.subjectId,
      username: r.username,
      scopes: r.requestedScopes,
      bindingMessage: r.bindingMessage,
      createdAt: Date.parse(r.createdAt),
      expiresAt: Date.parse(r.expiresAt),
    })),
    json,
  )
}

async function remoteDecide(decision: 'approve' | 'deny', args: string[], ctx: CliContext, api: AdminApi) {
  const id = decideArgs(args)
  const answer = await api.call('POST', `${ADMIN_CIBA_REQUESTS_PATH}/${seg(id)}/${decision}`)
  if (answer.status === 404) throw new CliError(`no CIBA request "${id}"`)
  if (answer.status === 409) {
    // src/admin/ciba.ts names why: "has expired" or "was already approved|denied".
    const already = /was already (approved|denied)$/.exec(detailOf(answer) ?? '')
    throw new CliError(already ? `request "${id}" was already ${already[1]}` : `request "${id}" has expired`)
  }
  if (answer.status !== 200) throw unexpected(answer)
  printDecided(ctx, id, answer.body as RemoteRequest)
}

export const cibaCommand = commandGroup({
  name: 'ciba',
  summary: 'list pending CIBA requests, approve or deny one',
  usage,
  subcommands: { list, approve: (args, ctx) => decide('approve', args, ctx), deny: (args, ctx) => decide('deny', args, ctx) },
  remote: {
    list: remoteList,
    approve: (args, ctx, api) => remoteDecide('approve', args, ctx, api),
    deny: (args, ctx, api) => remoteDecide('deny', args, ctx, api),
  },
})
