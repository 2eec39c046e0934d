// authz keys list|rotate: the signing keys every replica shares.
import { SIGNING_ALGS, type SigningAlg } from '../config.js'
import { createAuditLog, type AuditSink } from '../observe/audit.js'
import { createPgSigningKeyStore } from '../stores/signing-keys.postgres.js'
import { createSigningKeyService } from '../keys/key-service.js'
import type { KeyInfo, SigningKeyService } from '../keys/signing-keys.js'
import { CliError, isoOrNull, parse, table, UsageError, commandGroup, type CliContext } from './context.js'

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

async function list(args: string[], ctx: CliContext) {
  const { values, positionals } = parse(args, { json: { type: 'boolean' } }, usage)
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`, usage)
  await withService(ctx, async (keys) => {
    const all = await keys.list()
    if (values.json) ctx.out(JSON.stringify(all.map(toJson), null, 2))
    else print(ctx, all)
  })
}

async function rotate(args: string[], ctx: CliContext) {
  const { values, positionals } = parse(args, { alg: { type: 'string' } }, usage)
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`, usage)
  const alg = values.alg
  if (alg !== undefined && !(SIGNING_ALGS as readonly string[]).includes(alg)) {
    throw new CliError(`--alg: must be one of ${SIGNING_ALGS.join(', ')}`)
  }
  await withService(ctx, async (keys) => {
    const created = await keys.rotate(alg as SigningAlg | undefined)
    ctx.out(`added ${created.length} key(s); they sign from ${isoOrNull(created[0]?.activateAt) ?? '-'}`)
    print(ctx, created)
  })
}

export const keysCommand = commandGroup({
  name: 'keys',
  summary: 'list or rotate the signing keys',
  usage,
  subcommands: { list, rotate },
})
