// The reverse-proxy configurations in deploy/ are what CI runs the server behind
// (test/e2e/reverse-proxy.test.ts) and what the README prints: its blocks are those files,
// character for character, so that the example a reader copies is the one that was tested.
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'

const readme = readFileSync('README.md', 'utf8')
const section = readme.slice(readme.indexOf('\n## Behind a reverse proxy\n'))

describe('README.md, "Behind a reverse proxy"', () => {
  it.each([
    ['deploy/nginx/authz.conf', 'nginx'],
    ['deploy/caddy/Caddyfile', 'caddyfile'],
  ])('prints %s as it is', (file, lang) => {
    const block = new RegExp('```' + lang + '\\n([\\s\\S]*?)```').exec(section)
    expect(block?.[1], `a \`\`\`${lang} block under "## Behind a reverse proxy"`).toBe(readFileSync(file, 'utf8'))
  })
})
