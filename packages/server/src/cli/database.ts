import { HelpDoc, Options, ValidationError } from "@effect/cli"
import { Config, Effect, Either } from "effect"
import { DEFAULT_DATABASE, type DatabaseTarget, parseDatabaseUrl, redactUrl } from "../database.js"

export const database = Options.text("database").pipe(
  Options.withDescription("sqlite:<path> (default sqlite:./data/mzk.db) or postgres://user@host:5432/db (MZK_DATABASE_URL)"),
  Options.withFallbackConfig(Config.string("MZK_DATABASE_URL")),
  Options.withDefault(DEFAULT_DATABASE),
  Options.mapEffect((text) =>
    Either.match(parseDatabaseUrl(text), {
      onLeft: (message) => Effect.fail(ValidationError.invalidValue(HelpDoc.p(message))),
      onRight: Effect.succeed
    })
  )
)

export const describeDatabase = (target: DatabaseTarget) =>
  target.kind === "sqlite" ? `sqlite:${target.filename}` : redactUrl(target.url)
