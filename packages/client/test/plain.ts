import type { Brand } from "effect"

/**
 * A core schema's type as it travels in JSON: brands dropped (an id is a plain `string` on the
 * wire), everything else kept, readonly-ness and optional fields included, so the generated
 * types can be compared with the core's for exact equality.
 */
export type Plain<T> = T extends Brand.Brand<string | symbol>
  ? T extends string ? string : T extends number ? number : T
  : T extends readonly [unknown, ...Array<unknown>] ? { readonly [K in keyof T]: Plain<T[K]> }
  : T extends ReadonlyArray<infer U> ? ReadonlyArray<Plain<U>>
  : T extends object ? { readonly [K in keyof T]: Plain<T[K]> }
  : T
