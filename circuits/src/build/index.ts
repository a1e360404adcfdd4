export {
  CircuitCompilerLive,
  type CircuitCompilerOptions,
  inspectPtau,
  makeCircuitCompiler,
  prepareDevelopmentPtau
} from "./compiler.js"
export { renderGroth16Verifier } from "../solidity/verifier.js"
