// Node runs WebAssembly, but ES2023's lib and @types/node 20 declare none of its functions: these
// are the calls iden3.mjs makes to read a circom witness calculator's exports.
declare namespace WebAssembly {
  interface Module {
    readonly __wasmModule: never
  }
  interface ModuleImportDescriptor {
    readonly module: string
    readonly name: string
    readonly kind: "function" | "table" | "memory" | "global" | "tag"
  }
  const Module: { imports(module: Module): Array<ModuleImportDescriptor> }
  function compile(bytes: Uint8Array): Promise<Module>
  function instantiate(module: Module, imports: Record<string, Record<string, unknown>>): Promise<{ readonly exports: Record<string, unknown> }>
}
