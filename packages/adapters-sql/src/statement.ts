import type { StorageError } from "@mzk/core"
import type { Effect, Option } from "effect"
import type { CompiledQuery, Compilable, Kysely, QueryResult } from "kysely"
import type { Database } from "./schema.js"

/**
 * A statement built with Kysely once, from named placeholders, and run many times with values:
 * what the repositories use for the queries every request makes, so a request pays neither
 * Kysely's builder nor its compiler (about 9 µs a query in the server, measured).
 */
export interface Statement<P, R> {
  readonly execute: (params: P) => Effect.Effect<QueryResult<R>, StorageError>
  /** The rows, each through `row` if given (in the same step as the query). */
  readonly rows: <B = R>(params: P, row?: (row: R) => B) => Effect.Effect<Array<B>, StorageError>
  /** The first row, if any, through `row` if given. */
  readonly first: <B = R>(params: P, row?: (row: R) => B) => Effect.Effect<Option.Option<B>, StorageError>
  readonly affected: (params: P) => Effect.Effect<number, StorageError>
}

/**
 * Stands in for one named value while a statement is built. The values a statement takes must be
 * scalars placed where Kysely makes a parameter (`where`, `set`, `values`, `limit`): a placeholder
 * cannot change the SQL, so a list for `in`, an optional filter or arithmetic on a value need a
 * query built per call instead. Arithmetic or string use fails loudly rather than compiling wrong.
 */
class Placeholder {
  constructor(readonly name: string) {}
  [Symbol.toPrimitive](): never {
    throw new Error(`Statement parameter ${this.name} is a placeholder: compute values before passing them in`)
  }
}

const placeholders = new Proxy({}, { get: (_, name) => new Placeholder(String(name)) })

/** Where each compiled parameter comes from: a named value, or a constant of the statement. */
type Slot = { readonly name: string } | { readonly value: unknown }

/**
 * Compiles `build` once, with placeholders for the named values of `P`, and gives what makes each
 * run's compiled query: the same SQL with that run's values bound in place of the placeholders.
 * The SQL is the same on the root handle and in a transaction; only where it runs differs.
 */
export const compileStatement = <P extends Record<string, unknown>, R>(
  db: Kysely<Database>,
  build: (db: Kysely<Database>, params: P) => Compilable<R>
): ((params: P) => () => CompiledQuery<R>) => {
  const template = build(db, placeholders as P).compile()
  const slots: ReadonlyArray<Slot> = template.parameters.map((value) =>
    value instanceof Placeholder ? { name: value.name } : { value }
  )
  return (params) => (): CompiledQuery<R> => {
    const parameters = new Array<unknown>(slots.length)
    for (let i = 0; i < slots.length; i++) {
      const slot = slots[i]!
      parameters[i] = "name" in slot ? params[slot.name] : slot.value
    }
    return { ...template, parameters }
  }
}
