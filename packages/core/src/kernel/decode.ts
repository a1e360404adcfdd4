import { Effect, ParseResult, Schema, type SchemaAST } from "effect"
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
  invalidRequest(ParseResult.ArrayFormatter.formatErrorSync(new ParseResult.ParseError({ issue: readable(error.issue) })).map((issue) => ({
    path: issue.path.map(String).join("."),
    message: boundedMessage(issue.message)
  })))

const ONE_OF = "must be one of: "

const isChoiceClause = (issue: ParseResult.ParseIssue) => issue._tag === "Type" && issue.message?.startsWith(ONE_OF) === true

/** The longest string value a message quotes (a value can be a megabyte, or a secret pasted into the wrong field). */
const MAX_QUOTED = 100

const quoted = (actual: unknown): unknown =>
  typeof actual === "string" && actual.length > MAX_QUOTED ? `${actual.slice(0, MAX_QUOTED)}…` : actual

/** A value as a custom message quotes it: JSON, cut short like the formatter's quotes. */
export const quote = (value: unknown): string => {
  const text = JSON.stringify(quoted(value)) ?? "a value"
  return text.length > 2 * MAX_QUOTED ? `${text.slice(0, 2 * MAX_QUOTED)}…` : text
}

const isChoice = (ast: SchemaAST.AST): ast is SchemaAST.Union<SchemaAST.Literal> =>
  ast._tag === "Union" && ast.types.every((member) => member._tag === "Literal")

/**
 * The issue tree made readable before it is formatted. A value outside a choice of literals
 * (`?status=bogus`) fails every member, and the formatter wrote one "Expected …" per member; this
 * makes it one clause naming the allowed values. And a string the caller sent is quoted cut short
 * (`MAX_QUOTED`), so the message's own words (a list of what is allowed) are never what gets cut.
 */
const readable = (issue: ParseResult.ParseIssue): ParseResult.ParseIssue => {
  switch (issue._tag) {
    case "Composite":
      if (isChoice(issue.ast)) {
        return new ParseResult.Type(issue.ast, quoted(issue.actual), ONE_OF + issue.ast.types.map((member) => String(member.literal)).join(", "))
      }
      {
        const issues = Array.isArray(issue.issues)
          ? issue.issues.map(readable)
          : [readable(issue.issues as ParseResult.ParseIssue)]
        // One value or several of a choice (`?type=a&type=b`): a single bad value fails both
        // members, and the choice's clause is the one that says what to send.
        const choice = issue.ast._tag === "Union" ? issues.find(isChoiceClause) : undefined
        return choice ?? new ParseResult.Composite(issue.ast, issue.actual, issues as [ParseResult.ParseIssue, ...Array<ParseResult.ParseIssue>], issue.output)
      }
    case "Pointer":
      return new ParseResult.Pointer(issue.path, issue.actual, readable(issue.issue))
    case "Refinement":
      return new ParseResult.Refinement(issue.ast, quoted(issue.actual), issue.kind, readable(issue.issue))
    case "Transformation":
      return new ParseResult.Transformation(issue.ast, quoted(issue.actual), issue.kind, readable(issue.issue))
    case "Type":
      return new ParseResult.Type(issue.ast, quoted(issue.actual), issue.message)
    default:
      return issue
  }
}

/** A backstop for values that are not strings (an object, an array), which the formatter quotes whole. */
const MAX_MESSAGE = 1000

/**
 * Schema messages quote the offending value ("Expected …, actual <value>"): strings are cut before
 * (`MAX_QUOTED`), and what is still too long is cut here, at the last space before the limit, so
 * no word of the schema's own text is cut in two.
 */
const boundedMessage = (message: string): string => {
  if (message.length <= MAX_MESSAGE) return message
  const cut = message.slice(0, MAX_MESSAGE)
  const space = cut.lastIndexOf(" ")
  return `${space > MAX_MESSAGE / 2 ? cut.slice(0, space) : cut}…`
}
