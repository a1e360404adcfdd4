export {
  CircuitCompilerLive,
  type CircuitCompilerOptions,
  developmentSetupIsNative,
  inspectPtau,
  makeCircuitCompiler,
  prepareDevelopmentPtau
} from "./compiler.js"
export { type CheckedUpload, checkUpload, type UploadProblem } from "./upload.js"
export { renderGroth16Verifier } from "../solidity/verifier.js"
