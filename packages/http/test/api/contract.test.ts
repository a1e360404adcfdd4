import { openApiDocument } from "@mzk/http"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import type { Document, JsonSchema } from "../../scripts/contract/emit.js"
import { CLIENT_TYPES, generateContract, WEBHOOKS_EVENTS } from "../../scripts/contract/generate.js"

const root = join(import.meta.dirname, "../../../..")
const served = (): Document => JSON.parse(JSON.stringify(openApiDocument)) as Document
const generated = (document: Document, path: string) => generateContract(document).find((file) => file.path === path)!.text

describe("the client's and receiver's types are generated from the OpenAPI document", () => {
  it.each([CLIENT_TYPES, WEBHOOKS_EVENTS])("%s is what pnpm gen writes now (run pnpm gen if not)", (path) => {
    expect(readFileSync(join(root, path), "utf8")).toBe(generated(served(), path))
  })

  it("a field added to a response reaches the client's type, with its description as its doc", () => {
    const document = served() as unknown as { components: { schemas: Record<string, { properties: Record<string, JsonSchema>; required: Array<string> }> } }
    document.components.schemas.Proof!.properties.priority = { type: "integer", description: "Higher runs first" }
    document.components.schemas.Proof!.required.push("priority")
    const text = generated(document as unknown as Document, CLIENT_TYPES)
    const proof = text.slice(text.indexOf("export interface Proof {"), text.indexOf("\n}\n", text.indexOf("export interface Proof {")))
    expect(proof).toContain("/** Higher runs first */\n  readonly priority: number")
  })

  it("a new event type reaches the receiver: in EVENT_TYPES, with its data type and its place in the union", () => {
    const document = served() as unknown as { webhooks: Record<string, unknown>; components: { schemas: Record<string, JsonSchema> } }
    const completed = document.components.schemas.ProofCompletedEvent!
    document.components.schemas.ProofQueuedEvent = {
      ...completed,
      properties: { ...completed.properties, type: { type: "string", enum: ["proof.queued"] }, data: { type: "object", required: ["proof_id"], properties: { proof_id: { type: "string" } }, additionalProperties: false } }
    }
    document.webhooks["proof.queued"] = { post: { responses: {}, requestBody: { content: { "application/json": { schema: { $ref: "#/components/schemas/ProofQueuedEvent" } } } } } }
    const text = generated(document as unknown as Document, WEBHOOKS_EVENTS)
    expect(text).toContain(`  "webhook.test",\n  "proof.queued"\n] as const`)
    expect(text).toContain("export interface ProofQueuedData {\n  readonly proof_id: string\n}")
    expect(text).toContain(`readonly "proof.queued": ProofQueuedData`)
  })

  it("a schema the generator does not understand stops it instead of becoming unknown", () => {
    const document = served() as unknown as { components: { schemas: Record<string, { properties: Record<string, JsonSchema> }> } }
    document.components.schemas.Proof!.properties.priority = { type: "integer-ish" }
    expect(() => generated(document as unknown as Document, CLIENT_TYPES)).toThrow(/no TypeScript for/)
    document.components.schemas.Proof!.properties.priority = { type: "string", const: "high" }
    expect(() => generated(document as unknown as Document, CLIENT_TYPES)).toThrow(/no TypeScript for const/)
    document.components.schemas.Proof!.properties.priority = { type: "object", allOf: [{ properties: { a: { type: "string" } } }] }
    expect(() => generated(document as unknown as Document, CLIENT_TYPES)).toThrow(/no TypeScript for an allOf/)
  })
})
