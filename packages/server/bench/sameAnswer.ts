/**
 * Whether two servers answered the same request alike (http.ts compares mzk with the hand-written
 * baseline before measuring either): the same status, the same headers and the same body, field
 * for field and in the same order, once what differs by nature between two answers is masked:
 * ids and timestamps (each becomes its shape, `proof_…`, `<timestamp>`), a rate-limit window's
 * seconds to its reset, and the transport's own headers (Date, Connection, Content-Length…).
 */

export interface Answer {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  /** The body's text. */
  readonly body: string
}

/** Headers that say nothing about the answer itself. */
const TRANSPORT = new Set(["date", "connection", "keep-alive", "content-length", "transfer-encoding"])
const ID = /^([a-z]+)_[0-9a-hjkmnp-tv-z]{26}$/
const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z$/

const mask = (value: unknown): unknown => {
  if (typeof value === "string") return TIMESTAMP.test(value) ? "<timestamp>" : value.replace(ID, "$1_…")
  if (Array.isArray(value)) return value.map(mask)
  if (typeof value === "object" && value !== null) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mask(v)]))
  return value
}

const maskHeader = (name: string, value: string) =>
  name === "ratelimit" ? value.replace(/;t=\d+/, ";t=…") : name === "request-id" ? value.replace(ID, "$1_…") : value

/** An answer as text with the masks applied: two answers are alike when their texts are equal. */
export const canonicalAnswer = (answer: Answer): string => {
  let body: string
  try {
    body = JSON.stringify(mask(JSON.parse(answer.body)))
  } catch {
    body = answer.body
  }
  const headers = Object.entries(answer.headers)
    .map(([name, value]) => [name.toLowerCase(), value] as const)
    .filter(([name]) => !TRANSPORT.has(name))
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, value]) => `${name}: ${maskHeader(name, value)}`)
  return [String(answer.status), ...headers, body].join("\n")
}

/** Nothing when every answer reads as the first; otherwise each answer's text, to print. */
export const differences = (answers: ReadonlyArray<{ readonly name: string; readonly answer: Answer }>): string | undefined => {
  const texts = answers.map(({ name, answer }) => ({ name, text: canonicalAnswer(answer) }))
  if (texts.every(({ text }) => text === texts[0]!.text)) return undefined
  return texts.map(({ name, text }) => `  ${name}:\n${text.split("\n").map((line) => `    ${line}`).join("\n")}`).join("\n")
}
