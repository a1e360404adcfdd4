import { Console, Effect } from "effect"
import { resolve } from "node:path"
import type { DatabaseTarget } from "../databaseTarget.js"
import { redactUrl } from "../databaseTarget.js"
import { option, settings } from "./settings.js"

/** `--database` or `--database-url` (MZK_DATABASE_URL, the config file's `database`). */
export const database = option(settings.database)

export const describeDatabase = (target: DatabaseTarget) =>
  target.kind === "sqlite" ? `sqlite:${target.filename}` : redactUrl(target.url)

/**
 * The last line of a command that wrote: which database it wrote to, a SQLite file by its full
 * path (a relative default depends on the folder the command ran in) and a URL without its
 * password. With `--json` it goes to stderr, so that stdout stays one JSON document.
 */
export const wroteTo = (target: DatabaseTarget, json = false) => {
  const where = target.kind === "sqlite" && target.filename !== ":memory:" ? `sqlite:${resolve(target.filename)}` : describeDatabase(target)
  const line = `Wrote to ${where}`
  return json ? Effect.sync(() => void process.stderr.write(`${line}\n`)) : Console.log(line)
}
