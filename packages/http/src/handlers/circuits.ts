import { CircuitCatalog } from "@mzk/core"
import { Effect, Option } from "effect"
import { NotFound } from "../api/errors.js"
import { implement } from "./handler.js"

export const CircuitsHandlers = Effect.map(CircuitCatalog, (catalog) => {
  const describe = ({ field_modulus: _r, verification_key: _key, ...circuit }: CircuitCatalog["Type"]["list"][number]) => circuit
  return implement("circuits", {
    list: () => Effect.succeed({ circuits: catalog.list.map(describe) }),
    get: ({ path }) =>
      Option.match(catalog.get(path.name), {
        onNone: () => Effect.fail(new NotFound({ message: `No proof type ${JSON.stringify(path.name)}; GET /api/v1/circuits lists them` })),
        onSome: (spec) => Effect.succeed({ ...describe(spec), verification_key: spec.verification_key })
      })
  })
})

