export {
  CircuitCompilerLive,
  removeStaleBuildDirs,
  type CircuitCompilerOptions,
  developmentSetupIsNative,
  inspectPtau,
  makeCircuitCompiler,
  NO_NOIR_CRS_MESSAGE,
  noirSetupOf,
  prepareDevelopmentPtau,
  wasmPages
} from "./compiler.js"
export { type CheckedUpload, checkUpload, type UploadProblem } from "./upload.js"
export { renderGroth16Verifier } from "../solidity/verifier.js"
