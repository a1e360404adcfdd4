/**
 * The yardstick for the HTTP benchmark (http.ts): mzk's work for `GET /api/v1/keys` and
 * `POST /api/v1/proofs`, written by hand on node:http + better-sqlite3 with no framework, on the
 * database file mzk created, opened as mzk's adapter opens it (WAL, busy timeout, foreign keys).
 *
 * Both routes check the key's format, look it up by SHA-256, mark it used at most once a minute,
 * check its scope and send a `Request-Id`. GET lists the account's active keys. POST checks the
 * Content-Type and body size, parses the JSON and validates `{type, inputs}` (the multiplier only:
 * canonical decimal strings or safe integers below the field modulus), then in ONE transaction
 * charges the two fixed windows (`key:<key_id>` per clock minute, `daily:<account_id>` per UTC day,
 * all or nothing, as packages/adapters-sql/src/repos/rateLimits.ts does) and inserts the queued
 * proof row: 202 with the proof and the RateLimit fields, or 429 with `Retry-After`.
 *
 *   tsx packages/server/bench/baselineServer.ts <sqlite file> <port>
 */
import Database from "better-sqlite3"
import { createHash, randomBytes } from "node:crypto"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"

const [file, port] = process.argv.slice(2) as [string, string]
const db = new Database(file)
db.pragma("journal_mode = WAL")
db.pragma("busy_timeout = 5000")
db.pragma("synchronous = NORMAL")
db.pragma("foreign_keys = ON")

const byHash = db.prepare("select id, account_id, scopes, last_used_at, revoked_at from api_keys where hash = ?")
const touch = db.prepare("update api_keys set last_used_at = ? where id = ? and (last_used_at is null or last_used_at < ?)")
const activeKeys = db.prepare(
  "select id, name, description, prefix, scopes, created_at, last_used_at from api_keys where account_id = ? and revoked_at is null order by id"
)
const ensureCounters = db.prepare("insert into rate_counters (bucket, window_start, count) values (?, 0, 0), (?, 0, 0) on conflict (bucket) do nothing")
const readCounters = db.prepare("select bucket, window_start, count from rate_counters where bucket in (?, ?) order by bucket")
const setCounter = db.prepare("update rate_counters set window_start = ?, count = ? where bucket = ?")
const insertProof = db.prepare(
  "insert into proofs (id, account_id, batch_id, type, circuit, status, inputs, public_inputs, proof_blob, error, duration_ms, attempts, " +
    "lease_expires_at, created_at, started_at, completed_at, expires_at) " +
    "values (?, ?, null, ?, ?, 'queued', ?, ?, null, null, null, 0, null, ?, null, null, null)"
)

const KEY = /^mzk_[0-9A-Za-z]{49}$/
const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i
const DECIMAL = /^(0|[1-9][0-9]*)$/
const MAX_BODY_BYTES = 1024 * 1024
const MINUTE_MS = 60_000
const DAY_MS = 86_400_000
// The one proof type the benchmark sends, as packages/proving/src/catalog.json describes it.
const R = 21888242871839275222246405745257275088548364400416034343698204186575808495617n
const CIRCUITS = new Map([["multiplier", { circuit: "multiplier", inputs: [{ name: "a", public: false }, { name: "b", public: false }] }]])

const BASE32 = "0123456789abcdefghjkmnpqrstvwxyz"
/** `<prefix>_` + 10 base32 characters of milliseconds + 16 of randomness, as mzk's ids. */
const makeId = (prefix: string, ms: number) => {
  let id = `${prefix}_`
  for (let i = 9; i >= 0; i--) id += BASE32[Math.floor(ms / 2 ** (5 * i)) % 32]
  let bits = 0
  let held = 0
  for (const byte of randomBytes(10)) {
    bits = (bits << 8) | byte
    held += 8
    while (held >= 5) id += BASE32[(bits >> (held -= 5)) & 31]
    bits &= (1 << held) - 1
  }
  return id
}

const send = (response: ServerResponse, status: number, body: string, headers: Record<string, string> = {}) =>
  response.writeHead(status, { "content-type": "application/json", "request-id": makeId("req", Date.now()), ...headers }).end(body)
const fail = (response: ServerResponse, status: number, code: string, headers: Record<string, string> = {}) =>
  send(response, status, JSON.stringify({ error: { code } }), headers)

interface Key { readonly id: string; readonly account_id: string; readonly scopes: string; readonly last_used_at: string | null; readonly revoked_at: string | null }

/** The key behind the bearer token, if it is active and has `scope`; otherwise answers 401/403. */
const authenticate = (request: IncomingMessage, response: ServerResponse, scope: string): Key | undefined => {
  const token = (request.headers.authorization ?? "").slice(7)
  const key = KEY.test(token) ? (byHash.get(createHash("sha256").update(token).digest("hex")) as Key | undefined) : undefined
  if (key === undefined || key.revoked_at !== null) return void fail(response, 401, "invalid_api_key")
  const nowMs = Date.now()
  const staleBefore = new Date(nowMs - MINUTE_MS + 1).toISOString()
  if (key.last_used_at === null || key.last_used_at < staleBefore) touch.run(new Date(nowMs).toISOString(), key.id, staleBefore)
  if (!(JSON.parse(key.scopes) as Array<string>).includes(scope)) return void fail(response, 403, "insufficient_scope")
  return key
}

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

const canonical = (value: unknown): string | undefined => {
  const n = typeof value === "number"
    ? (Number.isSafeInteger(value) && value >= 0 ? BigInt(value) : undefined)
    : typeof value === "string" && DECIMAL.test(value) ? BigInt(value) : undefined
  return n !== undefined && n < R ? n.toString() : undefined
}

/** `{type, inputs}` → the circuit and canonical inputs, or undefined when anything is off. */
const validate = (body: unknown) => {
  if (!isRecord(body) || Object.keys(body).some((k) => k !== "type" && k !== "inputs")) return undefined
  const spec = typeof body.type === "string" ? CIRCUITS.get(body.type) : undefined
  const inputs = body.inputs
  if (spec === undefined || !isRecord(inputs) || Object.keys(inputs).some((k) => !spec.inputs.some((i) => i.name === k))) return undefined
  const values: Record<string, string> = {}
  const publicInputs: Record<string, string> = {}
  for (const input of spec.inputs) {
    const value = Object.hasOwn(inputs, input.name) ? canonical(inputs[input.name]) : undefined
    if (value === undefined) return undefined
    values[input.name] = value
    if (input.public) publicInputs[input.name] = value
  }
  return { type: body.type as string, circuit: spec.circuit, inputs: values, public_inputs: publicInputs }
}

type Proof = NonNullable<ReturnType<typeof validate>>
interface Counter { readonly bucket: string; readonly window_start: number; readonly count: number }

/** Charges both windows and queues the proof, all or nothing; the windows come back for the headers. */
const admit = db.transaction((key: Key, proof: Proof, id: string, nowMs: number) => {
  const windows = [
    { policy: "key", bucket: `key:${key.id}`, limit: 60, ms: MINUTE_MS },
    { policy: "daily", bucket: `daily:${key.account_id}`, limit: 5_000, ms: DAY_MS }
  ].map((w) => ({ ...w, start: nowMs - (nowMs % w.ms) }))
  const [first, second] = windows.map((w) => w.bucket).sort() as [string, string]
  ensureCounters.run(first, second)
  const stored = new Map((readCounters.all(first, second) as Array<Counter>).map((row) => [row.bucket, row]))
  // A counter from an older window counts as 0; one from a newer window (another clock) counts.
  const counts = windows.map((w) => (stored.get(w.bucket)!.window_start >= w.start ? stored.get(w.bucket)!.count : 0))
  const admitted = windows.every((w, i) => counts[i]! + 1 <= w.limit)
  if (admitted) {
    windows.forEach((w, i) => setCounter.run(Math.max(w.start, stored.get(w.bucket)!.window_start), counts[i]! + 1, w.bucket))
    insertProof.run(id, key.account_id, proof.type, proof.circuit, JSON.stringify(proof.inputs), JSON.stringify(proof.public_inputs), new Date(nowMs).toISOString())
  }
  return {
    admitted,
    windows: windows.map((w, i) => ({
      ...w,
      exhausted: counts[i]! + 1 > w.limit,
      remaining: Math.max(0, w.limit - counts[i]! - (admitted ? 1 : 0)),
      reset: Math.max(1, Math.ceil((w.start + w.ms - nowMs) / 1000))
    }))
  }
})

const createProof = (key: Key, body: unknown, response: ServerResponse) => {
  const proof = validate(body)
  if (proof === undefined) return fail(response, 400, "invalid_request")
  const nowMs = Date.now()
  const id = makeId("proof", nowMs)
  const { admitted, windows } = admit.immediate(key, proof, id, nowMs)
  const tightest = [...windows].sort((a, b) => a.remaining - b.remaining || b.reset - a.reset)[0]!
  const headers = {
    "ratelimit-policy": windows.map((w) => `"${w.policy}";q=${w.limit};w=${w.ms / 1000}`).join(", "),
    ratelimit: `"${tightest.policy}";r=${tightest.remaining};t=${tightest.reset}`
  }
  if (!admitted) return fail(response, 429, "rate_limit_exceeded", { ...headers, "retry-after": String(windows.find((w) => w.exhausted)!.reset) })
  send(response, 202, JSON.stringify({
    proof_id: id,
    type: proof.type,
    circuit: proof.circuit,
    status: "queued",
    public_inputs: proof.public_inputs,
    proof_blob: null,
    error: null,
    duration_ms: null,
    created_at: new Date(nowMs).toISOString(),
    started_at: null,
    completed_at: null,
    canceled_at: null,
    expires_at: null
  }), headers)
}

/** Reads the body (at most 1 MiB) as JSON, then hands it on; 415/413/400 otherwise. */
const readJson = (request: IncomingMessage, response: ServerResponse, then: (body: unknown) => void) => {
  if (!JSON_TYPE.test(request.headers["content-type"] ?? "")) return fail(response, 415, "unsupported_media_type")
  const chunks: Array<Buffer> = []
  let size = 0
  request.on("data", (chunk: Buffer) => {
    size += chunk.length
    if (size <= MAX_BODY_BYTES) chunks.push(chunk)
  })
  request.on("end", () => {
    if (size > MAX_BODY_BYTES) return fail(response, 413, "payload_too_large")
    let body: unknown
    try {
      body = JSON.parse(Buffer.concat(chunks).toString("utf8"))
    } catch {
      return fail(response, 400, "invalid_request")
    }
    then(body)
  })
}

createServer((request, response) => {
  if (request.method === "GET" && request.url === "/api/v1/keys") {
    const key = authenticate(request, response, "keys:read")
    if (key === undefined) return
    const keys = (activeKeys.all(key.account_id) as Array<Record<string, unknown> & { scopes: string }>).map((k) => ({ ...k, scopes: JSON.parse(k.scopes) }))
    return send(response, 200, JSON.stringify({ keys, total: keys.length, limit: 10 }))
  }
  if (request.method === "POST" && request.url === "/api/v1/proofs") {
    const key = authenticate(request, response, "proofs:write")
    if (key === undefined) return void request.resume()
    return readJson(request, response, (body) => createProof(key, body, response))
  }
  fail(response, 404, "not_found")
}).listen(Number(port), "127.0.0.1")
