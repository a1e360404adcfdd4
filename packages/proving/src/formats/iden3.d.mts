// Types for formats.mjs (plain JS so the build job, a bare node process, can load it).
export declare const BN128_Q: bigint
export declare const BN128_R: bigint
export declare class FormatError extends Error {}
export interface PtauHeader {
  readonly curve: string
  readonly bn128: boolean
  readonly power: number
  readonly ceremonyPower: number
  readonly prepared: boolean
}
export declare function readPtauHeader(path: string): PtauHeader
export declare const requiredPower: (nConstraints: number, nPublic: number) => number
export interface R1csHeader {
  readonly prime: bigint
  readonly nVars: number
  readonly nOutputs: number
  readonly nPubInputs: number
  readonly nPrvInputs: number
  readonly nLabels: number
  readonly nConstraints: number
}
export declare function readR1csHeader(bytes: Uint8Array): R1csHeader
export declare function readR1csHeaderFile(file: string): R1csHeader
export interface ZkeyInfo {
  /** PLONK/FFLONK: `nConstraints` counts PLONK gates, not r1cs constraints. */
  readonly protocol: "groth16" | "plonk" | "fflonk"
  readonly curve: "bn128"
  readonly nVars: number
  readonly nPublic: number
  readonly domainSize: number
  readonly nConstraints: number
}
export declare function readZkeyInfo(bytes: Uint8Array): ZkeyInfo
export declare function deriveSignals(
  symText: string,
  counts: { readonly nOutputs: number; readonly nPubInputs: number; readonly nPrvInputs: number }
): {
  readonly inputs: ReadonlyArray<{ name: string; visibility: "public" | "private"; kind: "field"; dimensions: Array<number> }>
  readonly publicSignals: ReadonlyArray<string>
}
export declare function parseCircomErrors(
  output: string,
  prefixes: ReadonlyArray<string>
): { readonly message: string; readonly file: string | undefined; readonly line: number | undefined }
export interface SectionReader {
  readonly size: number
  read(pos: number, len: number): Buffer
}
export declare const fileReader: (fd: number) => SectionReader
export declare function readSections(
  reader: SectionReader,
  magic: string
): { readonly version: number; readonly sections: Map<number, Array<{ readonly start: number; readonly size: number }>> }
export declare const only: (
  sections: Map<number, Array<{ readonly start: number; readonly size: number }>>,
  type: number,
  magic: string
) => { readonly start: number; readonly size: number }
