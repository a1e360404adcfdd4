import { expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe } from "vitest"
import { compileCircom, type CompiledCircuit, DEV_PTAU_POWER, settle, tempDir } from "../circuits/circuits.js"
import { createAccount, mzk, mzkFails, serveProcess, tempSqlite } from "../processes.js"

const fixture = fileURLToPath(new URL("../fixtures/circuits/bounded_squares/", import.meta.url))

describe("mzk circuits (the operator's way to add a circuit)", () => {
  it.scopedLive("add from circom sources builds it at once; serve proves it; list and remove", () =>
    Effect.gen(function*() {
      const { database } = yield* tempSqlite("circuits-cli")
      const ptauDir = mkdtempSync(join(tmpdir(), "mzk-ptau-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(ptauDir, { recursive: true, force: true })))
      const dev = ["--dev-ptau", "--dev-ptau-power", String(DEV_PTAU_POWER), "--cache-dir", join(ptauDir, "cache")]
      const { account_id, api_key } = createAccount(database, "CLI circuits")

      const added = mzk(
        "circuits", "add", "squares", "--account", account_id, "--circom", join(fixture, "main.circom"), "--include", fixture,
        "--database", database, ...dev, "--dev-ptau-dir", ptauDir, "--json"
      )
      expect(JSON.parse(added)).toMatchObject({ name: "squares", owner: account_id, status: "ready", constraints: 51, development_only: true })
      const listed = mzk("circuits", "list", "--account", account_id, "--database", database)
      // A header row names the columns, as `keys list` does.
      expect(listed.split("\n")[0]!.split(/\s+/)).toEqual(["NAME", "VERSION", "STATUS", "CONSTRAINTS", "OWNER"])
      expect(listed).toMatch(/squares\s+v1\s+ready\s+51\s+account/)

      const server = yield* serveProcess(database, { args: ["--cache-dir", join(ptauDir, "serve-cache")] })
      const api = server.client(api_key)
      const created = yield* Effect.promise(() => api.send("POST", "/api/v1/proofs", { body: { type: "squares", inputs: { xs: [3, 4, 0], bound: 5 } } }))
      expect(created.status).toBe(202)
      const proof = yield* Effect.promise(() => settle(api, `/api/v1/proofs/${created.json.proof_id}`, (p) => p.status !== "queued" && p.status !== "running"))
      expect(proof).toMatchObject({ status: "completed", public_inputs: { total: "25", bound: "5" } })
      expect((yield* Effect.promise(() => api.send("GET", `/api/v1/proofs/${proof.proof_id}/verify`))).json.valid).toBe(true)

      mzk("circuits", "remove", "squares", "--account", account_id, "--database", database)
      expect(mzk("circuits", "list", "--account", account_id, "--database", database)).not.toContain("squares")
    }), 180_000)

  it.scopedLive("add a Noir project folder: compiled and set up with a development CRS made first, development_only", () =>
    Effect.gen(function*() {
      const { database } = yield* tempSqlite("circuits-cli-noir")
      const { account_id } = createAccount(database, "CLI Noir")
      const dir = yield* tempDir("noir")
      const project = join(dir, "sum")
      mkdirSync(join(project, "src"), { recursive: true })
      writeFileSync(join(project, "Nargo.toml"), `[package]\nname = "sum"\ntype = "bin"\nauthors = [""]\n\n[dependencies]\n`)
      writeFileSync(join(project, "src", "main.nr"), "fn main(x: Field, y: pub Field) -> pub Field {\n    x + y\n}\n")
      // What nargo leaves in a project folder is not uploaded.
      mkdirSync(join(project, "target"))
      writeFileSync(join(project, "target", "sum.json"), "not a program")
      // Power 12: a development CRS of 2^12 + 1 points, what the program pads to.
      const dev = ["--dev-ptau", "--dev-ptau-power", "12", "--dev-ptau-dir", join(dir, "ptau"), "--cache-dir", join(dir, "cache")]
      const added = mzk("circuits", "add", "sum", "--account", account_id, "--noir", project, "--database", database, ...dev, "--json")
      expect(JSON.parse(added)).toMatchObject({
        name: "sum",
        status: "ready",
        development_only: true,
        inputs: [{ name: "x", visibility: "private" }, { name: "y", visibility: "public" }],
        public_signals: ["y", "return"]
      })
      const both = mzkFails("circuits", "add", "both", "--account", account_id, "--noir", project, "--circom", join(fixture, "main.circom"), "--database", database)
      expect(both.output).toContain("--noir DIR")
    }), 300_000)

  it.scopedLive("add prebuilt artifacts: checked before they are ready (a zkey of another circuit, sample inputs the circuit refuses)", () =>
    Effect.gen(function*() {
      const { database } = yield* tempSqlite("circuits-cli-prebuilt")
      const { account_id } = createAccount(database, "CLI prebuilt")
      const multiplier = yield* compileCircom(fileURLToPath(new URL("../../../proving/circom/multiplier.circom", import.meta.url)))
      const sumsq = yield* compileCircom(fileURLToPath(new URL("../fixtures/circuits/sumsq/main.circom", import.meta.url)))
      const zkey = fileURLToPath(new URL("../../../proving/build/multiplier/multiplier.zkey", import.meta.url))
      const dir = yield* tempDir("sample")
      const add = (name: string, circuit: CompiledCircuit, ...more: Array<string>) =>
        ["circuits", "add", name, "--account", account_id, "--wasm", circuit.paths.wasm, "--zkey", zkey, "--sym", circuit.paths.sym, "--database", database, ...more]

      expect(mzkFails(...add("mixed", sumsq)).output).toMatch(/artifact_mismatch.*does not verify/)
      writeFileSync(join(dir, "refused.json"), JSON.stringify({ a: 1, b: 5 }))
      expect(mzkFails(...add("refused", multiplier, "--sample-inputs", join(dir, "refused.json"))).output).toMatch(/invalid_artifacts.*sample inputs.*Assert Failed/)
      writeFileSync(join(dir, "input.json"), JSON.stringify({ a: 3, b: 11 }))
      expect(JSON.parse(mzk(...add("mult", multiplier, "--sample-inputs", join(dir, "input.json"), "--json")))).toMatchObject({
        name: "mult", version: 1, status: "ready", constraints: 3, development_only: false
      })
      // The same name again is its next version; the list shows the newest; remove takes NAME@N or NAME.
      const again = mzk(...add("mult", multiplier, "--sample-inputs", join(dir, "input.json")))
      expect(again).toMatch(/Added mult@2: version 2 of mult/)
      expect(again).toMatch(/Circuit mult version 2 is ready: 3 constraints/)
      const listed = mzk("circuits", "list", "--account", account_id, "--database", database)
      expect(listed).toMatch(/mult\s+v2\s+ready\s+3/)
      expect(listed).not.toMatch(/mult\s+v1/)
      expect(mzk("circuits", "remove", "mult@1", "--account", account_id, "--database", database)).toMatch(/Removed circuit mult@1/)
      expect(mzkFails("circuits", "remove", "mult@1", "--account", account_id, "--database", database).output).toMatch(/No circuit "mult@1"/)
      expect(mzk("circuits", "list", "--account", account_id, "--database", database)).toMatch(/mult\s+v2\s+ready/)
      mzk("circuits", "remove", "mult", "--account", account_id, "--database", database)
      expect(mzk("circuits", "list", "--account", account_id, "--database", database)).not.toMatch(/mult\s/)
    }), 180_000)

  it("--include sends only the files main.circom includes: a stray file in the folder is left out, and the command says so", () => {
      const dir = mkdtempSync(join(tmpdir(), "mzk-stray-"))
      try {
        cpSync(fixture, join(dir, "circuit"), { recursive: true })
        // What a project folder holds besides the circuit: an old experiment that includes a file above
        // the folder and does not parse, and a test harness whose main component is not this one.
        mkdirSync(join(dir, "circuit", "old"))
        writeFileSync(join(dir, "circuit", "old", "scratch.circom"), "pragma circom 2.1.0;\ninclude \"../../../elsewhere.circom\";\ntemplate Broken( {\n")
        writeFileSync(join(dir, "circuit", "test_square.circom"), "pragma circom 2.1.0;\ninclude \"lib/square.circom\";\ncomponent main = Square();\n")
        const database = `sqlite:${join(dir, "mzk.db")}`
        const { account_id } = createAccount(database, "Stray files")
        const added = mzk(
          "circuits", "add", "squares", "--account", account_id, "--circom", join(dir, "circuit", "main.circom"), "--include", join(dir, "circuit"),
          "--database", database, "--dev-ptau", "--dev-ptau-power", String(DEV_PTAU_POWER), "--dev-ptau-dir", dir
        )
        expect(added).toMatch(/Circuit squares version 1 is ready: 51 constraints/)
        expect(added).toMatch(/main\.circom never includes.*old\/scratch\.circom.*test_square\.circom|main\.circom never includes.*test_square\.circom.*old\/scratch\.circom/s)
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    }, 120_000)

  it("a circuit that does not build is reported on one line with its line number, and the command fails", () => {
      const dir = mkdtempSync(join(tmpdir(), "mzk-bad-circuit-"))
      try {
        writeFileSync(join(dir, "bad.circom"), "pragma circom 2.1.0;\ntemplate T() {\n  signal input a\n}\ncomponent main = T();\n")
        const database = `sqlite:${join(dir, "mzk.db")}`
        const { account_id } = createAccount(database, "Bad circuit")
        const failed = mzkFails(
          "circuits", "add", "bad", "--account", account_id, "--circom", join(dir, "bad.circom"), "--database", database,
          "--dev-ptau", "--dev-ptau-power", String(DEV_PTAU_POWER), "--dev-ptau-dir", dir
        )
        expect(failed.status).not.toBe(0)
        expect(failed.output).toMatch(/compile_error.*bad\.circom:\d+/)
        const noPtau = mzkFails("circuits", "add", "bad2", "--account", account_id, "--circom", join(dir, "bad.circom"), "--database", database)
        expect(noPtau.output).toMatch(/--ptau/)
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    }, 120_000)
})
