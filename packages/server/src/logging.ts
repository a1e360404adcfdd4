import { Cause, HashMap, Inspectable, List, Logger, type LogLevel, Redacted } from "effect"

/** One method of a host's logger: pino's `(fields, message)` or console's `(message, ...rest)`. */
export type HostLogMethod = (first: unknown, ...rest: Array<unknown>) => void

/**
 * The shape that pino's loggers (and bunyan's, and `console`) share. `debug`, `trace` and `fatal`
 * are optional: a missing `debug`/`trace` drops those lines, a missing `fatal` goes to `error`.
 */
export interface HostLogger {
  readonly info: HostLogMethod
  readonly warn: HostLogMethod
  readonly error: HostLogMethod
  readonly debug?: HostLogMethod | undefined
  readonly trace?: HostLogMethod | undefined
  readonly fatal?: HostLogMethod | undefined
  readonly child?: unknown
}

/**
 * How a host logger is called. pino and bunyan merge a leading object into their JSON line, so
 * they get `(fields, message)`; console (and anything else) would print that object before the
 * message, so it gets `(message, fields)`, the fields left out when there are none. Telling them
 * apart by `child()` is what pino, bunyan and their wrappers have and `console` lacks.
 */
export type HostLogStyle = "fields-first" | "message-first"

export const hostLogStyle = (host: HostLogger): HostLogStyle => typeof host.child === "function" ? "fields-first" : "message-first"

/** A log value safe for any host: Redacted shows its placeholder, errors their message, nothing throws in a serializer. */
const plain = (value: unknown): unknown =>
  Redacted.isRedacted(value) ? "<redacted>" : value instanceof Error ? value.message : Inspectable.toJSON(value)

const messageText = (message: unknown): { readonly text: string; readonly extra: ReadonlyArray<unknown> } => {
  const parts = Array.isArray(message) ? message : [message]
  const strings = parts.filter((part): part is string => typeof part === "string")
  return { text: strings.join(" "), extra: parts.filter((part) => typeof part !== "string").map(plain) }
}

const methodFor = (host: HostLogger, level: LogLevel.LogLevel): HostLogMethod | undefined => {
  switch (level._tag) {
    case "Fatal":
      return host.fatal ?? host.error
    case "Error":
      return host.error
    case "Warning":
      return host.warn
    case "Info":
      return host.info
    case "Debug":
      return host.debug
    case "Trace":
      return host.trace ?? host.debug
    default:
      return undefined
  }
}

/** Effect's log lines handed to the host's logger: the message, and the annotations, spans and cause as fields. */
export const hostLogger = (host: HostLogger): Logger.Logger<unknown, void> => {
  const style = hostLogStyle(host)
  return Logger.make(({ annotations, cause, logLevel, message, spans }) => {
    const method = methodFor(host, logLevel)
    if (method === undefined) return
    const fields: Record<string, unknown> = {}
    for (const [key, value] of HashMap.toEntries(annotations)) fields[key] = plain(value)
    const { extra, text } = messageText(message)
    if (extra.length > 0) fields.details = extra.length === 1 ? extra[0] : extra
    if (!Cause.isEmpty(cause)) fields.cause = Cause.pretty(cause, { renderErrorCause: true })
    if (List.isCons(spans)) fields.spans = List.toArray(spans).map((span) => span.label)
    if (style === "fields-first") method.call(host, fields, text)
    else if (Object.keys(fields).length === 0) method.call(host, text)
    else method.call(host, text, fields)
  })
}

/**
 * The logger of every mzk process and of `createMzk`: the host's logger when one is given,
 * otherwise JSON lines on stdout, one format whatever the mode (`serve`, `worker`, embedded).
 */
export const mzkLogger = (host?: HostLogger | undefined) =>
  host === undefined ? Logger.json : Logger.replace(Logger.defaultLogger, hostLogger(host))
