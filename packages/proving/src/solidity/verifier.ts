import ejs from "ejs"
import { existsSync, readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"

const BN128_Q = 21888242871839275222246405745257275088696311157297823662689037894645226208583n

const BN128_R = 21888242871839275222246405745257275088548364400416034343698204186575808495617n

const templates = new Map<string, string>()

/**
 * snarkjs's own template for a system, from the installed snarkjs, so the contract is exactly what
 * `snarkjs zkey export solidityverifier` writes.
 */
const templateOf = (system: "groth16" | "plonk" | "fflonk"): string => {
  const cached = templates.get(system)
  if (cached !== undefined) return cached
  let dir = dirname(createRequire(import.meta.url).resolve("snarkjs"))
  const file = `templates/verifier_${system}.sol.ejs`
  while (!existsSync(join(dir, file))) {
    const up = dirname(dir)
    if (up === dir) throw new Error(`snarkjs's ${system} Solidity template is not installed`)
    dir = up
  }
  const template = readFileSync(join(dir, file), "utf8")
  templates.set(system, template)
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
  return ejs.render(templateOf("groth16"), {
    vk_alpha_1: g1(vk["vk_alpha_1"], "vk_alpha_1"),
    vk_beta_2: g2(vk["vk_beta_2"], "vk_beta_2"),
    vk_gamma_2: g2(vk["vk_gamma_2"], "vk_gamma_2"),
    vk_delta_2: g2(vk["vk_delta_2"], "vk_delta_2"),
    IC: ic.map((p, i) => g1(p, `IC[${i}]`)),
    nPublic
  })
}

/**
 * Every value of a PLONK or FFLONK key checked before it reaches the template (which pastes values
 * into the source unescaped): strings are decimal integers, numbers are integers, nothing else but
 * arrays and the expected `protocol` and `curve`.
 */
const checkedKey = (verificationKey: unknown, system: "plonk" | "fflonk"): Record<string, unknown> => {
  if (typeof verificationKey !== "object" || verificationKey === null) throw new Error("verification key: not an object")
  const vk = verificationKey as Record<string, unknown>
  if (vk["protocol"] !== system) throw new Error(`verification key: not a ${system} key`)
  if (vk["curve"] !== "bn128") throw new Error("verification key: not a bn128 key")
  const walk = (value: unknown, what: string): void => {
    if (typeof value === "string") {
      if (!/^\d{1,80}$/.test(value)) throw new Error(`verification key: ${what} is not a decimal integer`)
    } else if (typeof value === "number") {
      if (!Number.isSafeInteger(value) || value < 0) throw new Error(`verification key: ${what} is not a count`)
    } else if (Array.isArray(value)) {
      value.forEach((v, i) => walk(v, `${what}[${i}]`))
    } else {
      throw new Error(`verification key: ${what} is malformed`)
    }
  }
  for (const [key, value] of Object.entries(vk)) if (key !== "protocol" && key !== "curve") walk(value, key)
  const nPublic = vk["nPublic"]
  if (typeof nPublic !== "number" || nPublic > 10_000) throw new Error("verification key: nPublic is malformed")
  return vk
}

const power = (base: bigint, exponent: number): bigint => {
  let acc = 1n
  for (let i = 0; i < exponent; i++) acc = (acc * base) % BN128_R
  return acc
}

/**
 * The Solidity verifier for a snarkjs bn128 verification key of any system mzk sets up: Groth16,
 * PLONK or FFLONK, from snarkjs's own template for it. FFLONK's template also takes powers of its
 * roots of unity, computed here as snarkjs's exporter does.
 */
export const renderVerifier = (verificationKey: unknown): string => {
  const protocol = typeof verificationKey === "object" && verificationKey !== null
    ? (verificationKey as Record<string, unknown>)["protocol"]
    : undefined
  if (protocol === "plonk") return ejs.render(templateOf("plonk"), checkedKey(verificationKey, "plonk"))
  if (protocol === "fflonk") {
    const vk = { ...checkedKey(verificationKey, "fflonk") }
    const root = (name: string) => {
      const value = vk[name]
      if (typeof value !== "string") throw new Error(`verification key: ${name} is missing`)
      return BigInt(value) % BN128_R
    }
    vk["w3_2"] = power(root("w3"), 2).toString()
    vk["w4_2"] = power(root("w4"), 2).toString()
    vk["w4_3"] = power(root("w4"), 3).toString()
    for (let i = 1; i < 8; i++) vk[`w8_${i}`] = power(root("w8"), i).toString()
    return ejs.render(templateOf("fflonk"), vk)
  }
  return renderGroth16Verifier(verificationKey)
}
