// The one place that knows which packages an embedder may leave out, and what to say when a feature
// needs one that is missing. Plain JavaScript so that the build child (a bare node process) and the
// TypeScript modules share it.
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

const require = createRequire(import.meta.url);

/** Each optional package: the version @mzk/circuits is tested with, and the feature that needs it. */
export const OPTIONAL_PACKAGES = {
  circom2: { version: "0.2.23", feature: "uploads of circom sources" },
  circomlib: { version: "2.0.5", feature: "uploads of circom sources" },
  "@noir-lang/noir_wasm": { version: "1.0.0-beta.3", feature: "uploads of Noir programs" },
  "@noir-lang/noir_js": { version: "1.0.0-beta.3", feature: "UltraHonk proofs of Noir programs" },
  "@aztec/bb.js": { version: "0.82.2", feature: "UltraHonk proofs of Noir programs" }
};

// Looked up on disk, not by require.resolve: some of these are ESM-only and export no package.json.
const installed = (name) => (require.resolve.paths(name) ?? []).some((dir) => existsSync(path.join(dir, name, "package.json")));

/**
 * The packages of `names` that are not installed, and the sentence that says what to install;
 * `undefined` when all are there. `isInstalled` is for tests.
 */
export function missingPackages(names, isInstalled = installed) {
  const missing = names.filter((name) => !isInstalled(name));
  if (missing.length === 0) return undefined;
  const feature = OPTIONAL_PACKAGES[missing[0]]?.feature ?? "some features";
  const install = missing.map((name) => `${name}@${OPTIONAL_PACKAGES[name]?.version ?? "latest"}`).join(" ");
  return {
    missing,
    message: `${feature[0].toUpperCase()}${feature.slice(1)} need the optional package${missing.length === 1 ? "" : "s"} ` +
      `${missing.join(" and ")}, not installed here: its operator installs ${missing.length === 1 ? "it" : "them"} ` +
      `beside @mzk/circuits (npm install ${install}).`
  };
}

/** Imports an optional package, or throws an Error whose message says what to install. */
export async function importOptional(name) {
  const absent = missingPackages([name]);
  if (absent !== undefined) throw new Error(absent.message);
  return await import(name);
}
