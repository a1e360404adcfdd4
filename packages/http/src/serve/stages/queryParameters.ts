import { type ErrorDetail, invalidRequest } from "@mzk/core"
import { Effect } from "effect"
import type { QueryNames } from "../compile.js"
import type { RequestRecord, Stage } from "../pipeline.js"
import type { EndpointEnv } from "./env.js"

// A parameter's name is echoed in the answer; one a megabyte long (or a secret pasted into the
// wrong place) is cut short there.
const MAX_NAME = 64

const shown = (name: string) => (name.length <= MAX_NAME ? name : `${name.slice(0, MAX_NAME)}…`)

const isBracketed = (name: string, prefix: string) =>
  name.length > prefix.length + 2 && name.startsWith(prefix) && name[prefix.length] === "[" && name.endsWith("]")

/** "it takes limit, starting_after, metadata[<key>]", or that it takes none. */
const takes = ({ names, prefixes }: QueryNames) => {
  const all = [...names, ...prefixes.map((prefix) => `${prefix}[<key>]`)]
  return all.length === 0 ? "this endpoint takes no query parameters" : `not a query parameter of this endpoint, which takes: ${all.join(", ")}`
}

/**
 * A query parameter the endpoint does not declare is a 400 naming it, as Stripe answers: a typo
 * (`?stauts=failed`) or a parameter of another API used to be ignored, and the caller then read an
 * unfiltered list as if it were filtered. Runs after `controlCharacters`, which parsed the query.
 */
export const queryParameters = (declared: QueryNames): Stage<RequestRecord, EndpointEnv> => {
  const message = takes(declared)
  return (record, next) => {
    let unknown: Array<ErrorDetail> | undefined
    for (const name in record.query) {
      if (declared.names.has(name) || declared.prefixes.some((prefix) => isBracketed(name, prefix))) continue
      ;(unknown ??= []).push({ path: shown(name), message })
    }
    return unknown === undefined ? next(record) : Effect.fail(invalidRequest(unknown))
  }
}
