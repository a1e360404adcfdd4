/**
 * Postgres SQLSTATEs (and the system's connection errors) an operator can act on, by code or by
 * class (the code's first two characters).
 */
const BY_CODE: Readonly<Record<string, string>> = {
  "53100": "the database server's disk is full",
  "25006": "the database is read-only: a standby, or default_transaction_read_only is on",
  "58030": "an I/O error on the database server's disk",
  "57P01": "the database server is shutting down",
  "57P02": "the database server is shutting down",
  "57P03": "the database server is not accepting connections yet",
  "55000": "the database is not accepting connections",
  "3D000": "the database does not exist",
  "28000": "the database refused mzk's credentials",
  "28P01": "the database refused mzk's credentials",
  ECONNREFUSED: "the connection to the database was refused",
  ECONNRESET: "the connection to the database was reset",
  ETIMEDOUT: "the connection to the database timed out",
  EHOSTUNREACH: "the database's host is unreachable",
  ENOTFOUND: "the database's host name does not resolve",
  EPIPE: "the connection to the database was closed"
}

const BY_CLASS: Readonly<Record<string, string>> = {
  "53": "the database server is out of resources",
  "08": "the connection to the database failed",
  "57": "the database server stopped the operation"
}

/** `SqlDialect.describeFailure` for pg's errors. */
export const describePostgresFailure = (cause: unknown): string | undefined => {
  if (typeof cause !== "object" || cause === null) return undefined
  const code = "code" in cause && typeof cause.code === "string" ? cause.code : undefined
  if (code !== undefined) {
    const reason = BY_CODE[code] ?? BY_CLASS[code.slice(0, 2)]
    if (reason !== undefined) return `${reason} (${code})`
  }
  // pg's own words for a connection that ended under a query; it carries no code.
  if (cause instanceof Error && /^Connection terminated/.test(cause.message)) return "the connection to the database was lost"
  return undefined
}
