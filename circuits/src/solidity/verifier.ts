import ejs from "ejs"
import { existsSync, readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"

const BN128_Q = 21888242871839275222246405745257275088696311157297823662689037894645226208583n

let template: string | undefined

/** snarkjs's own Groth16 template, from the installed snarkjs, so the contract is exactly what `snarkjs zkey export solidityverifier` writes. */
const groth16Template = (): string => {
  if (template !== undefined) return template
  let dir = dirname(createRequire(import.meta.url).resolve("snarkjs"))
  const file = "templates/verifier_groth16.sol.ejs"
  while (!existsSync(join(dir, file))) {
    const up = dirname(dir)
    if (up === dir) throw new Error("snarkjs's Groth16 Solidity template is not installed")
    dir = up
  }
  template = readFileSync(join(dir, file), "utf8")
  return template
}

const coordinate = (value: unknown, what: string): string => {
  if (typeof value !== "string" || !/^\d{1,80}$/.test(value) || BigInt(value) >= BN128_Q) {
    throw new Error(`verification key: ${what} is not a bn128 coordinate`)
  }
  return value
}

const array = (value: unknown, length: number, what: string): ReadonlyArray<unknown> => {
  if (!Array.isArray(value) || value.length < length) throw new Error(`verification key: ${what} is malformed`)
  return value
}

const g1 = (value: unknown, what: string) => array(value, 2, what).slice(0, 2).map((c, i) => coordinate(c, `${what}[${i}]`))

const g2 = (value: unknown, what: string) =>
  array(value, 2, what).slice(0, 2).map((pair, i) => array(pair, 2, `${what}[${i}]`).slice(0, 2).map((c, j) => coordinate(c, `${what}[${i}][${j}]`)))

/**
 * The Solidity verifier for a snarkjs Groth16 bn128 verification key. Every value is checked to be
 * a decimal coordinate before it reaches the template, which pastes values into the source
 * unescaped.
 */
export const renderGroth16Verifier = (verificationKey: unknown): string => {
  if (typeof verificationKey !== "object" || verificationKey === null) throw new Error("verification key: not an object")
  const vk = verificationKey as Record<string, unknown>
  if (vk["protocol"] !== "groth16") throw new Error("verification key: not a Groth16 key")
  if (vk["curve"] !== "bn128") throw new Error("verification key: not a bn128 key")
  const nPublic = vk["nPublic"]
  if (typeof nPublic !== "number" || !Number.isInteger(nPublic) || nPublic < 0) throw new Error("verification key: nPublic is malformed")
  const ic = array(vk["IC"], nPublic + 1, "IC")
  if (ic.length !== nPublic + 1) throw new Error("verification key: IC does not have nPublic + 1 points")
  return ejs.render(groth16Template(), {
    vk_alpha_1: g1(vk["vk_alpha_1"], "vk_alpha_1"),
    vk_beta_2: g2(vk["vk_beta_2"], "vk_beta_2"),
    vk_gamma_2: g2(vk["vk_gamma_2"], "vk_gamma_2"),
    vk_delta_2: g2(vk["vk_delta_2"], "vk_delta_2"),
    IC: ic.map((p, i) => g1(p, `IC[${i}]`)),
    nPublic
  })
}
