import { Schema } from "effect"

export const SCOPES = [
  "keys:read",
  "keys:write",
  "webhooks:read",
  "webhooks:write",
  "proofs:read",
  "proofs:write",
  "proofs:verify",
  "circuits:read",
  "circuits:write",
  "events:read",
  "audit:read"
] as const
export const Scope = Schema.Literal(...SCOPES).annotations({ identifier: "Scope" })
export type Scope = typeof Scope.Type
