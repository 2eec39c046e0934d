// authz users add: creates or updates a user with a scrypt-hashed password read from stdin or a
// prompt, never from argv. authz users unlock: clears a password lockout (and user_code blocks).
import { randomUUID } from 'node:crypto'
import { pgErrorCode, PG_UNIQUE_VIOLATION } from '../db/db.js'
import { createPgFailureCounterStore } from '../stores/postgres/failure-counters.js'
import { createPgUserStore } from '../stores/postgres/users.js'
import { hashPassword } from '../tokens/passwords.js'
import { CliError, parse, UsageError, commandGroup, type CliContext } from './context.js'
import { readPassword } from './prompt.js'

const usage = `Usage: authz users add USERNAME [--subject ID] [--email EMAIL] [--name NAME]
       authz users unlock USERNAME

Creates the user (or sets the password and the given claims of an existing one). The password is
read from stdin when stdin is not a terminal, otherwise prompted for without echo; it is never
taken from the command line.

  echo "$PASSWORD" | authz users add alice --email alice@example.com

Options:
  --subject  the subject id (sub) of a new user; default: a random UUID
  --email    the email claim
  --name     the name claim
  --help     show this help

unlock ends the user's password lockout now and forgets the failed sign-ins and the lockout
escalation, and any CIBA user_code blocks of the user (on every replica: they live in the database).`

async function add(args: string[], ctx: CliContext) {
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

  const users = createPgUserStore(await ctx.db())
  const existing = await users.findByUsername(username)
  if (existing && values.subject !== undefined && values.subject !== existing.subjectId) {
    throw new CliError(`user "${username}" exists with subject "${existing.subjectId}"; subject ids do not change`)
  }
  const claims = { ...existing?.claims }
  if (values.email !== undefined) claims.email = values.email
  if (values.name !== undefined) claims.name = values.name
  const subjectId = existing?.subjectId ?? values.subject ?? randomUUID()
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

export const usersCommand = commandGroup({
  name: 'users',
  summary: 'add a user (password from stdin or a prompt), unlock a locked-out user',
  usage,
  subcommands: { add, unlock },
})
