// An invalid seed file: one line per problem, each starting with its JSON path.
export class SeedError extends Error {
  constructor(
    readonly problems: string[],
    heading = 'invalid seed file',
  ) {
    super(problems.length === 0 ? heading : `${heading}:\n${problems.map((p) => `  ${p}`).join('\n')}`)
    this.name = 'SeedError'
  }
}

/** ['clients', 0, 'allowedGrantTypes', 1] → "clients[0].allowedGrantTypes[1]". */
export function jsonPath(path: readonly PropertyKey[]): string {
  let out = ''
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`
    else out += out === '' ? String(part) : `.${String(part)}`
  }
  return out === '' ? '(root)' : out
}
