import { describe, expect, it } from "vitest"
import { pgConnectionString } from "../src/connectionString.js"

describe("the connection string pg is given", () => {
  it("says verify-full where pg reads prefer, require or verify-ca as verify-full, and leaves everything else as it was", () => {
    for (const mode of ["prefer", "require", "verify-ca"]) {
      expect(pgConnectionString(`postgres://u:p@db:5432/mzk?sslmode=${mode}`)).toBe("postgres://u:p@db:5432/mzk?sslmode=verify-full")
      expect(pgConnectionString(`postgres://db/mzk?application_name=x&sslmode=${mode}&sslrootcert=/ca.pem`))
        .toBe("postgres://db/mzk?application_name=x&sslmode=verify-full&sslrootcert=/ca.pem")
    }
    for (const url of [
      "postgres://db/mzk",
      "postgres://db/mzk?sslmode=disable",
      "postgres://db/mzk?sslmode=verify-full",
      "postgres://db/mzk?sslmode=require&uselibpqcompat=true",
      "postgres://db/mzk?sslmode=requirex",
      "postgres://require@db/sslmode"
    ]) expect(pgConnectionString(url)).toBe(url)
  })
})
