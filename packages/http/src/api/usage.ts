import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Usage } from "@mzk/core"
import { Authentication, requires } from "./annotations.js"

export class UsageGroup extends HttpApiGroup.make("usage")
  .add(
    HttpApiEndpoint.get("get", "/usage")
      .addSuccess(Usage)
      .pipe(requires("proofs:read"))
      .annotate(
        OpenApi.Description,
        "What the account has used and has left, now: the rate-limit windows a proof request of this caller would be charged " +
          "against (the key's minute, null for a session; the account's UTC day) with `limit`, `used`, `remaining` and when each " +
          "resets; the account's proofs created today by status; and the worker time (`duration_ms` summed) of its proofs that " +
          "settled today and this month (UTC), in all and per circuit. Reading it charges nothing."
      )
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Usage")
{}
