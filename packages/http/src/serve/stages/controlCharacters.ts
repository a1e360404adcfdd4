import { CONTROL_CHARACTERS_REFUSED, type ErrorDetail, hasControlCharacters, type InvalidRequest, invalidRequest } from "@mzk/core"
import { Effect } from "effect"
import type { RequestRecord, Stage } from "../pipeline.js"
import type { EndpointEnv } from "./env.js"

/** Query string → record, a repeated key as an array of its values (as the platform's UrlParams). */
const queryParams = (search: string) => {
  // Without a prototype, `?__proto__=x` is a parameter like any other (refused as unknown), not a prototype.
  const out: Record<string, string | Array<string>> = Object.create(null)
  for (const [key, value] of new URLSearchParams(search)) {
    const seen = out[key]
    out[key] = seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value]
  }
  return out
}

/**
 * A path parameter or query value holding a control character (C0, DEL, C1; percent-encoded, as
 * `%00`): a 400 naming each, on every endpoint, before anything decodes the value or looks it up.
 * None has a meaning in an id, a name or a filter, and Postgres `text` cannot hold a NUL, which it
 * answered with an error (a 503) where SQLite looked the value up and found nothing (a 404).
 */
const controlCharactersIn = (
  params: Readonly<Record<string, string>>,
  query: Readonly<Record<string, string | ReadonlyArray<string>>>
): InvalidRequest | undefined => {
  let refused: Array<ErrorDetail> | undefined
  const check = (name: string, value: string) => {
    if (hasControlCharacters(value)) (refused ??= []).push({ path: name, message: CONTROL_CHARACTERS_REFUSED })
  }
  for (const name in params) check(name, params[name]!)
  for (const name in query) {
    const value = query[name]!
    if (typeof value === "string") check(name, value)
    else for (const one of value) check(name, one)
  }
  return refused === undefined ? undefined : invalidRequest(refused)
}

/** The query, parsed onto the record, and the control-character check over it and the path parameters. */
export const controlCharacters: Stage<RequestRecord, EndpointEnv> = (record, next) => {
  const query = record.search === "" ? record.query : queryParams(record.search)
  const refused = controlCharactersIn(record.params, query)
  return refused === undefined ? next({ ...record, query }) : Effect.fail(refused)
}
