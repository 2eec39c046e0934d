// docs/configuration.md, generated from src/config.ts: every environment variable with its
// default, what it accepts (the schema's .describe(), which error messages quote too) and what it
// means (VARIABLE_DOCS beside the schema), one table per group.
//   node --import tsx scripts/config-doc.ts           prints the page
//   node --import tsx scripts/config-doc.ts --write   writes it (npm run docs)
// test/docs/configuration-doc.unit.test.ts fails while the file differs from what this prints.
import { writeFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { CONFIG_GROUPS, configReference, type ConfigVariable } from '../src/config.js'

export const CONFIGURATION_DOC = fileURLToPath(new URL('../docs/configuration.md', import.meta.url))

const INTRO = `Environment variables only, validated at start-up: a bad value stops the process with exit code 1
and one sentence per problem naming the variable, what it expects and what it got, e.g.
\`config error: PORT must be an integer from 0 to 65535, got "abc"\` (a secret's value is never
repeated, nor \`DATABASE_URL\`'s password). An empty variable counts as unset. Lifetimes and
intervals are in seconds.

Any variable can also be read from a file, as Docker and Kubernetes mount secrets: \`NAME_FILE=path\`
sets \`NAME\` to the file's content (one trailing newline dropped), e.g.
\`KEY_ENCRYPTION_SECRET_FILE=/run/secrets/key_encryption_secret\` or \`DATABASE_URL_FILE=…\`. Setting
both \`NAME\` and \`NAME_FILE\` is an error.`

/** GitHub's heading anchor: lower case, punctuation dropped, spaces as hyphens. */
const anchor = (heading: string) =>
  heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-')

/** A table cell: a pipe would end it. */
const cell = (text: string) => text.replace(/\|/g, '\\|')

function table(variables: ConfigVariable[]): string {
  const rows = variables.map((v) => `| \`${v.name}\` | ${cell(v.defaultValue ?? 'unset')} | ${cell(v.accepts)} | ${cell(v.doc)} |`)
  return ['| Variable | Default | Accepts | Meaning |', '|---|---|---|---|', ...rows].join('\n')
}

export function renderConfigurationDoc(): string {
  const variables = configReference()
  const sections = CONFIG_GROUPS.map((group) => {
    const members = variables.filter((v) => v.group === group)
    if (members.length === 0) throw new Error(`configuration group ${group} has no variable`)
    return `## ${group}\n\n${table(members)}`
  })
  return (
    [
      '<!-- Generated from src/config.ts by `npm run docs`: edit the descriptions there, not here. -->',
      '# Configuration',
      INTRO,
      `Sections: ${CONFIG_GROUPS.map((g) => `[${g}](#${anchor(g)})`).join(', ')}.`,
      ...sections,
    ].join('\n\n') + '\n'
  )
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const page = renderConfigurationDoc()
  if (process.argv.includes('--write')) {
    writeFileSync(CONFIGURATION_DOC, page)
    process.stderr.write(`wrote ${CONFIGURATION_DOC}\n`)
  } else {
    process.stdout.write(page)
  }
}
