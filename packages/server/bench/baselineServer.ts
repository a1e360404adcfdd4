/**
 * The yardstick for the HTTP benchmark: the same work as mzk's `GET /api/v1/keys`, written by hand
 * on node:http + better-sqlite3 with no framework: check the key's format, look it up by SHA-256,
 * list the account's active keys as JSON. Reads the database mzk created.
 */
import Database from "better-sqlite3"
import { createHash } from "node:crypto"
import { createServer } from "node:http"

const [file, port] = process.argv.slice(2) as [string, string]
const db = new Database(file, { readonly: true })
const byHash = db.prepare("select account_id, revoked_at from api_keys where hash = ?")
const activeKeys = db.prepare(
  "select id, name, description, prefix, scopes, created_at, last_used_at from api_keys where account_id = ? and revoked_at is null order by id"
)
const KEY = /^mzk_[0-9A-Za-z]{49}$/

createServer((request, response) => {
  const token = (request.headers.authorization ?? "").slice(7)
  const key = KEY.test(token) ? (byHash.get(createHash("sha256").update(token).digest("hex")) as { account_id: string; revoked_at: string | null } | undefined) : undefined
  if (key === undefined || key.revoked_at !== null) {
    response.writeHead(401, { "content-type": "application/json" }).end('{"error":{"code":"invalid_api_key"}}')
    return
  }
  const keys = (activeKeys.all(key.account_id) as Array<Record<string, unknown> & { scopes: string }>).map((k) => ({ ...k, scopes: JSON.parse(k.scopes) }))
  response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ keys, total: keys.length, limit: 10 }))
}).listen(Number(port), "127.0.0.1")
