// The one place that knows which packages an embedder may leave out, and what to say when a feature
// needs one that is missing. Plain JavaScript so that the build child (a bare node process) and the
// TypeScript modules share it.
// @ts-check
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

const require = createRequire(import.meta.url);

/**
 * Each optional package: the version @mzk/proving is tested with, and the feature that needs it.
 * @type {Readonly<Record<string, { readonly version: string; readonly feature: string }>>}
 */
export const OPTIONAL_PACKAGES = {
  circom2: { version: "0.2.23", feature: "uploads of circom sources" },
  circomlib: { version: "2.0.5", feature: "uploads of circom sources" },
  "@noir-lang/noir_wasm": { version: "1.0.0-beta.3", feature: "uploads of Noir programs" },
  "@noir-lang/noir_js": { version: "1.0.0-beta.3", feature: "UltraHonk proofs of Noir programs" },
  "@aztec/bb.js": { version: "0.82.2", feature: "UltraHonk proofs of Noir programs" }
};

// Looked up on disk, not by require.resolve: some of these are ESM-only and export no package.json.
/** @param {string} name */
const installed = (name) => (require.resolve.paths(name) ?? []).some((dir) => existsSync(path.join(dir, name, "package.json")));

/**
 * The packages of `names` that are not installed, and the sentence that says what to install;
 * `undefined` when all are there. `isInstalled` is for tests.
 * @param {ReadonlyArray<string>} names
 * @param {(name: string) => boolean} [isInstalled]
 * @returns {{ readonly missing: ReadonlyArray<string>; readonly message: string } | undefined}
 */
export function missingPackages(names, isInstalled = installed) {
  const missing = names.filter((name) => !isInstalled(name));
  if (missing.length === 0) return undefined;
  const feature = OPTIONAL_PACKAGES[missing[0] ?? ""]?.feature ?? "some features";
  const install = missing.map((name) => `${name}@${OPTIONAL_PACKAGES[name]?.version ?? "latest"}`).join(" ");
  return {
    missing,
    message: `${feature.charAt(0).toUpperCase()}${feature.slice(1)} need the optional package${missing.length === 1 ? "" : "s"} ` +
      `${missing.join(" and ")}, not installed here: its operator installs ${missing.length === 1 ? "it" : "them"} ` +
      `beside @mzk/proving (npm install ${install}).`
  };
}

/** An optional package a feature needs is not installed (or cannot be loaded) here: the operator's to fix, not the tenant's. */
export class MissingOptionalPackage extends Error {
  /**
   * @param {ReadonlyArray<string>} missing
   * @param {string} message
   */
  constructor(missing, message) {
    super(message);
    this.name = "MissingOptionalPackage";
    /** @readonly */
    this.missing = missing;
  }
}

// Each import written out: a literal specifier is what a bundler (the CLI's bundle, see
// scripts/bundle-cli.mjs) resolves from this file's own folder, where pnpm put the package. A
// computed `import(name)` would be resolved at run time from wherever the bundle lives.
/** @type {Readonly<Record<string, () => Promise<unknown>>>} */
const IMPORTS = {
  circom2: () => import("circom2"),
  "@noir-lang/noir_wasm": () => import("@noir-lang/noir_wasm"),
  "@noir-lang/noir_js": () => import("@noir-lang/noir_js"),
  "@aztec/bb.js": () => import("@aztec/bb.js")
};

/**
 * Imports an optional package, or throws a MissingOptionalPackage whose message says what to install.
 * @param {string} name
 * @param {(name: string) => boolean} [isInstalled]
 * @returns {Promise<unknown>}
 */
export async function importOptional(name, isInstalled = installed) {
  const absent = missingPackages([name], isInstalled);
  if (absent !== undefined) throw new MissingOptionalPackage(absent.missing, absent.message);
  const load = IMPORTS[name];
  if (load === undefined) throw new MissingOptionalPackage([name], `${name} is not one of mzk's optional packages`);
  try {
    return await load();
  } catch (error) {
    // On disk but not where this module resolves it from (a bundle, a hoisting surprise): still the operator's.
    if (error instanceof Error && "code" in error && error.code === "ERR_MODULE_NOT_FOUND" && error.message.includes(name)) {
      throw new MissingOptionalPackage([name], missingPackages([name], () => false)?.message ?? `${name} is not installed`);
    }
    throw error;
  }
}
