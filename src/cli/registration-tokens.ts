// authz registration-tokens create|list|revoke: the initial access tokens that REGISTRATION=token
// requires of a registration (RFC 7591 §3). A token is printed once, when it is made, and stored
// only as its SHA-256; it works until it expires, is revoked, or has made its registrations.
import { randomBytes } from 'node:crypto'
import { createPgRegistrationTokenStore } from '../stores/client-registrations.postgres.js'
import { newHandle } from '../tokens/handles.js'
import { CliError, commandGroup, isoOrNull, parse, table, UsageError, type CliContext } from './context.js'

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

async function create(args: string[], ctx: CliContext) {
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
  ctx.out(`id: ${id}`)
  ctx.out(`expires: ${new Date(now + expiresIn * 1000).toISOString()}`)
  ctx.out(`max uses: ${maxUses ?? 'any'}`)
  ctx.out(`token: ${token}`)
  ctx.err('The token is shown only now: send it as "Authorization: Bearer TOKEN" to POST /connect/register.')
}

async function list(args: string[], ctx: CliContext) {
  const { values, positionals } = parse(args, { json: { type: 'boolean' } }, usage)
  if (positionals.length > 0) throw new UsageError('list takes no arguments', usage)
  const tokens = await createPgRegistrationTokenStore(await ctx.db()).list()
  const now = ctx.clock.now()
  const state = (t: (typeof tokens)[number]) =>
    t.revokedAt !== undefined
      ? 'revoked'
      : t.expiresAt <= now
        ? 'expired'
        : t.maxUses !== undefined && t.uses >= t.maxUses
          ? 'used up'
          : 'usable'
  if (values.json) {
    const out = tokens.map((t) => ({
      id: t.id,
      state: state(t),
      description: t.description ?? null,
      createdAt: new Date(t.createdAt).toISOString(),
      expiresAt: new Date(t.expiresAt).toISOString(),
      uses: t.uses,
      maxUses: t.maxUses ?? null,
      revokedAt: isoOrNull(t.revokedAt),
    }))
    return ctx.out(JSON.stringify(out, null, 2))
  }
  if (tokens.length === 0) return ctx.out('no registration tokens (make one with: authz registration-tokens create)')
  const rows = tokens.map((t) => [
    t.id,
    state(t),
    new Date(t.expiresAt).toISOString(),
    `${t.uses}/${t.maxUses ?? 'any'}`,
    t.description ?? '',
  ])
  table(['ID', 'STATE', 'EXPIRES', 'USES', 'DESCRIPTION'], rows).forEach((l) => ctx.out(l))
}

async function revoke(args: string[], ctx: CliContext) {
  const { positionals } = parse(args, {}, usage)
  if (positionals.length !== 1) throw new UsageError('revoke takes one TOKEN_ID', usage)
  const id = positionals[0]!
  if (!(await createPgRegistrationTokenStore(await ctx.db()).revoke(id, ctx.clock.now()))) {
    throw new CliError(`no registration token "${id}" that is not revoked already`)
  }
  ctx.out(`revoked registration token "${id}"`)
}

export const registrationTokensCommand = commandGroup({
  name: 'registration-tokens',
  summary: 'create, list and revoke initial access tokens for client registration',
  usage,
  subcommands: { create, list, revoke },
})
