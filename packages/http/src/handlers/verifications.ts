import { Verifications } from "@mzk/core"
import { Effect } from "effect"
import { implement } from "./handler.js"

export const VerificationsHandlers = Effect.map(Verifications, (verifications) =>
  implement("verifications", {
    create: ({ payload, principal }) => verifications.verify(principal.account_id, payload)
  }))

export const VerificationKeysHandlers = Effect.map(Verifications, (verifications) =>
  implement("verificationKeys", {
    create: ({ payload, principal }) => verifications.createKey(principal.account_id, payload),
    list: ({ principal, urlParams }) => verifications.listKeys(principal.account_id, urlParams),
    get: ({ path, principal }) => verifications.getKey(principal.account_id, path.id),
    remove: ({ path, principal }) => verifications.deleteKey(principal.account_id, path.id)
  }))
