import type { Effect } from "effect"

/** A request as the dispatcher sees it, whatever server it came from. */
export interface MzkRequest {
  readonly method: string
  /** The path and query, e.g. `/api/v1/proofs?limit=5`. */
  readonly url: string
  /** Header names in lower case. */
  readonly headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>
  /** The whole body as text, read on demand, refused past `MAX_BODY_BYTES`. */
  readonly body: Effect.Effect<string, BodyError>
}

export type BodyError = { readonly _tag: "BodyTooLarge" } | { readonly _tag: "BodyUnreadable" }

/** A response as the dispatcher answers; `body` undefined sends none (204). */
export interface MzkResponse {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: string | undefined
}

export const JSON_HEADERS = { "content-type": "application/json" } as const

export const header = (request: Pick<MzkRequest, "headers">, name: string): string | undefined => {
  const value = request.headers[name]
  return typeof value === "string" ? value : value?.[0]
}
