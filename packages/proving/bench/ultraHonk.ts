// UltraHonk (Noir, bb.js) figures for the proof-system table: per program, the compile,
// setup (verification key), proving and verification times, the proof's size and the gas of one
// on-chain verification by bb.js's HonkVerifier (solc + @ethereumjs/evm, as the tests run it).
//
//   pnpm bench packages/proving/bench/ultraHonk.ts            the small program (2^12 gates after padding)
//   pnpm bench packages/proving/bench/ultraHonk.ts --large    also a loop of squarings padded to 2^16 gates
//
// The CRS is a development one (fresh τ), cached in ~/.cache/mzk-bench/noir-crs-<points>: making
// 65,537 points takes minutes on a shared 2-core machine, once. Every proof is verified by bb.js.
import { createEVM } from "@ethereumjs/evm"
import { bytesToHex, hexToBytes } from "@ethereumjs/util"
import { proofCalldata } from "@mzk/core"
import { Either } from "effect"
import { existsSync } from "node:fs"
import { homedir, loadavg } from "node:os"
import { join } from "node:path"
import solc from "solc"
import {
  compileNoir,
  crsPoints,
  type NoirCrs,
  type NoirProgram,
  proveUltraHonk,
  publicSignalsDecimal,
  ultraHonkProofRecord,
  ultraHonkSetup,
  ultraHonkSolidityVerifierForKey,
  verifyUltraHonk,
  writeDevelopmentCrs
} from "../src/noir/index.js"

// --smoke (CI's check that the bench runs, scripts/test/benchSmoke.test.ts): the small program, proved once.
const SMOKE = process.argv.includes("--smoke")
const PROVE_RUNS = SMOKE ? 1 : 3
const MANIFEST = `[package]\nname = "bench"\ntype = "bin"\nauthors = [""]\n\n[dependencies]\n`
const PROGRAMS: ReadonlyArray<{ name: string; source: string; inputs: Record<string, string>; power: number }> = [
  {
    name: "sum (x + y, an assert)",
    source: "fn main(x: Field, y: pub Field) -> pub Field {\n    assert(x != y);\n    x + y\n}\n",
    inputs: { x: "3", y: "4" },
    power: 12
  },
  ...(process.argv.includes("--large") && !SMOKE
    ? [{
      name: "squarings (40,000 rounds of acc * acc + y)",
      source: "fn main(x: Field, y: pub Field) -> pub Field {\n    let mut acc = x;\n    for _ in 0..40000 {\n        acc = acc * acc + y;\n    }\n    acc\n}\n",
      inputs: { x: "3", y: "4" },
      power: 16
    }]
    : [])
]

const ms = (start: number) => `${(performance.now() - start).toFixed(0)} ms`
const cpu = () => process.cpuUsage()
const cpuMs = (from: NodeJS.CpuUsage) => {
  const d = process.cpuUsage(from)
  return `${((d.user + d.system) / 1000).toFixed(0)} ms CPU (this process; bb.js's worker thread included)`
}

const crsFor = async (power: number): Promise<NoirCrs> => {
  const points = 2 ** power + 1
  const path = join(homedir(), ".cache", "mzk-bench", `noir-crs-${points}`)
  if (existsSync(join(path, "bn254_g1.dat")) && crsPoints({ path }) >= points) return { path }
  const t = performance.now()
  const crs = await writeDevelopmentCrs(path, points)
  console.log(`  development CRS, ${points} points: ${ms(t)} (made once, cached)`)
  return crs
}

const gasOf = async (solidity: string, proof: Uint8Array, publicInputs: ReadonlyArray<string>): Promise<bigint> => {
  const output = JSON.parse(solc.compile(JSON.stringify({
    language: "Solidity",
    sources: { "Verifier.sol": { content: solidity } },
    settings: { evmVersion: "cancun", optimizer: { enabled: true, runs: 1 }, outputSelection: { "*": { "*": ["evm.bytecode.object"] } } }
  }))) as { contracts: Record<string, Record<string, { evm: { bytecode: { object: string } } }>> }
  const evm = await createEVM({ allowUnlimitedContractSize: true })
  const deployed = await evm.runCall({
    data: hexToBytes(`0x${output.contracts["Verifier.sol"]!["HonkVerifier"]!.evm.bytecode.object}`),
    gasLimit: 30_000_000n
  })
  // The call the API's /proofs/{id}/calldata answers with.
  const call = proofCalldata(ultraHonkProofRecord(proof), publicSignalsDecimal(publicInputs))
  if (Either.isLeft(call)) throw new Error(call.left.message)
  const result = await evm.runCall({ to: deployed.createdAddress!, data: hexToBytes(call.right.calldata as `0x${string}`), gasLimit: 30_000_000n })
  if (result.execResult.exceptionError !== undefined || bytesToHex(result.execResult.returnValue) !== "0x" + "1".padStart(64, "0")) {
    throw new Error("the HonkVerifier did not accept the proof")
  }
  return result.execResult.executionGasUsed
}

console.log(`UltraHonk (bb.js 0.82.2, noir_wasm 1.0.0-beta.3), one thread; load average ${loadavg().map((l) => l.toFixed(1)).join(" ")}`)
for (const p of PROGRAMS) {
  console.log(`\n${p.name}`)
  const crs = await crsFor(p.power)
  let t = performance.now()
  const compiled = await compileNoir({ "Nargo.toml": MANIFEST, "src/main.nr": p.source })
  if (!compiled.ok) throw new Error(compiled.message)
  const program: NoirProgram = compiled.program
  console.log(`  compile (noir_wasm): ${ms(t)}`)
  t = performance.now()
  let c = cpu()
  const { gates, vk } = await ultraHonkSetup(program, crs)
  console.log(`  setup (verification key, ${vk.length} bytes; ${gates} gates before padding to 2^${p.power}): ${ms(t)}, ${cpuMs(c)}`)
  let proof: Awaited<ReturnType<typeof proveUltraHonk>> | undefined
  for (let run = 1; run <= PROVE_RUNS; run++) {
    t = performance.now()
    c = cpu()
    proof = await proveUltraHonk(program, p.inputs, crs)
    console.log(`  prove #${run} (witness + UltraHonk, bb.js started each time): ${ms(t)}, ${cpuMs(c)}`)
  }
  t = performance.now()
  if (!(await verifyUltraHonk(vk, proof!, crs))) throw new Error("bb.js did not verify the proof")
  console.log(`  verify (bb.js, started for it): ${ms(t)}`)
  console.log(`  proof: ${proof!.proof.length} bytes + ${proof!.publicInputs.length} × 32 bytes of public inputs`)
  const solidity = await ultraHonkSolidityVerifierForKey(vk, crs)
  t = performance.now()
  console.log(`  gas per verification (HonkVerifier, cancun): ${await gasOf(solidity, proof!.proof, proof!.publicInputs)} (solc + EVM ${ms(t)})`)
}
process.exit(0)
