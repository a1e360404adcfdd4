/**
 * The yardstick for the HTTP benchmark (http.ts): mzk's work for `GET /api/v1/keys` and
 * `POST /api/v1/proofs`, written by hand on node:http + better-sqlite3 with no framework, on the
 * database file mzk created, opened as mzk's adapter opens it (WAL, busy timeout, foreign keys).
 *
 * Both routes check the key's format, look it up by SHA-256, refuse it revoked or expired, mark it
 * used at most once a minute, check its scope and send a `Request-Id`. GET lists the account's
 * active keys, newest first. POST checks the Content-Type and body size, parses the JSON and
 * validates `{type, inputs}` (the multiplier only: canonical decimal strings or safe integers below
 * the field modulus), then in ONE transaction charges the two fixed windows (`key:<key_id>` per
 * clock minute, `daily:<account_id>` per UTC day, all or nothing, as
 * packages/adapters-sql/src/repos/rateLimits.ts does), inserts the queued proof row and reads its
 * queue position: 202 with the proof and the RateLimit fields, or 429 with `Retry-After`.
 *
 * What the answers hold comes from mzk's API definition, read once at start: the success status of
 * each endpoint, and each body's fields in the contract's order. A field this server cannot fill
 * stops it at start with its name, so a field added to the contract fails the benchmark (and its
 * smoke run) instead of making the two servers answer different things.
 *
 *   tsx packages/server/bench/baselineServer.ts <sqlite file> <port>
 */
import { HttpApiSchema } from "@effect/platform"
import { MzkApi } from "@mzk/http"
import Database from "better-sqlite3"
import { createHash, randomBytes } from "node:crypto"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"

const [file, port] = process.argv.slice(2) as [string, string]

interface ContractBody { readonly fields: Readonly<Record<string, { readonly value?: ContractBody }>> }
interface ContractEndpoint { readonly path: string; readonly method: string; readonly successSchema: ContractBody }
const endpoint = (group: string, name: string) =>
  (MzkApi.groups as unknown as Record<string, { endpoints: Record<string, ContractEndpoint> }>)[group]!.endpoints[name]!
const listKeys = endpoint("keys", "list")
const createProofEndpoint = endpoint("proofs", "create")
const statusOf = (e: ContractEndpoint) => HttpApiSchema.getStatusSuccess(e.successSchema as never)

/** `fill`'s entries in the order of the contract's `fields`; a field `fill` lacks stops the server. */
const inContractOrder = <F>(what: string, fields: Readonly<Record<string, unknown>>, fill: Readonly<Record<string, F>>) => {
  const missing = Object.keys(fields).filter((name) => !Object.hasOwn(fill, name))
  if (missing.length > 0) throw new Error(`baselineServer.ts cannot fill ${what}'s field(s) ${missing.join(", ")}: teach it them`)
  return Object.keys(fields).map((name) => [name, fill[name]!] as const)
}

const db = new Database(file)
db.pragma("journal_mode = WAL")
db.pragma("busy_timeout = 5000")
db.pragma("synchronous = NORMAL")
db.pragma("foreign_keys = ON")

// The key listing reads the contract's fields of a key as columns of the same names, in its order
// (a field with no such column stops the server at the statement's preparation); scopes and
// metadata are JSON text.
const keyColumns = Object.keys(listKeys.successSchema.fields["keys"]!.value!.fields).map((name) => `"${name}"`).join(", ")
const JSON_COLUMNS = ["scopes", "metadata"]

const byHash = db.prepare("select id, account_id, scopes, last_used_at, revoked_at, expires_at from api_keys where hash = ?")
const touch = db.prepare("update api_keys set last_used_at = ? where id = ? and (last_used_at is null or last_used_at < ?)")
const activeKeys = db.prepare(
  `select ${keyColumns} from api_keys where account_id = ? and revoked_at is null and (expires_at is null or expires_at > ?) order by id desc`
)
const ensureCounters = db.prepare("insert into rate_counters (bucket, window_start, count) values (?, 0, 0), (?, 0, 0) on conflict (bucket) do nothing")
const readCounters = db.prepare("select bucket, window_start, count from rate_counters where bucket in (?, ?) order by bucket")
const setCounter = db.prepare("update rate_counters set window_start = ?, count = ? where bucket = ?")
const insertProof = db.prepare(
  "insert into proofs (id, account_id, batch_id, type, circuit, circuit_id, circuit_version, proving_system, status, inputs, public_inputs, " +
    "proof_blob, error, duration_ms, proving_ms, priority_rank, deadline_at, attempts, lease_expires_at, created_at, started_at, completed_at, " +
    "finished_at, canceled_at, expires_at, metadata) " +
    "values (?, ?, null, ?, ?, null, 1, 'groth16', 'queued', ?, ?, null, null, null, null, 1, null, 0, null, ?, null, null, null, null, null, '{}')"
)
// The proof's place in its account's queue: queued proofs of higher priority, or of its own and no newer.
const queuePosition = db.prepare(
  "select count(*) as n from proofs as q, proofs as p where p.id = ? and q.status = 'queued' and q.account_id = p.account_id " +
    "and (q.priority_rank < p.priority_rank or (q.priority_rank = p.priority_rank and q.id <= p.id))"
)

const KEY = /^mzk_[0-9A-Za-z]{49}$/
const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i
const DECIMAL = /^(0|[1-9][0-9]*)$/
const MAX_BODY_BYTES = 1024 * 1024
const MINUTE_MS = 60_000
const DAY_MS = 86_400_000
const MAX_ACTIVE_KEYS = 10
// The one proof type the benchmark sends, as packages/proving's catalog describes it.
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
  response.writeHead(status, { "content-type": "application/json", ...headers, "request-id": makeId("req", Date.now()) }).end(body)
const fail = (response: ServerResponse, status: number, code: string, headers: Record<string, string> = {}) =>
  send(response, status, JSON.stringify({ error: { code } }), headers)

interface Key {
  readonly id: string
  readonly account_id: string
  readonly scopes: string
  readonly last_used_at: string | null
  readonly revoked_at: string | null
  readonly expires_at: string | null
}

/** The key behind the bearer token, if it is active and has `scope`; otherwise answers 401/403. */
const authenticate = (request: IncomingMessage, response: ServerResponse, scope: string): Key | undefined => {
  const token = (request.headers.authorization ?? "").slice(7)
  const key = KEY.test(token) ? (byHash.get(createHash("sha256").update(token).digest("hex")) as Key | undefined) : undefined
  const nowMs = Date.now()
  const now = new Date(nowMs).toISOString()
  if (key === undefined || key.revoked_at !== null || (key.expires_at !== null && key.expires_at <= now)) return void fail(response, 401, "invalid_api_key")
  const staleBefore = new Date(nowMs - MINUTE_MS + 1).toISOString()
  if (key.last_used_at === null || key.last_used_at < staleBefore) touch.run(now, key.id, staleBefore)
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
interface Queued { readonly id: string; readonly proof: Proof; readonly createdAt: string; readonly position: number }

/** Every field of a just-queued proof, in the contract's order. */
const PROOF_FIELDS = inContractOrder<(q: Queued) => unknown>("Proof", createProofEndpoint.successSchema.fields, {
  proof_id: (q) => q.id,
  type: (q) => q.proof.type,
  circuit: (q) => q.proof.circuit,
  circuit_version: () => 1,
  proving_system: () => "groth16",
  status: () => "queued",
  public_inputs: (q) => q.proof.public_inputs,
  proof_blob: () => null,
  error: () => null,
  duration_ms: () => null,
  proving_ms: () => null,
  priority: () => "normal",
  deadline_at: () => null,
  queue_position: (q) => q.position,
  created_at: (q) => q.createdAt,
  queued_at: (q) => q.createdAt,
  started_at: () => null,
  finished_at: () => null,
  completed_at: () => null,
  canceled_at: () => null,
  expires_at: () => null,
  metadata: () => ({})
})
const LIST_FIELDS = inContractOrder<(keys: Array<unknown>) => unknown>("ApiKeyList", listKeys.successSchema.fields, {
  keys: (keys) => keys,
  total: (keys) => keys.length,
  limit: () => MAX_ACTIVE_KEYS
})
const LIST_STATUS = statusOf(listKeys)
const CREATED_STATUS = statusOf(createProofEndpoint)

/** Charges both windows, queues the proof and reads its place, all or nothing; the windows come back for the headers. */
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
  let position = 0
  if (admitted) {
    windows.forEach((w, i) => setCounter.run(Math.max(w.start, stored.get(w.bucket)!.window_start), counts[i]! + 1, w.bucket))
    insertProof.run(id, key.account_id, proof.type, proof.circuit, JSON.stringify(proof.inputs), JSON.stringify(proof.public_inputs), new Date(nowMs).toISOString())
    position = (queuePosition.get(id) as { n: number }).n
  }
  return {
    admitted,
    position,
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
  const { admitted, position, windows } = admit.immediate(key, proof, id, nowMs)
  const tightest = [...windows].sort((a, b) => a.remaining - b.remaining || b.reset - a.reset)[0]!
  const headers = {
    "ratelimit-policy": windows.map((w) => `"${w.policy}";q=${w.limit};w=${w.ms / 1000}`).join(", "),
    ratelimit: `"${tightest.policy}";r=${tightest.remaining};t=${tightest.reset}`
  }
  if (!admitted) return fail(response, 429, "rate_limit_exceeded", { ...headers, "retry-after": String(windows.find((w) => w.exhausted)!.reset) })
  const queued: Queued = { id, proof, createdAt: new Date(nowMs).toISOString(), position }
  const answer: Record<string, unknown> = {}
  for (const [name, fill] of PROOF_FIELDS) answer[name] = fill(queued)
  send(response, CREATED_STATUS, JSON.stringify(answer), headers)
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
  if (request.method === listKeys.method && request.url === listKeys.path) {
    const key = authenticate(request, response, "keys:read")
    if (key === undefined) return
    const keys = (activeKeys.all(key.account_id, new Date().toISOString()) as Array<Record<string, unknown>>).map((k) => {
      for (const column of JSON_COLUMNS) k[column] = JSON.parse(k[column] as string)
      return k
    })
    const answer: Record<string, unknown> = {}
    for (const [name, fill] of LIST_FIELDS) answer[name] = fill(keys)
    return send(response, LIST_STATUS, JSON.stringify(answer))
  }
  if (request.method === createProofEndpoint.method && request.url === createProofEndpoint.path) {
    const key = authenticate(request, response, "proofs:write")
    if (key === undefined) return void request.resume()
    return readJson(request, response, (body) => createProof(key, body, response))
  }
  fail(response, 404, "not_found")
}).listen(Number(port), "127.0.0.1")
