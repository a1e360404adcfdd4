import { Effect, ParseResult, Schema } from "effect"
import { type ErrorDetail, InvalidRequest } from "./errors.js"

/** How untrusted input is decoded: unknown fields refused, every problem reported, not just the first. */
export const STRICT_PARSE = { errors: "all", onExcessProperty: "error" } as const

/** Decodes untrusted input, turning every schema issue into one `details` entry of a 400. */
export const decodeInput = <A, I>(schema: Schema.Schema<A, I>) => {
  const decode = Schema.decodeUnknown(schema, STRICT_PARSE)
  return (input: unknown): Effect.Effect<A, InvalidRequest> =>
    decode(input).pipe(Effect.mapError(invalidRequestFromParseError))
}

/** A 400 naming each problem: `details` for programs, the same in one sentence for people. */
export const invalidRequest = (details: ReadonlyArray<ErrorDetail>): InvalidRequest => {
  const summary = details.map((d) => (d.path === "" ? d.message : `${d.path}: ${d.message}`)).join("; ")
  return new InvalidRequest({ message: `Invalid request: ${summary}`, details })
}

/** Every issue of a schema failure as one `details` entry, with quoted values cut short. */
export const invalidRequestFromParseError = (error: ParseResult.ParseError): InvalidRequest =>
  invalidRequest(ParseResult.ArrayFormatter.formatErrorSync(error).map((issue) => ({
    path: issue.path.map(String).join("."),
    message: boundedMessage(issue.message)
  })))

const MAX_MESSAGE = 200

/**
 * Schema messages quote the offending value ("Expected …, actual <value>"). A value can be a
 * megabyte, or a secret pasted into the wrong field, so quoted values are cut short.
 */
export const boundedMessage = (message: string): string =>
  message.length <= MAX_MESSAGE ? message : `${message.slice(0, MAX_MESSAGE)}…`
