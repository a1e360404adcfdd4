import { Effect, Schema } from "effect"
import { type InvalidRequest } from "./errors.js"
import { invalidRequest } from "./decode.js"

/**
 * Every list is newest first, in id order (ids begin with their creation time), as Stripe lists.
 * A page is the rows after a cursor in that order (`startingAfter`: older ones), or the rows just
 * before it (`endingBefore`: newer ones), never both.
 */
export interface Page {
  readonly limit: number
  /** Return the rows that come after this id in the list's order: older rows. */
  readonly startingAfter?: string | undefined
  /**
   * Return the `limit` rows that come just before this id in the list's order (newer rows), still
   * newest first: the page before the one that began with this id.
   */
  readonly endingBefore?: string | undefined
}

export interface PageOf<A> {
  readonly items: ReadonlyArray<A>
  readonly total: number
  /** More rows lie beyond this page in the direction paged: older ones, or with `endingBefore`, newer ones. */
  readonly has_more: boolean
}

export const DEFAULT_PAGE_LIMIT = 20
export const MAX_PAGE_LIMIT = 100

/**
 * A list's query as a query string carries it: `?limit=` (1–100, default 20), and one cursor,
 * `?starting_after=<id>` or `?ending_before=<id>`, an id of the kind the list holds. Anything else
 * as a cursor is a 400 naming it (a NUL there reached Postgres, which answered 503; a garbage
 * cursor was silently ignored); a well-formed id that matches nothing pages from where it would
 * sort. Both cursors at once are refused by `pageOf`, since a struct's fields are spread into
 * other lists' queries, where a filter over the whole struct would be lost.
 */
export const pageQuery = <Id extends string>(cursor: Schema.Schema<Id, string>) =>
  Schema.Struct({
    limit: Schema.optionalWith(
      // A query parameter is documented by its encoded side, which NumberFromString alone
      // describes as "a string to be decoded into a number": the document says what the text holds.
      Schema.compose(
        Schema.String.annotations({
          jsonSchema: { type: "integer", minimum: 1, maximum: MAX_PAGE_LIMIT, description: `How many items a page holds (default ${DEFAULT_PAGE_LIMIT})` }
        }),
        Schema.NumberFromString
      ).pipe(
        Schema.int(),
        Schema.between(1, MAX_PAGE_LIMIT)
      ).annotations({
        description: `How many items a page holds, 1 to ${MAX_PAGE_LIMIT} (default ${DEFAULT_PAGE_LIMIT})`,
        // Not the description read back as "Expected …": one sentence for a number, a fraction or a word.
        message: () => ({ message: `must be an integer from 1 to ${MAX_PAGE_LIMIT}`, override: true })
      }),
      { exact: true }
    ),
    starting_after: Schema.optionalWith(
      cursor.annotations({ description: "A cursor: the page of items after this id in the list (older ones). Not with `ending_before`." }),
      { exact: true }
    ),
    ending_before: Schema.optionalWith(
      cursor.annotations({
        description: "A cursor: the page of items just before this id in the list (newer ones), still newest first. Not with `starting_after`."
      }),
      { exact: true }
    )
  })

/** A decoded list query, whatever its cursor's kind. */
export interface PageQuery {
  readonly limit?: number
  readonly starting_after?: string
  readonly ending_before?: string
}

export const BOTH_CURSORS_REFUSED = "cannot be sent with starting_after: page with one cursor at a time"

/** A decoded list query → the page storage reads, with the default limit; both cursors are a 400. */
export const pageOf = (query: PageQuery): Effect.Effect<Page, InvalidRequest> => {
  const limit = query.limit ?? DEFAULT_PAGE_LIMIT
  if (query.starting_after !== undefined && query.ending_before !== undefined) {
    return Effect.fail(invalidRequest([{ path: "ending_before", message: BOTH_CURSORS_REFUSED }]))
  }
  return Effect.succeed(
    query.starting_after !== undefined
      ? { limit, startingAfter: query.starting_after }
      : query.ending_before !== undefined
      ? { limit, endingBefore: query.ending_before }
      : { limit }
  )
}
