import type { Telemetry } from "@mzk/core"
import { Effect } from "effect"
import type { MzkResponse } from "../../wire/message.js"
import type { RequestRecord, Stage } from "../pipeline.js"

/** One line per request when the access log is on: never the query, a header or a body. */
const accessLog = ({ request, requestId, route }: RequestRecord, response: MzkResponse, seconds: number) => {
  const queryAt = request.url.indexOf("?")
  return Effect.annotateLogs(Effect.logInfo("request"), {
    event: "http.request",
    method: request.method,
    route,
    path: queryAt === -1 ? request.url : request.url.slice(0, queryAt),
    status: response.status,
    duration_ms: Math.round(seconds * 1e6) / 1e3,
    request_id: requestId
  })
}

/** Every answer, counted by route and status for the metrics, and logged when asked. */
export const observe = <R extends RequestRecord>(telemetry: Telemetry["Type"], logged: boolean): Stage<R> => (record, next) =>
  Effect.clockWith((clock) => {
    const startNs = clock.unsafeCurrentTimeNanos()
    return Effect.flatMap(next(record), (response) => {
      const seconds = Number(clock.unsafeCurrentTimeNanos() - startNs) / 1e9
      telemetry.request({ method: record.request.method, route: record.route, status: response.status, seconds })
      return logged ? Effect.as(accessLog(record, response, seconds), response) : Effect.succeed(response)
    })
  })
