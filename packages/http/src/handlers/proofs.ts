import { CircuitCatalog, NotFound, Proofs } from "@mzk/core"
import { Effect, Option } from "effect"
import { implement } from "./implement.js"
import { metered } from "./meter.js"
import { authorized } from "./principal.js"

export const ProofsHandlers = implement("proofs", (handlers) =>
  Effect.gen(function*() {
    const proofs = yield* Proofs
    return handlers
      .handle("create", ({ payload }) => Effect.flatMap(authorized("proofs:write"), (p) => metered(proofs.create(p, payload))))
      .handle("createBatch", ({ payload }) => Effect.flatMap(authorized("proofs:write"), (p) => metered(proofs.createBatch(p, payload))))
      .handle("list", ({ urlParams }) => Effect.flatMap(authorized("proofs:read"), (p) => proofs.list(p.account_id, urlParams)))
      .handle("get", ({ path }) => Effect.flatMap(authorized("proofs:read"), (p) => proofs.get(p.account_id, path.id)))
      .handle("verify", ({ path }) => Effect.flatMap(authorized("proofs:read"), (p) => metered(proofs.verify(p, path.id))))
  }))

export const CircuitsHandlers = implement("circuits", (handlers) =>
  Effect.gen(function*() {
    const catalog = yield* CircuitCatalog
    const describe = ({ verification_key: _key, field_modulus: _r, ...circuit }: CircuitCatalog["Type"]["list"][number]) => circuit
    return handlers
      .handle("list", () => Effect.succeed({ circuits: catalog.list.map(describe) }))
      .handle("get", ({ path }) =>
        Option.match(catalog.get(path.name), {
          onNone: () => Effect.fail(new NotFound({ message: `No proof type ${JSON.stringify(path.name)}; GET /api/v1/circuits lists them` })),
          onSome: (spec) => Effect.succeed({ ...describe(spec), verification_key: spec.verification_key })
        }))
  }))
