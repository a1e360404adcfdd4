import { SCOPES } from "@mzk/core"
import { eventually, makeHttpClient } from "@mzk/testkit"
import Database from "better-sqlite3"
import { spawn } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { settings } from "../../src/commands/settings.js"
import { freePort, root } from "../processes.js"
import { compileNoir, proveUltraHonk, publicSignalsDecimal, ultraHonkKeyRecord, ultraHonkProofRecord, ultraHonkVerificationKey, writeDevelopmentCrs } from "@mzk/proving"
import { makeForeignGroth16, makeForeignProofs } from "../proving/verifications.fixtures.js"

/**
 * The CLI as people meet it: each mistake is one line on stderr naming the cause and the fix, exit
 * code 2 for a usage mistake and 1 for a failure; help that names the settings; settings from
 * flags, the environment and a config file, in that order; a clean line when stopped.
 */

const dir = mkdtempSync(join(tmpdir(), "mzk-cli-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
const sqlite = (name: string) => `sqlite:${join(dir, `${name}.db`)}`

interface Ran {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

interface Running {
  readonly output: () => string
  readonly kill: (signal: NodeJS.Signals) => void
  readonly done: Promise<Ran>
}

/**
 * `mzk …args` as its own process (stdin closed, stdout and stderr pipes, never a TTY), killed after
 * `limitMs`: a guard against a hang, not a speed goal. It runs `./mzk`'s bundle, as the README does.
 */
const start = (args: ReadonlyArray<string>, env: Record<string, string> = {}, limitMs = 180_000): Running => {
  const child = spawn(process.execPath, ["scripts/mzk.mjs", ...args], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let stdout = ""
  let stderr = ""
  child.stdout.on("data", (chunk) => (stdout += chunk))
  child.stderr.on("data", (chunk) => (stderr += chunk))
  const timer = setTimeout(() => child.kill("SIGKILL"), limitMs)
  const done = new Promise<Ran>((resolve) =>
    child.once("close", (code, signal) => {
      clearTimeout(timer)
      resolve({ code, signal, stdout, stderr })
    })
  )
  return { output: () => stdout + stderr, kill: (signal) => child.kill(signal), done }
}
const run = (args: ReadonlyArray<string>, env: Record<string, string> = {}) => start(args, env).done

/** Runs the tasks at most `width` at a time; the results in the tasks' order. */
const inTurns = async <const T extends ReadonlyArray<() => Promise<unknown>>>(
  width: number,
  tasks: T
): Promise<{ -readonly [K in keyof T]: Awaited<ReturnType<T[K]>> }> => {
  const results: Array<unknown> = new Array(tasks.length)
  let next = 0
  const lane = async () => {
    while (next < tasks.length) {
      const i = next++
      results[i] = await tasks[i]!()
    }
  }
  await Promise.all(Array.from({ length: Math.min(width, tasks.length) }, lane))
  return results as { -readonly [K in keyof T]: Awaited<ReturnType<T[K]>> }
}

/** The one line a failed command printed on stderr. */
const oneLine = (ran: Ran) => {
  const lines = ran.stderr.trim().split("\n")
  expect(lines, ran.stderr).toHaveLength(1)
  expect(ran.stderr).not.toMatch(/^\s+at /m)
  return lines[0]!
}

describe("mzk's mistakes: one line each", () => {
  it("for each mistake of the issue: the cause, the fix, exit 2 for usage and 1 for failures", async () => {
    const busy = createServer()
    const busyPort = await freePort()
    await new Promise<void>((resolve) => busy.listen(busyPort, "127.0.0.1", resolve))
    const aFile = join(dir, "a-file")
    writeFileSync(aFile, "not a folder")
    const closedPort = await freePort()
    try {
      // Three at a time: each is a process start of its own (TypeScript sources loaded afresh), and
      // eleven at once on a loaded two-core machine take longer than a process's limit.
      const [portInUse, badPath, malformedUrl, unreachable, emptyName, badValue, unknownFlag, missingArg, badEnv, badLevel, badProxy] = await inTurns(3, [
        () => run(["serve", "--port", String(busyPort), "--database", sqlite("busy"), "--no-workers"]),
        () => run(["migrate", "--database", `sqlite:${aFile}/mzk.db`]),
        () => run(["migrate", "--database", "postgres://mzk:s3cr#t@db.example:5432/mzk"]),
        () => run(["migrate", "--database", `postgres://mzk:s3cret@127.0.0.1:${closedPort}/mzk`]),
        () => run(["accounts", "create", "--name", "", "--database", sqlite("names")]),
        () => run(["serve", "--port", "eighty"]),
        () => run(["serve", "--prot", "8080"]),
        () => run(["keys", "revoke", "--account", "acct_x"]),
        () => run(["serve", "--database", sqlite("env")], { MZK_PROOF_TIMEOUT: "soon" }),
        () => run(["migrate", "--log-level", "loud"]),
        () => run(["serve", "--database", sqlite("proxy")], { MZK_TRUST_PROXY: "loopback, proxy.internal" })
      ])

      expect(portInUse.code).toBe(1)
      expect(oneLine(portInUse)).toMatch(new RegExp(`port ${busyPort} on 127\\.0\\.0\\.1 is already in use: .*--port`))
      expect(badPath.code).toBe(1)
      expect(oneLine(badPath)).toMatch(/cannot open the SQLite database .*a-file\/mzk\.db \(a part of the path is a file, not a folder\): .*--database/)
      expect(malformedUrl.code).toBe(2)
      expect(oneLine(malformedUrl)).toMatch(/--database: Malformed PostgreSQL URL .*percent-encode/)
      expect(unreachable.code).toBe(1)
      expect(oneLine(unreachable)).toMatch(/cannot connect to the PostgreSQL database \(connection refused.*\): check the URL/)
      for (const ran of [malformedUrl, unreachable]) expect(ran.stdout + ran.stderr).not.toMatch(/s3cr/)
      expect(emptyName.code).toBe(2)
      expect(oneLine(emptyName)).toMatch(/--name is empty: give the account's display name/)
      expect(badValue.code).toBe(2)
      expect(oneLine(badValue)).toBe(`mzk: --port: "eighty" is not a whole number (mzk serve --help shows the usage)`)
      expect(unknownFlag.code).toBe(2)
      expect(oneLine(unknownFlag)).toMatch(/--prot/)
      expect(missingArg.code).toBe(2)
      expect(oneLine(missingArg)).toMatch(/mzk keys revoke --help/)
      expect(badEnv.code).toBe(2)
      expect(oneLine(badEnv)).toMatch(/MZK_PROOF_TIMEOUT: "soon" is not a duration/)
      expect(badLevel.code).toBe(2)
      expect(oneLine(badLevel)).toMatch(/--log-level: "loud" is not one of/)
      expect(badProxy.code).toBe(2)
      expect(oneLine(badProxy)).toMatch(/MZK_TRUST_PROXY: "loopback, proxy.internal" is not a list of addresses, CIDR ranges.*proxy\.internal/)
    } finally {
      busy.close()
    }
  }, 600_000)

  it("several mistakes: one line each, the command's help named once; @effect/cli's own sentences said in mzk's words", async () => {
    const [twoMistakes, choice, misspelt] = await inTurns(3, [
      () => run(["keys", "create", "--account", "acct_x", "--scope", "proofs:wrtie", "--name", "ci", "--database", sqlite("two")]),
      () => run(["verify", "--proving-system", "groth17", "--proof", join(dir, "none.json")]),
      () => run(["keys", "create", "--nme", "ci"])
    ])
    expect([twoMistakes.code, twoMistakes.stderr.split("\n")]).toEqual([2, [
      'mzk: --account: "acct_x" is not an account id (acct_…)',
      `mzk: --scope: "proofs:wrtie" is not one of ${SCOPES.join(", ")} (mzk keys create --help shows the usage)`,
      ""
    ]])
    expect([choice.code, choice.stderr.split("\n")]).toEqual([2, [
      'mzk: --proving-system: "groth17" is not one of groth16, plonk, fflonk, ultra_honk',
      "mzk: --verification-key is required",
      `mzk: --proof: ${join(dir, "none.json")} does not exist`,
      "mzk: --public is required (mzk verify --help shows the usage)",
      ""
    ]])
    expect([misspelt.code, misspelt.stderr]).toEqual([2, "mzk: unknown flag --nme: did you mean --name? (mzk keys create --help shows the usage)\n"])
  }, 240_000)

  it("commands, subcommands and flags, at every level, mistyped: one sentence, the same for each", async () => {
    const [command, subcommand, flag, topFlag, farFlag] = await inTurns(3, [
      () => run(["serv"]),
      () => run(["keys", "lst", "--account", "acct_x"]),
      () => run(["circuits", "list", "--jsn"]),
      () => run(["--versio"]),
      () => run(["--zzzzzz", "serve"])
    ])
    expect([command.code, command.stderr]).toEqual([
      2,
      "mzk: unknown command serv: did you mean serve? (mzk takes serve, worker, migrate, accounts, keys, circuits, verify; mzk --help shows the usage)\n"
    ])
    expect([subcommand.code, subcommand.stderr]).toEqual([
      2,
      "mzk: unknown command keys lst: did you mean keys list? (mzk keys takes create, list, revoke; mzk keys --help shows the usage)\n"
    ])
    expect([flag.code, flag.stderr]).toEqual([2, "mzk: unknown flag --jsn: did you mean --json? (mzk circuits list --help shows the usage)\n"])
    // Before any command, mzk's own flags: not @effect/cli's "Invalid subcommand".
    expect([topFlag.code, topFlag.stderr]).toEqual([2, "mzk: unknown flag --versio: did you mean --version? (mzk --help shows the usage)\n"])
    expect([farFlag.code, farFlag.stderr]).toEqual([2, "mzk: unknown flag --zzzzzz (mzk --help shows the usage)\n"])
  }, 240_000)

  it("--log-level debug, anywhere on the line, adds the stack trace", async () => {
    const aFile = join(dir, "another-file")
    writeFileSync(aFile, "")
    const ran = await run(["migrate", "--database", `sqlite:${aFile}/mzk.db`, "--log-level", "debug"])
    expect(ran.code).toBe(1)
    expect(ran.stderr.split("\n")[0]).toMatch(/^mzk: cannot open the SQLite database/)
    expect(ran.stderr).toMatch(/^\s+at /m)
  }, 240_000)
})

describe("mzk --help", () => {
  it("names every setting's flag, environment variable and default, as plain text when piped, in 80 columns", async () => {
    const [root, serve, add, verify, create, group] = await inTurns(3, [
      () => run(["--help"]),
      () => run(["serve", "--help"]),
      () => run(["circuits", "add", "--help"]),
      () => run(["verify", "--help"]),
      () => run(["keys", "create", "--help"]),
      // A command with subcommands named alone prints its help, wrapped as any help is.
      () => run(["keys"])
    ])
    expect(root.code).toBe(0)
    // Wrapped lines are joined back: a value may continue on the next line.
    const flat = (text: string) => text.replace(/\s+/g, " ")
    for (const setting of Object.values(settings)) {
      expect(flat(root.stdout)).toContain(`--${setting.flag} ${setting.env}, default ${setting.shown}`)
    }
    expect(root.stdout).toMatch(/--config FILE/)
    expect(flat(serve.stdout)).toContain("Env MZK_PROOF_TIMEOUT; default 1m.")
    expect(flat(serve.stdout)).toContain("Env MZK_DATABASE_URL; default sqlite:./data/mzk.db.")
    // A command's description on its own line under its usage, not run on after the last flag.
    expect(root.stdout).toMatch(/^ {2}- keys list --account text .*\n {4}List an account's active keys/m)
    expect([group.code, flat(group.stdout)]).toEqual([0, expect.stringContaining("Accounts' API keys: create, list, revoke")])
    for (const ran of [root, serve, add, verify, create, group]) {
      expect(ran.stdout + ran.stderr).not.toContain("\u001b")
      expect(ran.stdout.split("\n").filter((line) => line.length > 80)).toEqual([])
      // @effect/cli's line under every text flag says nothing the flag's own description does not.
      expect(ran.stdout).not.toContain("A user-defined piece of text")
    }
    expect(flat(verify.stdout)).toContain("--proving-system groth16|plonk|fflonk|ultra_honk The proof's system")
  }, 240_000)
})

describe("mzk keys", () => {
  it("create prints the key once; list shows it without the key; revoke removes it; global options anywhere", async () => {
    const database = sqlite("keys")
    const created = await run(["accounts", "create", "--log-level", "warning", "--name", "Keys", "--database", database, "--json"])
    expect(created.code, created.stderr).toBe(0)
    const { account_id } = JSON.parse(created.stdout) as { account_id: string }

    const key = await run(["keys", "create", "--account", account_id, "--name", "ci", "--scope", "proofs:read", "--scope", "proofs:write", "--database", database, "--json"])
    expect(key.code, key.stderr).toBe(0)
    const record = JSON.parse(key.stdout) as { id: string; key: string; scopes: Array<string> }
    expect(record.scopes).toEqual(["proofs:read", "proofs:write"])
    expect(record.key).toMatch(/^mzk_/)

    const listed = await run(["keys", "list", "--account", account_id, "--database", database])
    expect(listed.code).toBe(0)
    expect(listed.stdout).toMatch(new RegExp(`${record.id}\\s+ci\\s`))
    expect(listed.stdout).not.toContain(record.key)

    const revoked = await run(["keys", "revoke", record.id, "--account", account_id, "--database", database])
    expect(revoked.code, revoked.stderr).toBe(0)
    const absent = account_id.slice(0, -1) + (account_id.endsWith("0") ? "1" : "0")
    const [after, again, badScope, noAccount, notAnId, overLimit] = await inTurns(3, [
      () => run(["keys", "list", "--account", account_id, "--database", database, "--json"]),
      () => run(["keys", "revoke", record.id, "--account", account_id, "--database", database]),
      () => run(["keys", "create", "--account", account_id, "--name", "x", "--scope", "everything", "--database", database]),
      () => run(["keys", "list", "--account", absent, "--database", database]),
      () => run(["keys", "list", "--account", "acct_nobody", "--database", database]),
      // The account holds its first key: a limit of 1 is reached.
      () => run(["keys", "create", "--account", account_id, "--name", "more", "--database", database], { MZK_MAX_ACTIVE_KEYS_PER_ACCOUNT: "1" })
    ])
    expect((JSON.parse(after.stdout) as Array<{ id: string }>).map((k) => k.id)).not.toContain(record.id)
    expect(again.code).toBe(1)
    expect(oneLine(again)).toMatch(new RegExp(`No active key ${record.id}`))
    expect(badScope.code).toBe(2)
    expect(oneLine(badScope)).toMatch(/--scope: "everything" is not one of keys:read/)
    expect(noAccount.code).toBe(1)
    expect(oneLine(noAccount)).toBe(`mzk: No account ${absent}; mzk accounts create makes one`)
    expect(notAnId.code).toBe(2)
    expect(oneLine(notAnId)).toMatch(/--account: "acct_nobody" is not an account id/)
    expect(overLimit.code).toBe(1)
    expect(oneLine(overLimit)).toMatch(/raise --max-active-keys-per-account$/)

    // The account's audit log says the command line made each change, and nothing of what was refused.
    const db = new Database(database.slice("sqlite:".length), { readonly: true })
    try {
      const rows = db.prepare("select action, actor_type, actor_id, target_id, request_id from audit_log where account_id = ? order by id").all(account_id)
      expect(rows).toEqual([
        { action: "key.created", actor_type: "cli", actor_id: null, target_id: expect.stringMatching(/^key_/), request_id: null },
        { action: "key.created", actor_type: "cli", actor_id: null, target_id: record.id, request_id: null },
        { action: "key.revoked", actor_type: "cli", actor_id: null, target_id: record.id, request_id: null }
      ])
    } finally {
      db.close()
    }
  }, 600_000)
})

describe("settings and stopping", () => {
  it("flag > environment > config file > default; a bad config file is one line naming the file and key; a signal stops with a line and exit 0", async () => {
    const [fromFile, fromEnv, fromFlag] = await Promise.all([freePort(), freePort(), freePort()])
    const config = join(dir, "mzk.json")
    writeFileSync(config, JSON.stringify({ port: fromFile, "proof-timeout": "90s", "max-batch-size": 2, "event-retention": "2h" }))
    const account = await run(["accounts", "create", "--name", "Settings", "--database", sqlite("file"), "--json"])
    const { api_key } = JSON.parse(account.stdout) as { api_key: string }
    const bad = join(dir, "bad.json")
    writeFileSync(bad, JSON.stringify({ port: 8080, "proof-timout": "90s" }))
    const typo = join(dir, "typo.json")
    writeFileSync(typo, JSON.stringify({ "max-batch-size": "many" }))
    const serve = (name: string, args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
      start(["serve", "--database", sqlite(name), "--no-workers", ...args], env, 240_000)

    const servers = [
      serve("file", ["--config", config]),
      serve("env", ["--config", config], { MZK_PORT: String(fromEnv) }),
      serve("flag", ["--port", String(fromFlag), "--config", config], { MZK_PORT: String(fromEnv) })
    ]
    const [badKey, badValue, missing] = await Promise.all([
      run(["migrate", "--config", bad]),
      run(["migrate", `--config=${typo}`]),
      run(["migrate"], { MZK_CONFIG: join(dir, "absent.json") })
    ])
    expect(badKey.code).toBe(2)
    expect(oneLine(badKey)).toBe(`mzk: ${bad}: unknown setting "proof-timout": did you mean "proof-timeout"? (mzk --help lists the settings)`)
    expect(badValue.code).toBe(2)
    expect(oneLine(badValue)).toMatch(new RegExp(`${typo}: "max-batch-size": "many" is not a whole number`))
    expect(missing.code).toBe(2)
    expect(oneLine(missing)).toMatch(/cannot read the config file .*absent\.json \(ENOENT\)/)

    const ports = [fromFile, fromEnv, fromFlag]
    await Promise.all(servers.map((server, i) =>
      eventually(async () => (server.output().includes(`Listening on http://127.0.0.1:${ports[i]}`) ? true : undefined), 180_000, 100)))
    // The config file's limit reached the core: a batch of 3 is refused, one of 2 accepted.
    const batch = (n: number) =>
      makeHttpClient(`http://127.0.0.1:${fromFile}`, { token: api_key }).send("POST", "/api/v1/proofs/batch", {
        body: { proofs: Array.from({ length: n }, () => ({ type: "multiplier", inputs: { a: "3", b: "5" } })) }
      })
    const [three, two] = [await batch(3), await batch(2)]
    expect(three.status).toBe(400)
    expect(three.text).toContain("must hold 1 to 2 proofs")
    expect(two.status).toBe(202)
    // So did its event retention: a recovery may reach back 2 hours, not 3.
    const client = makeHttpClient(`http://127.0.0.1:${fromFile}`, { token: api_key })
    const webhook = await client.send("POST", "/api/v1/webhooks", { body: { url: "https://hooks.example.com/mzk", events: ["proof.completed"] } })
    const recover = (hours: number) =>
      client.send("POST", `/api/v1/webhooks/${webhook.json.id}/recover`, { body: { since: new Date(Date.now() - hours * 3_600_000).toISOString() } })
    const [tooFar, inside] = [await recover(3), await recover(1.5)]
    expect([tooFar.status, tooFar.json.error.details[0].path]).toEqual([400, "since"])
    expect(inside.status).toBe(202)

    servers[0]!.kill("SIGINT")
    servers[1]!.kill("SIGTERM")
    servers[2]!.kill("SIGTERM")
    const [first, second] = await Promise.all(servers.map((server) => server.done))
    for (const [ran, signal] of [[first!, "SIGINT"], [second!, "SIGTERM"]] as const) {
      expect(ran.code).toBe(0)
      const lines = ran.stdout.trim().split("\n").map((line) => JSON.parse(line) as { message: string; annotations: Record<string, unknown> })
      expect(lines.at(-1)).toMatchObject({ message: "mzk stopped", annotations: { signal } })
    }
  }, 600_000)
})

describe("mzk verify", () => {
  it("checks snarkjs's files offline: exit 0 when valid, 1 when the proof does not hold, 2 naming the field when malformed", async () => {
    const foreign = await makeForeignGroth16()
    const write = (name: string, value: unknown) => {
      const path = join(dir, name)
      writeFileSync(path, JSON.stringify(value))
      return path
    }
    const key = write("vk.json", foreign.key)
    const proof = write("proof.json", foreign.proof)
    const args = (publicFile: string, proofFile = proof) =>
      ["verify", "--proving-system", "groth16", "--verification-key", key, "--proof", proofFile, "--public", publicFile]
    const [valid, tampered, offCurve] = await inTurns(3, [
      () => run([...args(write("public.json", foreign.signals)), "--json"]),
      () => run(args(write("tampered.json", ["34"]))),
      () => run(args(write("public2.json", foreign.signals), write("bad-proof.json", { ...foreign.proof, pi_a: ["1", "3", "1"] })))
    ])
    expect([valid.code, JSON.parse(valid.stdout)]).toEqual([0, { valid: true, proving_system: "groth16" }])
    expect(tampered.code).toBe(1)
    expect(tampered.stdout).toMatch(/^INVALID/)
    expect(offCurve.code).toBe(2)
    expect(oneLine(offCurve)).toMatch(/proof\.pi_a/)
  }, 600_000)

  it("snarkjs's PLONK and FFLONK keys of a circuit without constants (Qc at infinity): exit 0 when valid, 1 when not; a point written (0, 0): 2 naming it", async () => {
    const foreign = await makeForeignProofs({ constants: false })
    expect(foreign.plonk.key["Qc"]).toEqual(["0", "1", "0"])
    const write = (name: string, value: unknown) => {
      const path = join(dir, name)
      writeFileSync(path, JSON.stringify(value))
      return path
    }
    // Each run's files under its own name: two run at once.
    const verify = (name: string, system: "plonk" | "fflonk", proof: unknown, signals: ReadonlyArray<string>) => () =>
      run([
        "verify", "--proving-system", system, "--json",
        "--verification-key", write(`${name}-vk.json`, foreign[system].key),
        "--proof", write(`${name}-proof.json`, proof),
        "--public", write(`${name}-public.json`, signals)
      ])
    const changed = (signals: ReadonlyArray<string>) => [signals[0]!, (BigInt(signals[1]!) + 1n).toString()]
    const [plonk, fflonk, plonkTampered, zero] = await inTurns(2, [
      verify("plonk", "plonk", foreign.plonk.proof, foreign.plonk.signals),
      verify("fflonk", "fflonk", foreign.fflonk.proof, foreign.fflonk.signals),
      verify("plonk-tampered", "plonk", foreign.plonk.proof, changed(foreign.plonk.signals)),
      verify("plonk-zero", "plonk", { ...foreign.plonk.proof, Z: ["0", "0", "1"] }, foreign.plonk.signals)
    ])
    // The exit code and the JSON answer, or what was said instead.
    const answer = (ran: Ran) => [ran.code, ran.stdout === "" ? ran.stderr.trim() : JSON.parse(ran.stdout)]
    expect(answer(plonk)).toEqual([0, { valid: true, proving_system: "plonk" }])
    expect(answer(fflonk)).toEqual([0, { valid: true, proving_system: "fflonk" }])
    expect(answer(plonkTampered)).toEqual([1, { valid: false, proving_system: "plonk" }])
    expect(zero.code).toBe(2)
    expect(oneLine(zero)).toMatch(/proof\.Z: is not on the curve/)
  }, 600_000)

  it("checks an UltraHonk proof of a Noir program against the CRS it was made with; without --noir-crs it says what it needs", async () => {
    const crs = await writeDevelopmentCrs(join(dir, "noir-crs"), 2 ** 12 + 1)
    const compiled = await compileNoir({
      "Nargo.toml": `[package]\nname = "sum"\ntype = "bin"\nauthors = [""]\n`,
      "src/main.nr": "fn main(x: Field, y: pub Field) -> pub Field {\n    assert(x != y);\n    x + y\n}\n"
    })
    if (!compiled.ok) throw new Error(compiled.message)
    const made = await proveUltraHonk(compiled.program, { x: "3", y: "4" }, crs)
    const write = (name: string, value: unknown) => {
      const path = join(dir, name)
      writeFileSync(path, JSON.stringify(value))
      return path
    }
    // As the API returns them: the circuit's verification_key, the proof blob's JSON, the public signals.
    const key = write("honk-vk.json", ultraHonkKeyRecord(await ultraHonkVerificationKey(compiled.program, crs)))
    const proof = write("honk-proof.json", ultraHonkProofRecord(made.proof))
    const signals = publicSignalsDecimal(made.publicInputs)
    expect(signals).toEqual(["4", "7"])
    const args = (publicFile: string, ...more: Array<string>) =>
      ["verify", "--proving-system", "ultra_honk", "--verification-key", key, "--proof", proof, "--public", publicFile, ...more]
    const [valid, tampered, noCrs] = await inTurns(3, [
      () => run([...args(write("honk-public.json", signals), "--noir-crs", crs.path), "--json"]),
      () => run(args(write("honk-tampered.json", ["4", "8"]), "--noir-crs", crs.path)),
      () => run(args(write("honk-public2.json", signals)))
    ])
    expect([valid.code, JSON.parse(valid.stdout)]).toEqual([0, { valid: true, proving_system: "ultra_honk" }])
    expect(tampered.code).toBe(1)
    expect(tampered.stdout).toMatch(/^INVALID/)
    expect([noCrs.code, oneLine(noCrs)]).toEqual([2, expect.stringContaining("--proving-system ultra_honk needs --noir-crs DIR")])
  }, 600_000)
})
