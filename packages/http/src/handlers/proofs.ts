import { Proofs } from "@mzk/core"
import { Effect } from "effect"
import { implement } from "./handler.js"

export const ProofsHandlers = Effect.map(Proofs, (proofs) =>
  implement("proofs", {
    create: ({ payload, principal }) => proofs.create(principal.account_id, payload),
    createBatch: ({ payload, principal }) => proofs.createBatch(principal.account_id, payload),
    list: ({ principal, urlParams }) => proofs.list(principal.account_id, urlParams),
    get: ({ path, principal }) => proofs.get(principal.account_id, path.id),
    verify: ({ path, principal }) => proofs.verify(principal.account_id, path.id),
    calldata: ({ path, principal }) => proofs.calldata(principal.account_id, path.id),
    cancel: ({ path, principal }) => proofs.cancel(principal.account_id, path.id),
    cancelBatch: ({ path, principal }) => proofs.cancelBatch(principal.account_id, path.batch_id)
  }))
