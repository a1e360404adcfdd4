export interface WorkspacePackage {
  readonly dir: string
  readonly manifest: { readonly name: string; readonly version: string; readonly private?: boolean }
}
export declare const publicPackages: () => Array<WorkspacePackage>
export declare const tarballName: (manifest: WorkspacePackage["manifest"]) => string
export declare const packRelease: (out: string, options?: { readonly check?: boolean; readonly env?: NodeJS.ProcessEnv }) => Record<string, string>
export declare const appManifest: (tarballs: Record<string, string>) => Record<string, unknown>
