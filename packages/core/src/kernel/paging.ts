import { Schema } from "effect"

/** Lists are in id order, which is creation order: ids begin with their creation time. */
export interface Page {
  readonly limit: number
  /** Return rows whose id sorts after this one. */
  readonly startingAfter?: string | undefined
}

export interface PageOf<A> {
  readonly items: ReadonlyArray<A>
  readonly total: number
  readonly has_more: boolean
}

export const DEFAULT_PAGE_LIMIT = 20
export const MAX_PAGE_LIMIT = 100

/** Every list's query: `?limit=` (1–100, default 20) and `?starting_after=<id>`, as a query string carries them. */
export const PageQuery = Schema.Struct({
  limit: Schema.optionalWith(Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, MAX_PAGE_LIMIT)), { exact: true }),
  starting_after: Schema.optionalWith(Schema.String, { exact: true })
})
export type PageQuery = typeof PageQuery.Type

/** A decoded list query → the page storage reads, with the default limit. */
export const pageOf = (query: PageQuery): Page =>
  query.starting_after === undefined
    ? { limit: query.limit ?? DEFAULT_PAGE_LIMIT }
    : { limit: query.limit ?? DEFAULT_PAGE_LIMIT, startingAfter: query.starting_after }
