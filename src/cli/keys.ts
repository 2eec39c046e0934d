// authz keys list|rotate: the signing keys every replica shares.
import { SIGNING_ALGS, type SigningAlg } from '../config.js'
import { ADMIN_KEYS_PATH } from '../endpoints.js'
import { createAuditLog, type AuditSink } from '../observe/audit.js'
import { createPgSigningKeyStore } from '../stores/signing-keys.postgres.js'
import { createSigningKeyService } from '../keys/key-service.js'
import type { KeyInfo, SigningKeyService } from '../keys/signing-keys.js'
import { unexpected, type AdminApi } from './admin-api.js'
import { CliError, isoOrNull, parse, table, UsageError, commandGroup, type CliContext, type RemoteSubcommand } from './context.js'

const usage = `Usage: authz keys list [--json]
       authz keys rotate [--alg ${SIGNING_ALGS.join('|')}]

  list     signing keys with their status (pending: published, not signing yet; current: signs;
           retired: published for verification until what it signed has expired) and how the
           private part is stored (ENCRYPTED yes, no, or erased once a newer key signs)
  rotate   add a new key per algorithm (or only --alg): published in JWKS at once, signing
           after KEY_ACTIVATION_DELAY seconds

Options:
  --json   machine-readable output (list)
  --alg    the algorithm to rotate
  --help   show this help`

const toJson = (k: KeyInfo) => ({
  ...k,
  createdAt: isoOrNull(k.createdAt),
  activateAt: isoOrNull(k.activateAt),
  retireAt: isoOrNull(k.retireAt),
})

function print(ctx: CliContext, keys: KeyInfo[]) {
  const rows = keys.map((k) => [
    k.kid,
    k.alg,
    k.status,
    isoOrNull(k.createdAt) ?? '',
    isoOrNull(k.activateAt) ?? '',
    isoOrNull(k.retireAt) ?? '-',
    k.privateKey === 'erased' ? 'erased' : k.encrypted ? 'yes' : 'no',
  ])
  table(['KID', 'ALG', 'STATUS', 'CREATED', 'ACTIVATES', 'RETIRES', 'ENCRYPTED'], rows).forEach((l) => ctx.out(l))
}

/** key.rotated audit events, as the server writes them, one JSON line each on stderr (stdout stays the command's answer). */
function auditToStderr(ctx: CliContext): AuditSink {
  const write = (level: number) => (obj: object, msg: string) =>
    ctx.err(JSON.stringify({ level, time: new Date(ctx.clock.now()).toISOString(), ...obj, msg }))
  return createAuditLog({ logger: { info: write(30), warn: write(40) } })
}

async function withService(ctx: CliContext, fn: (keys: SigningKeyService) => Promise<void>) {
  const keys = createSigningKeyService({
    store: createPgSigningKeyStore(await ctx.db()),
    config: ctx.config(),
    clock: ctx.clock,
    audit: auditToStderr(ctx),
  })
  try {
    await keys.ensureKeys() // the same initial keys the server would create on first start
    await fn(keys)
  } finally {
    keys.close()
  }
}

function listArgs(args: string[]) {
  const { values, positionals } = parse(args, { json: { type: 'boolean' } }, usage)
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`, usage)
  return values
}

function printList(ctx: CliContext, all: KeyInfo[], json: boolean | undefined) {
  if (json) ctx.out(JSON.stringify(all.map(toJson), null, 2))
  else print(ctx, all)
}

async function list(args: string[], ctx: CliContext) {
  const values = listArgs(args)
  await withService(ctx, async (keys) => printList(ctx, await keys.list(), values.json))
}

function rotateArgs(args: string[]): SigningAlg | undefined {
  const { values, positionals } = parse(args, { alg: { type: 'string' } }, usage)
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`, usage)
  const alg = values.alg
  if (alg !== undefined && !(SIGNING_ALGS as readonly string[]).includes(alg)) {
    throw new CliError(`--alg: must be one of ${SIGNING_ALGS.join(', ')}`)
  }
  return alg as SigningAlg | undefined
}

function printRotated(ctx: CliContext, created: KeyInfo[]) {
  ctx.out(`added ${created.length} key(s); they sign from ${isoOrNull(created[0]?.activateAt) ?? '-'}`)
  print(ctx, created)
}

async function rotate(args: string[], ctx: CliContext) {
  const alg = rotateArgs(args)
  await withService(ctx, async (keys) => printRotated(ctx, await keys.rotate(alg)))
}

// Through the running server's admin API (src/cli/admin-api.ts): the same arguments, checks and output.

type KeyView = { kid: string; alg: SigningAlg; status: KeyInfo['status']; createdAt: string; activateAt: string; retireAt?: string }

/** A key as the admin API answers it, members in the order the key service gives them (what --json prints). */
const fromAdmin = (k: KeyView & Pick<KeyInfo, 'encrypted' | 'privateKey'>): KeyInfo => ({
  kid: k.kid,
  alg: k.alg,
  createdAt: Date.parse(k.createdAt),
  activateAt: Date.parse(k.activateAt),
  retireAt: k.retireAt === undefined ? undefined : Date.parse(k.retireAt),
  status: k.status,
  encrypted: k.encrypted,
  privateKey: k.privateKey,
})

async function keysFrom(api: AdminApi, method: 'GET' | 'POST', path: string, body?: object): Promise<KeyInfo[]> {
  const answer = await api.call(method, path, body === undefined ? {} : { body })
  if (answer.status !== (method === 'GET' ? 200 : 201)) throw unexpected(answer)
  return (answer.body as { items: Parameters<typeof fromAdmin>[0][] }).items.map(fromAdmin)
}

const remoteList: RemoteSubcommand = async (args, ctx, api) => {
  const values = listArgs(args)
  printList(ctx, await keysFrom(api, 'GET', ADMIN_KEYS_PATH), values.json)
}

const remoteRotate: RemoteSubcommand = async (args, ctx, api) => {
  const alg = rotateArgs(args)
  const created = await keysFrom(api, 'POST', `${ADMIN_KEYS_PATH}/rotate`, alg === undefined ? {} : { alg })
  // The server's key.rotated events, on stderr as the database form writes them (they are in the server's log too).
  const audit = auditToStderr(ctx)
  for (const k of created) audit.emit({ event: 'key.rotated', kid: k.kid, alg: k.alg, reason: 'rotation' })
  printRotated(ctx, created)
}

export const keysCommand = commandGroup({
  name: 'keys',
  summary: 'list or rotate the signing keys',
  usage,
  subcommands: { list, rotate },
  remote: { list: remoteList, rotate: remoteRotate },
})
