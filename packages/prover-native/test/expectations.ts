import { expect } from "@effect/vitest"
import { inv, mod } from "./reference.js"

/** The message of the `MZK_INVALID_INPUT` error `f` throws; a test failure when it throws none. */
export const refusal = (f: () => unknown, accepted = "the arguments were accepted") => {
  try {
    f()
  } catch (e) {
    expect((e as { code?: string }).code).toBe("MZK_INVALID_INPUT")
    return (e as Error).message
  }
  throw new Error(accepted)
}

/** A field's add, sub, mul, sqr, neg and inv of `a` and `b`, run by `run`, against BigInt mod `p`. */
export const expectFieldOps = (run: (op: string, ...xs: Array<bigint>) => bigint, a: bigint, b: bigint, p: bigint) => {
  expect(run("add", a, b)).toBe(mod(a + b, p))
  expect(run("sub", a, b)).toBe(mod(a - b, p))
  expect(run("mul", a, b)).toBe(mod(a * b, p))
  expect(run("sqr", a)).toBe(mod(a * a, p))
  expect(run("neg", a)).toBe(mod(-a, p))
  expect(run("inv", a)).toBe(inv(a, p))
}
