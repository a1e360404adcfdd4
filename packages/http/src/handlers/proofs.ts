import { CircuitCatalog, NotFound, Proofs, requireScope } from "@mzk/core"
import { Effect, Option } from "effect"
import { CurrentPrincipal } from "../api.js"
import { implement } from "./implement.js"
import { metered } from "./meter.js"

export const ProofsHandlers = implement("proofs", (handlers) =>
  Effect.gen(function*() {
    const proofs = yield* Proofs
    const principal = (scope: "proofs:read" | "proofs:write") => Effect.tap(CurrentPrincipal, (p) => requireScope(p, scope))
    return handlers
      .handle("create", ({ payload }) => Effect.flatMap(principal("proofs:write"), (p) => metered(proofs.create(p, payload))))
      .handle("createBatch", ({ payload }) => Effect.flatMap(principal("proofs:write"), (p) => metered(proofs.createBatch(p, payload))))
      .handle("list", ({ urlParams }) => Effect.flatMap(principal("proofs:read"), (p) => proofs.list(p.account_id, urlParams)))
      .handle("get", ({ path }) => Effect.flatMap(principal("proofs:read"), (p) => proofs.get(p.account_id, path.id)))
      .handle("verify", ({ path }) => Effect.flatMap(principal("proofs:read"), (p) => metered(proofs.verify(p, path.id))))
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
