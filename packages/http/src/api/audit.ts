import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { AuditEntry, ListAuditLogQuery } from "@mzk/core"
import { Schema } from "effect"
import { Authentication, requires } from "./annotations.js"

export const AuditLogPage = Schema.Struct({ entries: Schema.Array(AuditEntry), total: Schema.Int, has_more: Schema.Boolean })
  .annotations({ identifier: "AuditLogPage" })

export class AuditGroup extends HttpApiGroup.make("audit")
  .add(
    HttpApiEndpoint.get("list", "/audit-log")
      // The core's schema carries an identifier, and the platform documents an identified query
      // as a component and no parameters; its fields, unnamed, come out as one parameter each.
      .setUrlParams(Schema.Struct(ListAuditLogQuery.fields))
      .addSuccess(AuditLogPage)
      .pipe(requires("audit:read"))
      .annotate(
        OpenApi.Description,
        "The account's audit log, newest first: every change of a key, webhook or circuit, with who made it (an API key, a session, " +
          "the `mzk` command line, or mzk itself), the request id, the client's IP address and user agent, and the fields it changed. " +
          "Append-only; kept for the server's audit retention (365 days by default). `starting_after` pages on to older entries, `ending_before` back to newer ones; " +
          "`action`, `target_id` and `actor_id` filter."
      )
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Audit log")
{}
