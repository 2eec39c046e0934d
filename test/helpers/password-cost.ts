// scrypt at the production cost is most of the CPU of a sign-in, and the suite hashes and checks
// about a thousand passwords: tests make and check hashes at the lowest cost PASSWORD_HASH_COST
// allows (vitest.config.ts sets it for the server and CLI processes that tests start, too). A
// hash keeps the cost it was made with, so nothing else a test sees changes;
// test/interaction/passwords.unit.test.ts checks the production default.
import { configurePasswordHashing } from '../../src/interaction/passwords.js'

export const TEST_PASSWORD_HASH_COST = 10

configurePasswordHashing(TEST_PASSWORD_HASH_COST)
