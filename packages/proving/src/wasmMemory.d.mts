export declare const WASM_PAGE: number
export declare const withMemoryCeiling: (bytes: Uint8Array, maxPages: number) => Uint8Array
