import { layer } from "@effect/vitest"
import type { Storage } from "@mzk/core"
import type { Layer } from "effect"
import { testCore } from "@mzk/testkit"
import { auditTests } from "./audit.js"
import { circuitTests } from "./circuits.js"
import { concurrencyTests } from "./concurrency.js"
import { deliveryTests } from "./deliveries.js"
import { eventTests } from "./events.js"
import { idempotencyTests } from "./idempotency.js"
import { metadataTests } from "./metadata.js"
import { proofCancellationTests } from "./proofCancellation.js"
import { proofTests } from "./proofs.js"
import { recoveryTests } from "./recoveries.js"
import { repositoryTests } from "./repositories.js"
import { schedulingTests } from "./scheduling.js"
import { secretRotationTests } from "./secretRotation.js"
import { transactionTests } from "./transactions.js"
import { verificationKeyTests } from "./verificationKeys.js"

export { PROOFS_AFTER_0021, PROOFS_BEFORE_0021 } from "./migrationData.js"

export interface ConformanceOptions {
  /** Per-test and layer build timeout in ms (default 30 s: a database server starts slower than SQLite in memory). */
  readonly timeout?: number
}

/**
 * The storage conformance suite: every repository method, transaction rollback, and the limits
 * that must hold under concurrency, run against one store layer. Both dialects' packages run it
 * (the package is the repository's own, not published: a store is one of mzk's SQL dialects);
 * `@mzk/testkit`'s test store is the SQLite one. Tests create their own accounts, so the store may
 * be shared by all of them (one database per run).
 */
export const storageConformance = <E>(name: string, store: Layer.Layer<Storage, E>, options: ConformanceOptions = {}) => {
  const timeout = options.timeout ?? 30_000
  layer(testCore(store), { timeout })(`storage conformance: ${name}`, (it) => {
    repositoryTests(it, timeout)
    transactionTests(it, timeout)
    concurrencyTests(it, timeout)
    deliveryTests(it, timeout)
    proofTests(it, timeout)
    proofCancellationTests(it, timeout)
    schedulingTests(it, timeout)
    circuitTests(it, timeout)
    idempotencyTests(it, timeout)
    auditTests(it, timeout)
    verificationKeyTests(it, timeout)
    secretRotationTests(it, timeout)
    eventTests(it, timeout)
    recoveryTests(it, timeout)
    metadataTests(it, timeout)
  })
}
