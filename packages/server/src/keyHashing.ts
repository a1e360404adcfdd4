import { ApiKeyHashing } from "@mzk/core"
import { Layer } from "effect"
import { createHash } from "node:crypto"

/** API keys hashed with node:crypto's SHA-256: the same hex as the core's pure `hashApiKey`, natively. */
export const NodeApiKeyHashing = Layer.succeed(ApiKeyHashing, {
  hash: (raw) => createHash("sha256").update(raw, "utf8").digest("hex")
})
