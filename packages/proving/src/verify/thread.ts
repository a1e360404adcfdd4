import { Worker } from "node:worker_threads"
import { snarkjsThreadData } from "../snarkjsDeps.mjs"
import type { SystemModule } from "./system.js"

const THREAD_URL = new URL("./verifyThread.mjs", import.meta.url)

/** The systems snarkjs verifies, by the names of its namespaces. */
export type SnarkjsSystem = "groth16" | "plonk" | "fflonk"

/** Who verified: the native addon (Groth16 only), or snarkjs. */
export type VerifiedBy = "native" | "snarkjs"

/**
 * One worker thread that verifies (verifyThread.mjs), so a verification (milliseconds for Groth16,
 * more for PLONK and FFLONK) holds neither the event loop nor the prover pool. Started at the first
 * verification; it keeps the process alive only while a verification is pending; a thread that
 * dies fails what it held and is started again by the next verification.
 */
export interface VerifyThread {
  readonly verify: (
    system: SnarkjsSystem,
    key: unknown,
    publicSignals: ReadonlyArray<string>,
    proof: unknown
  ) => Promise<{ readonly valid: boolean; readonly by: VerifiedBy }>
  /** Stops the thread; what it held fails. */
  readonly close: () => Promise<void>
}

interface Pending {
  readonly resolve: (verified: { readonly valid: boolean; readonly by: VerifiedBy }) => void
  readonly reject: (error: Error) => void
}

type Reply =
  | { readonly ready: true }
  | { readonly id: number; readonly valid: boolean; readonly by: VerifiedBy }
  | { readonly id: number; readonly error: string }

/** A started thread: what it holds, and what was asked of it before it said it listens. */
interface Started {
  readonly worker: Worker
  readonly pending: Map<number, Pending>
  queued: Array<unknown> | undefined
}

export interface VerifyThreadOptions {
  /** Groth16 by the native addon where it loads (else snarkjs). */
  readonly native: boolean
}

export const makeVerifyThread = (options: VerifyThreadOptions): VerifyThread => {
  let thread: Started | undefined
  let nextId = 0

  const start = () => {
    const worker = new Worker(THREAD_URL, { workerData: { ...snarkjsThreadData("mzk-verify"), native: options.native } })
    const pending = new Map<number, Pending>()
    const started: Started = { worker, pending, queued: [] }
    const failAll = (error: Error) => {
      for (const waiting of pending.values()) waiting.reject(error)
      pending.clear()
    }
    worker.on("message", (reply: Reply) => {
      if ("ready" in reply) {
        for (const message of started.queued ?? []) worker.postMessage(message)
        started.queued = undefined
        return
      }
      const waiting = pending.get(reply.id)
      pending.delete(reply.id)
      if (pending.size === 0) worker.unref()
      if (waiting === undefined) return
      if ("error" in reply) waiting.reject(new Error(reply.error))
      else waiting.resolve({ valid: reply.valid, by: reply.by })
    })
    // After either, the next verification starts a new thread.
    worker.on("error", (error) => {
      if (thread === started) thread = undefined
      failAll(error)
    })
    worker.on("exit", (code) => {
      if (thread === started) thread = undefined
      failAll(new Error(`the verification thread stopped (exit code ${code})`))
    })
    return started
  }

  return {
    verify: (system, key, publicSignals, proof) =>
      new Promise((resolve, reject) => {
        const current = (thread ??= start())
        const id = nextId++
        current.pending.set(id, { resolve, reject })
        current.worker.ref()
        const message = { id, system, key, publicSignals, proof }
        if (current.queued !== undefined) current.queued.push(message)
        else current.worker.postMessage(message)
      }),
    close: async () => {
      const current = thread
      thread = undefined
      if (current !== undefined) await current.worker.terminate()
    }
  }
}

const SNARKJS_SYSTEMS: ReadonlySet<string> = new Set<SnarkjsSystem>(["groth16", "plonk", "fflonk"])

/** The module, its verify run on the thread (its checks stay where they are). */
export const onThread = (module: SystemModule, thread: VerifyThread): SystemModule => {
  if (!SNARKJS_SYSTEMS.has(module.system)) throw new Error(`snarkjs does not verify ${module.system}`)
  const system = module.system as SnarkjsSystem
  return { ...module, verify: (key, publicSignals, proof) => thread.verify(system, key, publicSignals, proof).then(({ valid }) => valid) }
}
