import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "./annotations.js"
import { NotFoundWire } from "./errors.js"

export const CircuitInput = Schema.Struct({
  name: Schema.String,
  visibility: Schema.Literal("public", "private"),
  kind: Schema.Literal("field", "uint64", "bit"),
  length: Schema.optionalWith(Schema.Int, { exact: true })
})
export const Circuit = Schema.Struct({
  type: Schema.String,
  circuit: Schema.String,
  version: Schema.String,
  description: Schema.String,
  inputs: Schema.Array(CircuitInput),
  public_signals: Schema.Array(Schema.String)
}).annotations({ identifier: "Circuit" })
export const CircuitWithKey = Schema.Struct({
  ...Circuit.fields,
  verification_key: Schema.Unknown.annotations({ description: "The Groth16 verification key as snarkjs exports it" })
}).annotations({ identifier: "CircuitWithKey" })
export const CircuitList = Schema.Struct({ circuits: Schema.Array(Circuit) }).annotations({ identifier: "CircuitList" })

export class CircuitsGroup extends HttpApiGroup.make("circuits")
  .add(
    HttpApiEndpoint.get("list", "/circuits")
      .addSuccess(CircuitList)
      .annotate(OpenApi.Description, "The proof types on offer, with their inputs (public or private) and public signal order.")
  )
  .add(
    HttpApiEndpoint.get("get")`/circuits/${HttpApiSchema.param("name", Schema.String)}`
      .addSuccess(CircuitWithKey)
      .addError(NotFoundWire)
      .annotate(OpenApi.Description, "One proof type by its `type` name, with its verification key, so anyone can verify proofs independently.")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Circuits")
{}
