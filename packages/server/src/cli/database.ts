import type { DatabaseTarget } from "../database.js"
import { redactUrl } from "../database.js"
import { option, settings } from "./settings.js"

/** `--database` (MZK_DATABASE_URL, the config file's `database`). */
export const database = option(settings.database)

export const describeDatabase = (target: DatabaseTarget) =>
  target.kind === "sqlite" ? `sqlite:${target.filename}` : redactUrl(target.url)
