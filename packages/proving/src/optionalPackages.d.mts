export declare const OPTIONAL_PACKAGES: Readonly<Record<string, { readonly version: string; readonly feature: string }>>
export declare function missingPackages(
  names: ReadonlyArray<string>,
  isInstalled?: (name: string) => boolean
): { readonly missing: ReadonlyArray<string>; readonly message: string } | undefined
/** An optional package a feature needs is not installed (or cannot be loaded) here: the operator's to fix, not the tenant's. */
export declare class MissingOptionalPackage extends Error {
  readonly missing: ReadonlyArray<string>
  constructor(missing: ReadonlyArray<string>, message: string)
}
export declare function importOptional(name: string, isInstalled?: (name: string) => boolean): Promise<unknown>
