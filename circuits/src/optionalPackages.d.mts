export declare const OPTIONAL_PACKAGES: Readonly<Record<string, { readonly version: string; readonly feature: string }>>
export declare function missingPackages(
  names: ReadonlyArray<string>,
  isInstalled?: (name: string) => boolean
): { readonly missing: ReadonlyArray<string>; readonly message: string } | undefined
export declare function importOptional(name: string): Promise<unknown>
