import { expect, it } from "@effect/vitest"
import { execFileSync } from "node:child_process"
import { cpSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe } from "vitest"
import { tarGz } from "../../../http/test/archives.js"
import { DEV_PTAU_POWER } from "../circuits/circuits.js"
import { createAccount, mzk, mzkFails } from "../processes.js"

const fixture = fileURLToPath(new URL("../fixtures/circuits/bounded_squares/", import.meta.url))

describe("mzk circuits add --archive FILE --main PATH", () => {
  it("builds the archive's sources by the API's rules, and refuses what an upload would refuse", () => {
    const dir = mkdtempSync(join(tmpdir(), "mzk-cli-archive-"))
    try {
      cpSync(fixture, join(dir, "squares"), { recursive: true })
      // A stray file the main file never includes: left out, as with --include.
      writeFileSync(join(dir, "squares", "notes.circom"), "pragma circom 2.1.0;\ntemplate Broken( {\n")
      execFileSync("tar", ["czf", "squares.tgz", "squares"], { cwd: dir })
      const database = `sqlite:${join(dir, "mzk.db")}`
      const { account_id } = createAccount(database, "CLI archives")
      const dev = ["--dev-ptau", "--dev-ptau-power", String(DEV_PTAU_POWER), "--dev-ptau-dir", dir, "--cache-dir", join(dir, "cache")]
      const add = (name: string, ...more: Array<string>) => ["circuits", "add", name, "--account", account_id, "--database", database, ...dev, ...more]

      // main named inside the archive's one folder (squares/main.circom is main.circom).
      const added = mzk(...add("squares", "--archive", join(dir, "squares.tgz"), "--main", "main.circom"))
      expect(added).toMatch(/Circuit squares version 1 is ready: 51 constraints/)
      expect(added).toMatch(/never includes.*notes\.circom/)

      symlinkSync("main.circom", join(dir, "squares", "link.circom"))
      execFileSync("tar", ["czf", "linked.tgz", "squares"], { cwd: dir })
      const linked = mzkFails(...add("linked", "--archive", join(dir, "linked.tgz"), "--main", "main.circom"))
      expect(linked.status).not.toBe(0)
      expect(linked.output).toContain('archive: entry "squares/link.circom": a symbolic link')

      // A file and a folder of one name: refused by the upload's rule, as over HTTP (the build failed on it as an internal error).
      writeFileSync(join(dir, "both.tgz"), tarGz([
        { path: "main.circom", content: "pragma circom 2.1.0;\n" },
        { path: "lib.circom", content: "// a file" },
        { path: "lib.circom/x.circom", content: "// in a folder of that name" }
      ]))
      const both = mzkFails(...add("both_kinds", "--archive", join(dir, "both.tgz"), "--main", "main.circom"))
      expect(both.output).toContain('archive: entry "lib.circom/x.circom": the path "lib.circom/x.circom" is inside "lib.circom", which is a file, not a folder')

      const missing = mzkFails(...add("missing", "--archive", join(dir, "squares.tgz"), "--main", "circuit.circom"))
      expect(missing.output).toContain('--main: "circuit.circom" is not in the archive')
      const notArchive = mzkFails(...add("plain", "--archive", join(fixture, "main.circom"), "--main", "main.circom"))
      expect(notArchive.output).toContain("send a .zip, or a gzip'd tar (.tar.gz, .tgz)")
      expect(mzkFails(...add("alone", "--main", "main.circom")).output).toContain("give --archive too")
      expect(mzkFails(...add("both", "--archive", join(dir, "squares.tgz"), "--circom", join(fixture, "main.circom"))).output).toContain("--archive FILE")
      expect(mzk("circuits", "list", "--account", account_id, "--database", database)).not.toMatch(/linked|missing|plain|alone|both/)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 240_000)
})
