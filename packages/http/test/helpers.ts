import { SCOPES } from "@mzk/core"
import { expect } from "vitest"
import type { makeHarness, Reply } from "./support.js"

export type Harness = Awaited<ReturnType<typeof makeHarness>>
export type ScopeName = (typeof SCOPES)[number]

export const HOOK_URL = "https://hooks.example.com/mzk"

/** A new key of the same account holding exactly `scopes` (made with an all-scope `token`). */
export const keyWithScopes = async (h: Harness, token: string, scopes: ReadonlyArray<ScopeName>, name = "scoped") => {
  const reply = await h.call("POST", "/api/v1/keys", { token, body: { name, scopes } })
  if (reply.status !== 201) throw new Error(`could not create a scoped key: ${reply.status} ${reply.text}`)
  return reply.json.key as string
}

/** Every scope but `scope`: a key that may do everything except what needs `scope`. */
export const allBut = (scope: ScopeName): Array<ScopeName> => SCOPES.filter((s) => s !== scope)

export const createWebhook = async (h: Harness, token: string, body: Record<string, unknown> = {}) => {
  const reply = await h.call("POST", "/api/v1/webhooks", {
    token,
    body: { url: HOOK_URL, events: ["proof.completed"], ...body }
  })
  if (reply.status !== 201) throw new Error(`could not create a webhook: ${reply.status} ${reply.text}`)
  return reply.json as { id: string; secret: string; [k: string]: unknown }
}

export const MULTIPLIER = { type: "multiplier", inputs: { a: 3, b: 11 } }

export const createProof = async (h: Harness, token: string, body: unknown = MULTIPLIER) => {
  const reply = await h.call("POST", "/api/v1/proofs", { token, body })
  if (reply.status !== 202) throw new Error(`could not create a proof: ${reply.status} ${reply.text}`)
  return reply.json as { proof_id: string; status: string; [k: string]: unknown }
}

/** Every response carries a `Request-Id`. */
export const expectRequestId = (reply: Reply) => expect(reply.headers.get("request-id")).toMatch(/^req_[0-9a-z]{26}$/)

export const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/

/** The paths of an invalid_request's details. */
export const detailPaths = (reply: Reply): Array<string> =>
  ((reply.json?.error?.details ?? []) as Array<{ path: string }>).map((d) => d.path)
