import type { Schema } from "effect"

/** Request bodies refuse unknown fields and report every problem, not just the first. */
export const strictBody = <S extends Schema.Schema.Any>(schema: S) =>
  schema.annotations({ parseOptions: { onExcessProperty: "error", errors: "all" } }) as S
