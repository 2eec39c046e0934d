// Four projects, so that a developer runs only what the change needs:
//   npm test -- --project unit                  no database, no server: seconds
//   npm test -- --project app flows/device      the app built in-process on an embedded database
//   npm test -- --project process               the built server or CLI (dist/, compiled first
//                                               when src/ is newer) as a child process
//   npm test -- --project browser               headless Chromium against a running server
// `npm test` runs them all. Each test file gets its own database (a PGlite copy, or a database
// cloned from a migrated template when DATABASE_URL is set; test/helpers/global-setup.ts); two
// workers match the two cores of the machine the suite is sized for.
import { defineConfig } from 'vitest/config'

const PROCESS = [
  'test/main/**/*.test.ts',
  'test/cli/**/*.test.ts',
  'test/lint/**/*.test.ts',
  'test/db/data-dir.test.ts',
  'test/keys/plaintext-at-rest.test.ts',
  'test/docs/readme-example.test.ts',
  'test/docs/admin-api-example.test.ts',
]
const BROWSER = ['test/e2e/**/*.test.ts']
const UNIT = ['test/**/*.unit.test.ts']

export default defineConfig({
  test: {
    globalSetup: ['test/helpers/global-setup.ts'],
    // The lowest scrypt cost, in this process (the setup file) and in the server and CLI
    // processes tests start (the environment): see test/helpers/password-cost.ts.
    setupFiles: ['test/helpers/password-cost.ts'],
    env: { PASSWORD_HASH_COST: '10' },
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    projects: [
      // Every project shares a module graph per worker (isolate: false): importing the app,
      // Fastify, PGlite's WebAssembly and playwright-core again for every file cost more than many
      // files' tests did (the process and browser projects: 88 s of imports isolated, 17 s shared).
      // Tests keep no state in modules; every app, database, server and browser is made and closed
      // by its file.
      { extends: true, test: { name: 'unit', include: UNIT, isolate: false } },
      {
        extends: true,
        test: { name: 'app', include: ['test/**/*.test.ts'], exclude: [...UNIT, ...PROCESS, ...BROWSER], isolate: false },
      },
      // Child processes and a browser run in real time: on a loaded machine a CLI command or a
      // page load takes many times its usual second, so these bounds only catch a hang.
      {
        extends: true,
        test: { name: 'process', include: PROCESS, exclude: UNIT, testTimeout: 120_000, hookTimeout: 120_000, isolate: false },
      },
      { extends: true, test: { name: 'browser', include: BROWSER, testTimeout: 120_000, hookTimeout: 120_000, isolate: false } },
    ],
  },
})
