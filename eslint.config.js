import js from "@eslint/js"
import { defineConfig } from "eslint/config"
import { builtinModules } from "node:module"
import tseslint from "typescript-eslint"

// The core is pure: it may import effect and small pure libraries, never an adapter, a driver,
// a platform package or a Node built-in. Everything with I/O reaches it through a port.
const forbiddenInCore = [
  "@mzk/*",
  "kysely",
  "kysely/*",
  "better-sqlite3",
  "pg",
  "pg-*",
  "@effect/platform",
  "@effect/platform/*",
  "@effect/platform-*",
  "@effect/sql",
  "@effect/sql*",
  "snarkjs",
  "circomlib*",
  "node:*"
]

export default defineConfig(
  { ignores: ["**/node_modules/**", "**/dist/**", "packages/proving/build/**", "packages/proving/scripts/**", "**/.cache/**"] },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "no-console": "off"
    }
  },
  {
    // Tests read JSON bodies of many shapes; typing each would only restate the assertions.
    files: ["**/test/**/*.ts"],
    rules: { "@typescript-eslint/no-explicit-any": "off" }
  },
  {
    files: ["packages/core/src/**/*.ts"],
    rules: {
      "no-restricted-imports": ["error", {
        // Built-ins by exact name: as patterns, "domain" or "events" would match our own folders.
        paths: builtinModules.map((name) => ({ name, message: "@mzk/core is pure: no Node built-ins." })),
        patterns: [{
          group: forbiddenInCore,
          message: "@mzk/core is pure: reach I/O through a port (ports/*.ts) and implement it in an adapter."
        }]
      }]
    }
  }
)
