import { defineConfig } from "vitest/config"

// Workspace packages resolve to their TypeScript sources (the "@mzk/source" export condition),
// so tests never need a build and never run a stale dist/. Vite resolves with the ssr
// conditions (Vitest also hands them to its worker processes as --conditions); processes that
// tests spawn themselves (`node --import tsx …`) get the condition through NODE_OPTIONS.
const SOURCE = "@mzk/source"
const serverConditions = [SOURCE, "module", "node", "development|production"]

export default defineConfig({
  resolve: { conditions: [SOURCE, "module", "browser", "development|production"] },
  ssr: { resolve: { conditions: serverConditions } },
  test: {
    include: ["packages/*/test/**/*.test.ts", "circuits/test/**/*.test.ts"],
    env: { NODE_OPTIONS: [process.env["NODE_OPTIONS"], `--conditions=${SOURCE}`].filter(Boolean).join(" ") },
    testTimeout: 30_000,
    hookTimeout: 60_000
  }
})
