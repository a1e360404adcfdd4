import type { Principal } from "@mzk/core"
import { Effect, Redacted } from "effect"
import { header } from "../../wire/message.js"
import type { RequestRecord, Stage } from "../pipeline.js"
import type { EndpointEnv } from "./env.js"

/**
 * The token of an `Authorization: Bearer <token>` header, or "" (refused as a missing key) for any
 * other scheme. RFC 9110 §11.1: the scheme is case-insensitive; RFC 6750 §2.1: one or more spaces.
 */
const BEARER = /^bearer +/i
const bearerToken = (authorization: string | undefined): string => {
  const scheme = authorization === undefined ? null : BEARER.exec(authorization)
  return scheme === null ? "" : authorization!.slice(scheme[0].length)
}

export type Authenticate = (token: Redacted.Redacted<string>) => Effect.Effect<Principal, unknown>

/** The bearer check of a secured endpoint: the record gains its principal (401 otherwise). */
export const authenticate = (check: Authenticate): Stage<RequestRecord, EndpointEnv> => (record, next) =>
  Effect.flatMap(check(Redacted.make(bearerToken(header(record.request, "authorization")))), (principal) => next({ ...record, principal }))
