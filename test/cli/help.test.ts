import { describe, expect, it } from 'vitest'
import { runCli } from './run-cli.js'

// No database is opened by any of these.
describe('authz usage', () => {
  it('prints help, rejects unknown commands and options with exit 2, and prints the seed schema', async () => {
    const [root, clients, unknown, bare, schema, pwArg, badSub] = await Promise.all([
      runCli(['--help']),
      runCli(['clients', 'add-secret', '--help']),
      runCli(['frobnicate']),
      runCli([]),
      runCli(['seed', '--schema']),
      runCli(['users', 'add', 'bob', '--password', 'hunter2']),
      runCli(['clients', 'nuke']),
    ])
    expect(root).toMatchObject({ code: 0, stderr: '' })
    expect(root.stdout).toMatch(/^Usage: authz COMMAND \[ARGS\] \[--help\]\n/)
    for (const c of ['migrate', 'seed', 'clients', 'users', 'keys']) expect(root.stdout).toMatch(new RegExp(`\\n  ${c} +\\S`))

    expect(clients).toMatchObject({ code: 0, stderr: '' })
    expect(clients.stdout).toContain('authz clients add-secret CLIENT_ID [--expires ISO_DATE] [--description TEXT]')

    expect(unknown).toMatchObject({ code: 2, stdout: '' })
    expect(unknown.stderr).toMatch(/^authz: unknown command "frobnicate"\n\nUsage: authz COMMAND/)
    expect(bare).toMatchObject({ code: 2, stdout: '' })
    expect(bare.stderr).toMatch(/^Usage: authz COMMAND/)

    expect(schema).toMatchObject({ code: 0, stderr: '' })
    const json = JSON.parse(schema.stdout)
    expect(json.$schema).toBe('https://json-schema.org/draft/2020-12/schema')
    expect(Object.keys(json.properties)).toEqual([
      '$schema',
      'apiScopes',
      'apiResources',
      'identityResources',
      'clients',
      'users',
      'identityProviders',
    ])

    // A password is never accepted on the command line.
    expect(pwArg).toMatchObject({ code: 2, stdout: '' })
    expect(pwArg.stderr).toMatch(/^authz users: Unknown option '--password'/)
    expect(badSub).toMatchObject({ code: 2, stdout: '' })
    expect(badSub.stderr).toMatch(/^authz clients: unknown subcommand "nuke"\n\nUsage: authz clients list/)
  })
})
