/**
 * Every endpoint of `/api/v1`, by the group and name the server's `HttpApi` definition gives it.
 * The client builds each request from this table, and `test/endpoints.test.ts` holds it equal to
 * the definition (method, path, metering), so a route cannot move under the client unnoticed.
 */
export interface Endpoint {
  readonly method: "GET" | "POST" | "PATCH" | "DELETE"
  /** Relative to `/api/v1`; `:name` segments are filled from the call's arguments. */
  readonly path: string
  /** Counted against the proof rate limits: the response carries the RateLimit fields. */
  readonly metered?: true
}

export const ENDPOINTS = {
  keys: {
    create: { method: "POST", path: "/keys" },
    list: { method: "GET", path: "/keys" },
    revoke: { method: "DELETE", path: "/keys/:id" },
    roll: { method: "POST", path: "/keys/:id/roll" }
  },
  webhooks: {
    create: { method: "POST", path: "/webhooks" },
    list: { method: "GET", path: "/webhooks" },
    get: { method: "GET", path: "/webhooks/:id" },
    update: { method: "PATCH", path: "/webhooks/:id" },
    remove: { method: "DELETE", path: "/webhooks/:id" },
    rotateSecret: { method: "POST", path: "/webhooks/:id/rotate-secret" },
    deliveries: { method: "GET", path: "/webhooks/:id/deliveries" },
    delivery: { method: "GET", path: "/webhooks/:id/deliveries/:delivery_id" },
    test: { method: "POST", path: "/webhooks/:id/test" },
    retryDelivery: { method: "POST", path: "/webhooks/:id/deliveries/:delivery_id/retry" },
    recover: { method: "POST", path: "/webhooks/:id/recover" },
    recoveries: { method: "GET", path: "/webhooks/:id/recoveries" },
    recovery: { method: "GET", path: "/webhooks/:id/recoveries/:recovery_id" }
  },
  proofs: {
    create: { method: "POST", path: "/proofs", metered: true },
    createBatch: { method: "POST", path: "/proofs/batch", metered: true },
    list: { method: "GET", path: "/proofs" },
    get: { method: "GET", path: "/proofs/:id" },
    verify: { method: "GET", path: "/proofs/:id/verify", metered: true },
    calldata: { method: "GET", path: "/proofs/:id/calldata" },
    cancel: { method: "POST", path: "/proofs/:id/cancel" },
    cancelBatch: { method: "POST", path: "/proofs/batch/:batch_id/cancel" }
  },
  circuits: {
    create: { method: "POST", path: "/circuits" },
    list: { method: "GET", path: "/circuits" },
    get: { method: "GET", path: "/circuits/:name" },
    versions: { method: "GET", path: "/circuits/:name/versions" },
    remove: { method: "DELETE", path: "/circuits/:name" },
    verifier: { method: "GET", path: "/circuits/:name/verifier.sol" },
    artifact: { method: "GET", path: "/circuits/:name/artifacts/:kind" }
  },
  events: {
    list: { method: "GET", path: "/events" },
    get: { method: "GET", path: "/events/:id" }
  },
  audit: {
    list: { method: "GET", path: "/audit-log" }
  },
  usage: {
    get: { method: "GET", path: "/usage" }
  },
  verifications: {
    create: { method: "POST", path: "/verifications", metered: true }
  },
  verificationKeys: {
    create: { method: "POST", path: "/verification-keys", metered: true },
    list: { method: "GET", path: "/verification-keys" },
    get: { method: "GET", path: "/verification-keys/:id" },
    remove: { method: "DELETE", path: "/verification-keys/:id" }
  }
} as const satisfies Record<string, Record<string, Endpoint>>

export const API_PREFIX = "/api/v1"
