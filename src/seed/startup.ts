// What a start does with a seed (src/main.ts), and what it says about it. SEED_FILE is applied at
// every start. The demo seed only to the database this start created, so that what an operator
// changed afterwards (a secret added with the CLI) survives the next start; a start that skips it
// says so, and how to apply it again, instead of leaving a restart to look like it did nothing.
import type { Config } from '../config.js'
import { TOKEN_PATH } from '../endpoints.js'
import type { SeedInput } from './schema.js'

export type SeedPlan =
  | { readonly apply: true; readonly file: string; readonly reason: string }
  | { readonly apply: false; readonly file: string | undefined; readonly message: string }

/**
 * Which seed this start applies and why, or why none. `demoFile` is the demo seed's path as the
 * operator would type it (relative to the working directory).
 */
export function seedPlan(config: Pick<Config, 'seedFile' | 'demoSeed'>, createdDatabase: boolean, demoFile: string): SeedPlan {
  if (config.seedFile) return { apply: true, file: config.seedFile, reason: 'SEED_FILE is applied at every start' }
  if (!config.demoSeed) {
    return {
      apply: false,
      file: undefined,
      message:
        'no seed applied: SEED_FILE is not set and the demo seed is off (it is on by default only without DATABASE_URL; DEMO_SEED=true turns it on)',
    }
  }
  if (createdDatabase) return { apply: true, file: demoFile, reason: 'the demo seed is applied once, to the database this start created' }
  return {
    apply: false,
    file: demoFile,
    message:
      `demo seed skipped: it was applied when this database was created, and is not applied again so that changes made since are kept. ` +
      `To apply ${demoFile} again, start with SEED_FILE=${demoFile} (applied at every start), or run \`npx authz seed ${demoFile}\` while the server is stopped`,
  }
}

/**
 * The demo seed's banner, for a person at a terminal: where to go, whom to sign in as, the first
 * request to try. Taken from the seed itself, so that it never names a credential the seed lacks.
 */
export function demoBanner(issuer: string, seed: SeedInput): string[] {
  const lines = [`Open         ${issuer}/`]
  const user = seed.users.find((u) => u.password !== undefined)
  if (user) lines.push(`Sign in as   ${user.username} / ${user.password}`)
  const client = seed.clients.find((c) => c.allowedGrantTypes.includes('client_credentials') && c.secrets?.some((s) => s.value))
  const secret = client?.secrets?.find((s) => s.value)?.value
  if (client && secret) {
    lines.push(`First token  curl -s -u ${client.clientId}:${secret} -d grant_type=client_credentials ${issuer}${TOKEN_PATH}`)
  }
  lines.push('Every flow   docs/flows.md; these credentials are public: keep this server on your machine')
  return lines
}
