import { Schema } from "effect"

/** Lists are in id order, which is creation order: ids begin with their creation time. */
export interface Page {
  readonly limit: number
  /** Return the rows that come after this id in the list's order. */
  readonly startingAfter?: string | undefined
  /**
   * Oldest first (`asc`, the default), or newest first (`desc`: logs read from their latest entry,
   * as Stripe lists events), where `startingAfter` then pages on to older rows.
   */
  readonly order?: "asc" | "desc" | undefined
}

export interface PageOf<A> {
  readonly items: ReadonlyArray<A>
  readonly total: number
  readonly has_more: boolean
}

export const DEFAULT_PAGE_LIMIT = 20
export const MAX_PAGE_LIMIT = 100

/**
 * A list's query as a query string carries it: `?limit=` (1–100, default 20) and
 * `?starting_after=<id>`, an id of the kind the list holds. Anything else as a cursor is a 400
 * naming `starting_after` (a NUL there reached Postgres, which answered 503; a garbage cursor was
 * silently ignored); a well-formed id that matches nothing pages from where it would sort.
 */
export const pageQuery = <Id extends string>(cursor: Schema.Schema<Id, string>) =>
  Schema.Struct({
    limit: Schema.optionalWith(Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, MAX_PAGE_LIMIT)), { exact: true }),
    starting_after: Schema.optionalWith(cursor, { exact: true })
  })

/** A decoded list query, whatever its cursor's kind. */
export interface PageQuery {
  readonly limit?: number
  readonly starting_after?: string
}

/** A decoded list query → the page storage reads, with the default limit. */
export const pageOf = (query: PageQuery): Page =>
  query.starting_after === undefined
    ? { limit: query.limit ?? DEFAULT_PAGE_LIMIT }
    : { limit: query.limit ?? DEFAULT_PAGE_LIMIT, startingAfter: query.starting_after }
