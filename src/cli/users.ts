// authz users add: creates or updates a user with a scrypt-hashed password read from stdin or a
// prompt, never from argv. authz users unlock: clears a password lockout (and user_code blocks).
// list, disable, enable, remove: daily administration. sign-out: ends every session of a user;
// like disable and remove it queues a back-channel logout for each app used in those sessions
// (sent by the running server, src/flows/logout/backchannel-logout.ts).
import { randomUUID } from 'node:crypto'
import { pgErrorCode, PG_UNIQUE_VIOLATION } from '../db/db.js'
import { createPgFailureCounterStore } from '../stores/failure-counters.postgres.js'
import { createPgFederatedIdentityStore } from '../stores/federated-identities.postgres.js'
import { createPgUserSessionStore } from '../stores/user-sessions.postgres.js'
import { createPgUserStore } from '../stores/users.postgres.js'
import { createPgUserFactorStore } from '../stores/user-factors.postgres.js'
import { createPgPasskeyStore } from '../stores/passkeys.postgres.js'
import { createAuditLog, type AuditSink } from '../observe/audit.js'
import type { User } from '../domain/types.js'
import { ADMIN_LOCKOUTS_PATH, ADMIN_USERS_PATH } from '../endpoints.js'
import { hashPassword } from '../interaction/passwords.js'
import { factorsView, type FactorsReset, type FactorsView } from '../admin/user-factors.js'
import { changedMeanwhile, errorsOf, listAll, seg, unexpected, type AdminApi } from './admin-api.js'
import { CliError, isoOrNull, parse, table, UsageError, commandGroup, type CliContext, type RemoteSubcommand } from './context.js'
import { readPassword } from './prompt.js'

const usage = `Usage: authz users list [--json]
       authz users add USERNAME [--subject ID] [--email EMAIL] [--name NAME]
       authz users disable USERNAME
       authz users enable USERNAME
       authz users remove USERNAME
       authz users unlock USERNAME
       authz users sign-out USERNAME
       authz users links USERNAME
       authz users factors USERNAME
       authz users reset-factors USERNAME

list lists every user: username, subject, enabled, and until when a lockout holds.
disable refuses the user's sign-ins, password grants and CIBA requests and ends their sessions;
enable allows them again. remove deletes the user with their sessions, consents, tokens,
CIBA and device requests and links to identity providers. links lists the upstream identities
(identity provider scheme and sub) a user signs in with. sign-out ends the user's sessions on
every device. Ending sessions tells the apps used in them, those with a backChannelLogoutUri,
by back-channel logout (the server sends it: at once with DATABASE_URL, at its next start with
the embedded database).

Creates the user (or sets the password and the given claims of an existing one). The password is
read from stdin when stdin is not a terminal, otherwise prompted for without echo; it is never
taken from the command line.

  echo "$PASSWORD" | authz users add alice --email alice@example.com

Options:
  --subject  the subject id (sub) of a new user; default: a random UUID
  --email    the email claim
  --name     the name claim
  --json     list as JSON
  --help     show this help

unlock ends the user's password lockout now and forgets the failed sign-ins and the lockout
escalation, and any CIBA user_code blocks of the user (on every replica: they live in the database).

factors lists the user's second factors (one-time codes: when set up and last used, recovery
codes left; each passkey by name: when added and last used). reset-factors removes them all (passkeys too), for a person who lost their device, and ends every
session of the user: their next sign-in asks for the password only, and, where a second factor is
required, leads them to set up a new one. It writes a factor.removed audit event on stderr.`

/** add's arguments and the password, read before anything is looked up. */
async function addArgs(args: string[], ctx: CliContext) {
  const { values, positionals } = parse(args, { subject: { type: 'string' }, email: { type: 'string' }, name: { type: 'string' } }, usage)
  const [username, ...rest] = positionals
  if (!username || rest.length > 0) throw new UsageError('expected exactly one USERNAME', usage)
  let password: string
  try {
    password = await readPassword(ctx)
  } catch (err) {
    throw new CliError((err as Error).message)
  }
  if (password.length === 0) throw new CliError('no password given (pipe it on stdin or type it at the prompt)')
  return { username, password, values }
}

type AddValues = Awaited<ReturnType<typeof addArgs>>['values']

/** The claims and subject of the user add writes, given the user stored under that username. */
function merged(username: string, values: AddValues, existing: { subjectId: string; claims: Record<string, unknown> } | undefined) {
  if (existing && values.subject !== undefined && values.subject !== existing.subjectId) {
    throw new CliError(`user "${username}" exists with subject "${existing.subjectId}"; subject ids do not change`)
  }
  const claims = { ...existing?.claims }
  if (values.email !== undefined) claims.email = values.email
  if (values.name !== undefined) claims.name = values.name
  return { claims, subjectId: existing?.subjectId ?? values.subject ?? randomUUID() }
}

async function add(args: string[], ctx: CliContext) {
  const { username, password, values } = await addArgs(args, ctx)
  const users = createPgUserStore(await ctx.db())
  const existing = await users.findByUsername(username)
  const { claims, subjectId } = merged(username, values, existing)
  try {
    await users.upsert({
      subjectId,
      username,
      passwordHash: await hashPassword(password),
      enabled: existing?.enabled ?? true,
      claims,
      cibaUserCodeHash: existing?.cibaUserCodeHash,
    })
  } catch (err) {
    if (pgErrorCode(err) === PG_UNIQUE_VIOLATION) throw new CliError(`subject "${subjectId}" belongs to another user`)
    throw err
  }
  ctx.out(`${existing ? 'updated' : 'created'} user "${username}" (subject ${subjectId})`)
}

async function unlock(args: string[], ctx: CliContext) {
  const { positionals } = parse(args, {}, usage)
  const [username, ...rest] = positionals
  if (!username || rest.length > 0) throw new UsageError('expected exactly one USERNAME', usage)
  const db = await ctx.db()
  const user = await createPgUserStore(db).findByUsername(username)
  if (!user) throw new CliError(`no user "${username}"`)
  const cleared = await createPgFailureCounterStore(db).clearName(['user', 'user_code'], user.subjectId)
  ctx.out(cleared > 0 ? `unlocked user "${username}"` : `user "${username}" had no failed attempts to clear`)
}

function oneUsername(args: string[]): string {
  const [username, ...rest] = parse(args, {}, usage).positionals
  if (!username || rest.length > 0) throw new UsageError('expected exactly one USERNAME', usage)
  return username
}

function listArgs(args: string[]) {
  const { values, positionals } = parse(args, { json: { type: 'boolean' } }, usage)
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`, usage)
  return values
}

async function list(args: string[], ctx: CliContext) {
  const values = listArgs(args)
  const db = await ctx.db()
  const users = await createPgUserStore(db).list()
  const locks = await createPgFailureCounterStore(db).listBlocked('user', ctx.clock.now(), 10_000)
  printList(ctx, users, new Map(locks.map((l) => [l.name, l.blockedUntil])), values.json)
}

/** Users with until when each is locked out (by subject). */
function printList(
  ctx: CliContext,
  users: Pick<User, 'username' | 'subjectId' | 'enabled' | 'claims'>[],
  lockedUntil: Map<string, number>,
  asJson: boolean | undefined,
) {
  const json = users.map((u) => ({
    username: u.username,
    subject: u.subjectId,
    enabled: u.enabled,
    lockedUntil: isoOrNull(lockedUntil.get(u.subjectId)),
    email: typeof u.claims.email === 'string' ? u.claims.email : null,
    name: typeof u.claims.name === 'string' ? u.claims.name : null,
  }))
  if (asJson) return ctx.out(JSON.stringify(json, null, 2))
  if (users.length === 0) return ctx.out('no users')
  const rows = json.map((u) => [u.username, u.subject, u.enabled ? 'yes' : 'no', u.lockedUntil ?? '-', u.email ?? ''])
  table(['USERNAME', 'SUBJECT', 'ENABLED', 'LOCKED UNTIL', 'EMAIL'], rows).forEach((l) => ctx.out(l))
}

/** Ends every session of the subject, queuing the back-channel logouts of the apps used in them. */
async function endSessions(subjectId: string, ctx: CliContext): Promise<number> {
  return createPgUserSessionStore(await ctx.db()).removeAllForSubject(subjectId, { reason: 'admin', at: ctx.clock.now() })
}

async function setEnabled(enabled: boolean, args: string[], ctx: CliContext) {
  const username = oneUsername(args)
  const users = createPgUserStore(await ctx.db())
  if (!(await users.setEnabled(username, enabled))) throw new CliError(`no user "${username}"`)
  if (!enabled) await endSessions((await users.findByUsername(username))!.subjectId, ctx)
  ctx.out(`${enabled ? 'enabled' : 'disabled'} user "${username}"`)
}

/** The upstream identities a user is linked to (federation: scheme and upstream sub). */
async function links(args: string[], ctx: CliContext) {
  const username = oneUsername(args)
  const db = await ctx.db()
  const user = await createPgUserStore(db).findByUsername(username)
  if (!user) throw new CliError(`no user "${username}"`)
  const iso = (ms: number) => new Date(ms).toISOString()
  const all = await createPgFederatedIdentityStore(db).listForSubject(user.subjectId)
  printLinks(
    ctx,
    username,
    all.map((l) => ({ scheme: l.scheme, upstreamSub: l.upstreamSub, linkedAt: iso(l.createdAt), lastSignInAt: iso(l.lastSignInAt) })),
  )
}

type LinkView = { scheme: string; upstreamSub: string; linkedAt: string; lastSignInAt: string }

function printLinks(ctx: CliContext, username: string, all: LinkView[]) {
  if (all.length === 0) return ctx.out(`user "${username}" is linked to no identity provider`)
  const rows = all.map((l) => [l.scheme, l.upstreamSub, l.linkedAt, l.lastSignInAt])
  table(['SCHEME', 'UPSTREAM SUB', 'LINKED', 'LAST SIGN-IN'], rows).forEach((l) => ctx.out(l))
}

async function signOut(args: string[], ctx: CliContext) {
  const username = oneUsername(args)
  const user = await createPgUserStore(await ctx.db()).findByUsername(username)
  if (!user) throw new CliError(`no user "${username}"`)
  const n = await endSessions(user.subjectId, ctx)
  ctx.out(n === 0 ? `user "${username}" had no sessions` : `ended ${n} session${n === 1 ? '' : 's'} of user "${username}"`)
}

async function factors(args: string[], ctx: CliContext) {
  const username = oneUsername(args)
  const db = await ctx.db()
  const user = await createPgUserStore(db).findByUsername(username)
  if (!user) throw new CliError(`no user "${username}"`)
  const [found, passkeys] = await Promise.all([
    createPgUserFactorStore(db).find(user.subjectId),
    createPgPasskeyStore(db).listForSubject(user.subjectId),
  ])
  printFactors(ctx, username, factorsView(found, passkeys))
}

/** The factors as the database and the admin API have them alike (src/admin/user-factors.ts). */
function printFactors(ctx: CliContext, username: string, found: FactorsView) {
  if (!found.totp && found.passkeys.length === 0) return ctx.out(`user "${username}" has no second factor`)
  const rows = found.totp
    ? [['one-time codes (TOTP)', found.totp.setUpAt, found.totp.lastUsedAt ?? '-', String(found.recoveryCodesLeft)]]
    : []
  for (const p of found.passkeys) rows.push([`passkey "${p.name}"`, p.setUpAt, p.lastUsedAt ?? '-', '-'])
  table(['FACTOR', 'SET UP', 'LAST USED', 'RECOVERY CODES LEFT'], rows).forEach((l) => ctx.out(l))
}

async function resetFactors(args: string[], ctx: CliContext) {
  const username = oneUsername(args)
  const db = await ctx.db()
  const user = await createPgUserStore(db).findByUsername(username)
  if (!user) throw new CliError(`no user "${username}"`)
  const codes = await createPgUserFactorStore(db).remove(user.subjectId)
  const passkeys = await createPgPasskeyStore(db).removeAllForSubject(user.subjectId)
  if (!codes && passkeys === 0) return ctx.out(`user "${username}" had no second factor`)
  auditToStderr(ctx).emit({ event: 'factor.removed', username: user.username, subject: user.subjectId, reason: 'admin' })
  printReset(ctx, username, await endSessions(user.subjectId, ctx))
}

const printReset = (ctx: CliContext, username: string, n: number) =>
  ctx.out(`removed the second factors of user "${username}" and ended ${n} session${n === 1 ? '' : 's'}`)

/** factor.removed audit events, as the server writes them, one JSON line each on stderr (stdout stays the command's answer). */
function auditToStderr(ctx: CliContext): AuditSink {
  const write = (level: number) => (obj: object, msg: string) =>
    ctx.err(JSON.stringify({ level, time: new Date(ctx.clock.now()).toISOString(), ...obj, msg }))
  return createAuditLog({ logger: { info: write(30), warn: write(40) } })
}

async function remove(args: string[], ctx: CliContext) {
  const username = oneUsername(args)
  const db = await ctx.db()
  const user = await createPgUserStore(db).findByUsername(username)
  if (user) await endSessions(user.subjectId, ctx) // before the sessions go with the user, so that the apps are told
  if (!user || !(await createPgUserStore(db).remove(username))) throw new CliError(`no user "${username}"`)
  await createPgFailureCounterStore(db).clearName(['user', 'user_code'], user.subjectId)
  ctx.out(`removed user "${username}" (subject ${user.subjectId})`)
}

// Through the running server's admin API (src/cli/admin-api.ts): the same arguments, checks and output.

const noUser = (username: string) => new CliError(`no user "${username}"`)
const userPath = (username: string) => `${ADMIN_USERS_PATH}/${seg(username)}`
type UserView = { subjectId: string; username: string; enabled: boolean; claims: Record<string, unknown> }

const remoteList: RemoteSubcommand = async (args, ctx, api) => {
  const values = listArgs(args)
  const users = await listAll<UserView>(api, ADMIN_USERS_PATH)
  const items = await listAll<{ subjectId: string; lockedUntil: string }>(api, ADMIN_LOCKOUTS_PATH)
  printList(ctx, users, new Map(items.map((l) => [l.subjectId, Date.parse(l.lockedUntil)])), values.json)
}

const remoteAdd: RemoteSubcommand = async (args, ctx, api) => {
  const { username, password, values } = await addArgs(args, ctx)
  const found = await api.call('GET', userPath(username))
  if (found.status !== 200 && found.status !== 404) throw unexpected(found)
  const existing = found.status === 200 ? (found.body as UserView) : undefined
  const { claims, subjectId } = merged(username, values, existing)
  // The whole user, as the seed file has it: what is not given here stays as stored (enabled; the CIBA user code when omitted).
  const body = { subjectId, username, password, enabled: existing?.enabled ?? true, claims }
  const put = await api.call('PUT', userPath(username), existing ? { body, ifMatch: found.etag } : { body, ifNoneMatch: '*' })
  if (put.status === 412) throw changedMeanwhile(`user "${username}"`)
  if (put.status === 400 && errorsOf(put).some((e) => e.path === 'subjectId')) {
    throw new CliError(`subject "${subjectId}" belongs to another user`)
  }
  if (put.status !== 200 && put.status !== 201) throw unexpected(put)
  ctx.out(`${existing ? 'updated' : 'created'} user "${username}" (subject ${subjectId})`)
}

/** POST /admin/users/{username}/{action}: the user after it, with what the action did. */
async function act(api: AdminApi, username: string, action: 'disable' | 'enable' | 'unlock' | 'sign-out') {
  const answer = await api.call('POST', `${userPath(username)}/${action}`)
  if (answer.status === 404) throw noUser(username)
  if (answer.status !== 200) throw unexpected(answer)
  return answer.body as UserView & { sessionsEnded?: number; failuresCleared?: number }
}

const remoteUnlock: RemoteSubcommand = async (args, ctx, api) => {
  const username = oneUsername(args)
  const { failuresCleared = 0 } = await act(api, username, 'unlock')
  ctx.out(failuresCleared > 0 ? `unlocked user "${username}"` : `user "${username}" had no failed attempts to clear`)
}

async function remoteSetEnabled(enabled: boolean, args: string[], ctx: CliContext, api: AdminApi) {
  const username = oneUsername(args)
  await act(api, username, enabled ? 'enable' : 'disable')
  ctx.out(`${enabled ? 'enabled' : 'disabled'} user "${username}"`)
}

const remoteSignOut: RemoteSubcommand = async (args, ctx, api) => {
  const username = oneUsername(args)
  const { sessionsEnded: n = 0 } = await act(api, username, 'sign-out')
  ctx.out(n === 0 ? `user "${username}" had no sessions` : `ended ${n} session${n === 1 ? '' : 's'} of user "${username}"`)
}

const remoteRemove: RemoteSubcommand = async (args, ctx, api) => {
  const username = oneUsername(args)
  const found = await api.call('GET', userPath(username))
  if (found.status === 404) throw noUser(username)
  if (found.status !== 200) throw unexpected(found)
  const answer = await api.call('DELETE', userPath(username), { ifMatch: found.etag })
  if (answer.status === 404) throw noUser(username)
  if (answer.status === 412) throw changedMeanwhile(`user "${username}"`)
  if (answer.status !== 204) throw unexpected(answer)
  ctx.out(`removed user "${username}" (subject ${(found.body as UserView).subjectId})`)
}

const remoteLinks: RemoteSubcommand = async (args, ctx, api) => {
  const username = oneUsername(args)
  const answer = await api.call('GET', `${userPath(username)}/links`)
  if (answer.status === 404) throw noUser(username)
  if (answer.status !== 200) throw unexpected(answer)
  printLinks(ctx, username, (answer.body as { items: LinkView[] }).items)
}

const remoteFactors: RemoteSubcommand = async (args, ctx, api) => {
  const username = oneUsername(args)
  const answer = await api.call('GET', `${userPath(username)}/factors`)
  if (answer.status === 404) throw noUser(username)
  if (answer.status !== 200) throw unexpected(answer)
  printFactors(ctx, username, answer.body as FactorsView)
}

const remoteResetFactors: RemoteSubcommand = async (args, ctx, api) => {
  const username = oneUsername(args)
  const answer = await api.call('POST', `${userPath(username)}/reset-factors`)
  if (answer.status === 404) throw noUser(username)
  if (answer.status !== 200) throw unexpected(answer)
  const done = answer.body as FactorsReset
  if (!done.removed) return ctx.out(`user "${username}" had no second factor`)
  // The server's factor.removed event, on stderr as the database form writes it (it is in the server's log too).
  auditToStderr(ctx).emit({ event: 'factor.removed', username, subject: done.subjectId, reason: 'admin' })
  printReset(ctx, username, done.sessionsEnded)
}

export const usersCommand = commandGroup({
  name: 'users',
  summary: 'list, add, disable, enable and remove users; unlock a locked-out user; sign a user out everywhere',
  usage,
  subcommands: {
    list,
    add,
    disable: (args, ctx) => setEnabled(false, args, ctx),
    enable: (args, ctx) => setEnabled(true, args, ctx),
    remove,
    unlock,
    'sign-out': signOut,
    links,
    factors,
    'reset-factors': resetFactors,
  },
  remote: {
    list: remoteList,
    add: remoteAdd,
    disable: (args, ctx, api) => remoteSetEnabled(false, args, ctx, api),
    enable: (args, ctx, api) => remoteSetEnabled(true, args, ctx, api),
    remove: remoteRemove,
    unlock: remoteUnlock,
    'sign-out': remoteSignOut,
    links: remoteLinks,
    factors: remoteFactors,
    'reset-factors': remoteResetFactors,
  },
})
