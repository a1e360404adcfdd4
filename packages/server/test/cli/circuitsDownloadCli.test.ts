import { expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFileSync } from "node:child_process"
import { createHash } from "node:crypto"
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe } from "vitest"
import { DEV_PTAU_POWER, tempDir } from "../circuits/circuits.js"
import { createAccount, mzk, mzkFails, mzkVia, serveProcess, tempSqlite } from "../processes.js"

const fixture = fileURLToPath(new URL("../fixtures/circuits/bounded_squares/", import.meta.url))
const builtin = (file: string) => fileURLToPath(new URL(`../../../proving/build/${file}`, import.meta.url))
const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex")

describe("mzk circuits download", () => {
  it.scopedLive("writes a built-in circuit's file under its own name or --out, or to stdout; refusals are one line naming the flag", () =>
    Effect.gen(function*() {
      const { database } = yield* tempSqlite("download-cli")
      const { account_id } = createAccount(database, "CLI downloads")
      const dir = yield* tempDir("download")
      const zkey = readFileSync(builtin("multiplier/multiplier.plonk.zkey"))

      const out = join(dir, "key.zkey")
      const said = mzk("circuits", "download", "multiplier", "--account", account_id, "--database", database, "--kind", "zkey", "--proving-system", "plonk", "--out", out)
      expect(said.trim()).toBe(`Wrote ${out}: ${zkey.length} bytes, sha256 ${sha256(zkey)}`)
      expect(readFileSync(out).equals(zkey)).toBe(true)
      // Nothing but the file: its temporary copy was renamed onto it.
      expect(readdirSync(dir)).toEqual(["key.zkey"])

      // Without --out: the file's own name, in the folder the command runs in.
      execFileSync(process.execPath, [fileURLToPath(new URL("../../../../scripts/mzk.mjs", import.meta.url)),
        "circuits", "download", "multiplier@1", "--account", account_id, "--database", database, "--kind", "wasm"], { cwd: dir, encoding: "utf8" })
      expect(readFileSync(join(dir, "multiplier@1.wasm")).equals(readFileSync(builtin("multiplier/multiplier.wasm")))).toBe(true)

      const key = mzkVia("sources", "circuits", "download", "multiplier", "--account", account_id, "--database", database, "--kind", "verification_key", "--out", "-")
      expect(JSON.parse(key)).toEqual(JSON.parse(readFileSync(builtin("multiplier/verification_key.json"), "utf8")))

      const noR1cs = mzkFails("circuits", "download", "multiplier", "--account", account_id, "--database", database, "--kind", "r1cs")
      expect(noR1cs.status).toBe(1)
      expect(noR1cs.output.trim()).toBe("mzk: --kind: circuit multiplier@1 has no r1cs; it has wasm, zkey, verification_key")
      const badKind = mzkFails("circuits", "download", "multiplier", "--account", account_id, "--database", database, "--kind", "proof")
      expect(badKind.status).toBe(2)
      expect(badKind.output).toContain('--kind: "proof" is not one of wasm, zkey, verification_key, r1cs, sym, noir_program')
      const missing = mzkFails("circuits", "download", "nothing", "--account", account_id, "--database", database, "--kind", "wasm")
      expect([missing.status, missing.output.trim()]).toEqual([1, 'mzk: No circuit "nothing" in this account'])
    }), 120_000)

  it.scopedLive("an account's circuit: the file the CLI writes is the one the API serves", () =>
    Effect.gen(function*() {
      const { database } = yield* tempSqlite("download-cli-own")
      const { account_id, api_key } = createAccount(database, "CLI own downloads")
      const dir = yield* tempDir("download-own")
      const ptauDir = yield* tempDir("download-ptau")
      mzk("circuits", "add", "squares", "--account", account_id, "--circom", join(fixture, "main.circom"), "--include", fixture,
        "--database", database, "--dev-ptau", "--dev-ptau-power", String(DEV_PTAU_POWER), "--dev-ptau-dir", ptauDir, "--cache-dir", join(ptauDir, "cache"))
      for (const kind of ["zkey", "r1cs"]) {
        mzk("circuits", "download", "squares", "--account", account_id, "--database", database, "--kind", kind, "--out", join(dir, kind))
      }
      const server = yield* serveProcess(database, { args: ["--cache-dir", join(ptauDir, "serve-cache")] })
      for (const kind of ["zkey", "r1cs"]) {
        const served = yield* Effect.promise(() =>
          fetch(`${server.baseUrl}/api/v1/circuits/squares@1/artifacts/${kind}`, { headers: { authorization: `Bearer ${api_key}` } }))
        expect(served.status).toBe(200)
        const bytes = new Uint8Array(yield* Effect.promise(() => served.arrayBuffer()))
        expect(served.headers.get("etag")).toBe(`"${sha256(readFileSync(join(dir, kind)))}"`)
        expect(sha256(bytes)).toBe(sha256(readFileSync(join(dir, kind))))
      }
    }), 180_000)
})
