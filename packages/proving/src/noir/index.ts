// Noir programs proven with UltraHonk: the engine the service integration
// calls. See docs/proving-systems-noir.md for versions, the CRS and measured figures.
export { MAX_NOIR_ABI_DEPTH, MAX_NOIR_ABI_VALUES, type NoirAbi, NoirAbiError, type NoirAbiType, noirCircuitInputs, noirPublicSignals, readNoirAbi } from "./abi.js"
export { compileNoirProject as compileNoir, NOIR_VERSION, type NoirCompileAnswer, type NoirFailure, type NoirFiles, parseNoirProgram } from "./compile.mjs"
export { CrsError, crsG2Words, crsPoints, type NoirCrs, readCrs, writeCrsFromPtau, writeDevelopmentCrs } from "../setup/crs.js"
export {
  type NoirProgram,
  noirWitness,
  proveUltraHonk,
  type UltraHonkOptions,
  type UltraHonkProof,
  UltraHonkError,
  ultraHonkSetup,
  ultraHonkSolidityVerifier,
  ultraHonkSolidityVerifierForKey,
  ultraHonkVerificationKey,
  verifyUltraHonk
} from "./ultraHonk.js"
export {
  publicInputsHex,
  publicSignalsDecimal,
  ultraHonkKeyBytes,
  ultraHonkKeyRecord,
  type UltraHonkKeyRecord,
  ultraHonkProofOf,
  ultraHonkProofRecord,
  verifyUltraHonkRecord
} from "./records.js"
