// authz registration-tokens create|list|revoke: the initial access tokens that REGISTRATION=token
// requires of a registration (RFC 7591 §3). A token is printed once, when it is made, and stored
// only as its SHA-256; it works until it expires, is revoked, or has made its registrations.
import { randomBytes } from 'node:crypto'
import type { RegistrationTokenView } from '../admin/registration-tokens.js'
import { tokenState } from '../admin/registration-tokens.js'
import { ADMIN_REGISTRATION_TOKENS_PATH } from '../endpoints.js'
import { createPgRegistrationTokenStore } from '../stores/client-registrations.postgres.js'
import { newHandle } from '../tokens/handles.js'
import { listAll, seg, unexpected, type AdminApi } from './admin-api.js'
import { CliError, commandGroup, parse, table, UsageError, type CliContext, type RemoteSubcommand } from './context.js'

const DAY = 86_400

const usage = `Usage: authz registration-tokens create [--expires-in SECONDS] [--max-uses N] [--description TEXT]
       authz registration-tokens list [--json]
       authz registration-tokens revoke TOKEN_ID

create   make an initial access token for Dynamic Client Registration (REGISTRATION=token) and
         print it, once: it is stored only as a hash
list     every token: its id, when it expires, how often it was used, whether it is revoked
revoke   stop a token from registering any more clients (clients it registered stay)

Options:
  --expires-in SECONDS  how long the token works (default ${7 * DAY}: 7 days; at most ${365 * DAY})
  --max-uses N          how many clients it may register (default: any number until it expires)
  --description TEXT    a note for the list (who it was given to)
  --json                list as JSON
  --help                show this help`

function wholeNumber(value: string | undefined, name: string, min: number, max: number): number | undefined {
  if (value === undefined) return undefined
  if (!/^\d{1,9}$/.test(value) || Number(value) < min || Number(value) > max) {
    throw new UsageError(`${name} must be a whole number from ${min} to ${max}`, usage)
  }
  return Number(value)
}

interface CreateArgs {
  expiresIn: number
  maxUses: number | undefined
  description: string | undefined
}

function createArgs(args: string[]): CreateArgs {
  const { values, positionals } = parse(
    args,
    { 'expires-in': { type: 'string' }, 'max-uses': { type: 'string' }, description: { type: 'string' } },
    usage,
  )
  if (positionals.length > 0) throw new UsageError('create takes no arguments', usage)
  const expiresIn = wholeNumber(values['expires-in'], '--expires-in', 1, 365 * DAY) ?? 7 * DAY
  const maxUses = wholeNumber(values['max-uses'], '--max-uses', 1, 1_000_000)
  const description = values.description
  if (description !== undefined && (description.length > 200 || /\p{Cc}/u.test(description))) {
    throw new UsageError('--description must be at most 200 characters without control characters', usage)
  }
  return { expiresIn, maxUses, description }
}

function printCreated(ctx: CliContext, made: { id: string; expiresAt: number; maxUses: number | undefined; token: string }) {
  ctx.out(`id: ${made.id}`)
  ctx.out(`expires: ${new Date(made.expiresAt).toISOString()}`)
  ctx.out(`max uses: ${made.maxUses ?? 'any'}`)
  ctx.out(`token: ${made.token}`)
  ctx.err('The token is shown only now: send it as "Authorization: Bearer TOKEN" to POST /connect/register.')
}

async function create(args: string[], ctx: CliContext) {
  const { expiresIn, maxUses, description } = createArgs(args)
  const id = randomBytes(6).toString('hex')
  const token = newHandle()
  const now = ctx.clock.now()
  await createPgRegistrationTokenStore(await ctx.db()).create({
    id,
    token,
    createdAt: now,
    expiresAt: now + expiresIn * 1000,
    ...(maxUses !== undefined ? { maxUses } : {}),
    ...(description !== undefined ? { description } : {}),
  })
  printCreated(ctx, { id, expiresAt: now + expiresIn * 1000, maxUses, token })
}

function listArgs(args: string[]): { json: boolean } {
  const { values, positionals } = parse(args, { json: { type: 'boolean' } }, usage)
  if (positionals.length > 0) throw new UsageError('list takes no arguments', usage)
  return { json: values.json === true }
}

/** The tokens as the database and the admin API have them alike (src/admin/registration-tokens.ts). */
function printList(ctx: CliContext, tokens: RegistrationTokenView[], json: boolean) {
  if (json) {
    const out = tokens.map((t) => ({
      id: t.id,
      state: t.state,
      description: t.description ?? null,
      createdAt: t.createdAt,
      expiresAt: t.expiresAt,
      uses: t.uses,
      maxUses: t.maxUses ?? null,
      revokedAt: t.revokedAt ?? null,
    }))
    return ctx.out(JSON.stringify(out, null, 2))
  }
  if (tokens.length === 0) return ctx.out('no registration tokens (make one with: authz registration-tokens create)')
  const rows = tokens.map((t) => [t.id, t.state, t.expiresAt, `${t.uses}/${t.maxUses ?? 'any'}`, t.description ?? ''])
  table(['ID', 'STATE', 'EXPIRES', 'USES', 'DESCRIPTION'], rows).forEach((l) => ctx.out(l))
}

async function list(args: string[], ctx: CliContext) {
  const { json } = listArgs(args)
  const tokens = await createPgRegistrationTokenStore(await ctx.db()).list()
  const now = ctx.clock.now()
  const iso = (ms: number) => new Date(ms).toISOString()
  printList(
    ctx,
    tokens.map((t) => ({
      id: t.id,
      state: tokenState(t, now),
      ...(t.description !== undefined ? { description: t.description } : {}),
      createdAt: iso(t.createdAt),
      expiresAt: iso(t.expiresAt),
      uses: t.uses,
      ...(t.maxUses !== undefined ? { maxUses: t.maxUses } : {}),
      ...(t.revokedAt !== undefined ? { revokedAt: iso(t.revokedAt) } : {}),
    })),
    json,
  )
}

function revokeArgs(args: string[]): string {
  const { positionals } = parse(args, {}, usage)
  if (positionals.length !== 1) throw new UsageError('revoke takes one TOKEN_ID', usage)
  return positionals[0]!
}

const notRevocable = (id: string) => new CliError(`no registration token "${id}" that is not revoked already`)

async function revoke(args: string[], ctx: CliContext) {
  const id = revokeArgs(args)
  if (!(await createPgRegistrationTokenStore(await ctx.db()).revoke(id, ctx.clock.now()))) throw notRevocable(id)
  ctx.out(`revoked registration token "${id}"`)
}

// Through the running server's admin API (src/cli/admin-api.ts): the same arguments, checks and output.

const remoteCreate: RemoteSubcommand = async (args, ctx, api) => {
  const { expiresIn, maxUses, description } = createArgs(args)
  const body = { expiresIn, ...(maxUses !== undefined ? { maxUses } : {}), ...(description !== undefined ? { description } : {}) }
  const answer = await api.call('POST', ADMIN_REGISTRATION_TOKENS_PATH, { body })
  if (answer.status !== 201) throw unexpected(answer)
  const made = answer.body as RegistrationTokenView & { token: string }
  printCreated(ctx, { id: made.id, expiresAt: Date.parse(made.expiresAt), maxUses: made.maxUses, token: made.token })
}

const remoteList: RemoteSubcommand = async (args, ctx, api) => {
  const { json } = listArgs(args)
  printList(ctx, await listAll<RegistrationTokenView>(api, ADMIN_REGISTRATION_TOKENS_PATH), json)
}

async function remoteRevoke(args: string[], ctx: CliContext, api: AdminApi) {
  const id = revokeArgs(args)
  const answer = await api.call('POST', `${ADMIN_REGISTRATION_TOKENS_PATH}/${seg(id)}/revoke`)
  if (answer.status === 404 || answer.status === 409) throw notRevocable(id)
  if (answer.status !== 200) throw unexpected(answer)
  ctx.out(`revoked registration token "${id}"`)
}

export const registrationTokensCommand = commandGroup({
  name: 'registration-tokens',
  summary: 'create, list and revoke initial access tokens for client registration',
  usage,
  subcommands: { create, list, revoke },
  remote: { create: remoteCreate, list: remoteList, revoke: remoteRevoke },
})
