/**
 * The connection string as pg is given it. pg treats `sslmode=prefer`, `require` and `verify-ca` as
 * `verify-full` (the server's certificate is checked) and prints a multi-line security warning each
 * time it reads one, announcing libpq's weaker meaning in a later major version. mzk keeps today's
 * meaning, stated in its docs, and says it to pg in its own words, so an operator's terminal shows
 * mzk's one line, not pg's notice. `uselibpqcompat=true` (libpq's meaning now) is passed as given.
 */
export const pgConnectionString = (url: string): string =>
  /[?&]uselibpqcompat=true(?:&|$)/.test(url) ? url : url.replace(/([?&])sslmode=(?:prefer|require|verify-ca)(?=&|$)/g, "$1sslmode=verify-full")
