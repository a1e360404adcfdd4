// Apart from the storage layers (database.ts) so that reading a `--database` value loads no driver.
import { Either } from "effect"

/** Where the data lives: `sqlite:<path>` (or `sqlite::memory:`), or a `postgres://` URL. */
export type DatabaseTarget =
  | { readonly kind: "sqlite"; readonly filename: string }
  | { readonly kind: "postgres"; readonly url: string }

export const DEFAULT_DATABASE = "sqlite:./data/mzk.db"

export const parseDatabaseUrl = (text: string): Either.Either<DatabaseTarget, string> => {
  if (text.startsWith("sqlite:")) {
    const filename = text.slice("sqlite:".length).replace(/^\/\//, "")
    return filename === "" ? Either.left("sqlite: needs a file path, e.g. sqlite:./data/mzk.db") : Either.right({ kind: "sqlite", filename })
  }
  if (/^postgres(ql)?:\/\//.test(text)) {
    // Checked here: the driver would only say "cannot connect", at the first query.
    return URL.canParse(text)
      ? Either.right({ kind: "postgres", url: text })
      : Either.left(`Malformed PostgreSQL URL ${JSON.stringify(redactUrl(text))}: percent-encode special characters of the user and password (# as %23, @ as %40, / as %2F)`)
  }
  return Either.left(`Unknown database ${JSON.stringify(redactUrl(text))}: use sqlite:<path> or postgres://…`)
}

/** The URL without its password, for logs and messages. */
export const redactUrl = (text: string): string => {
  try {
    const url = new URL(text)
    if (url.password !== "") url.password = "***"
    return url.toString()
  } catch {
    return text.replace(/\/\/([^:/@]+):[^@]*@/, "//$1:***@")
  }
}
