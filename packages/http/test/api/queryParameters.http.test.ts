import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { detailPaths, type Harness } from "../helpers.js"
import { expectEnvelope, makeHarness } from "../support.js"

/**
 * The query as the `controlCharacters` stage parses it, and the `queryParameters` stage's rule over
 * its names: a name of Object.prototype's is a name like any other. The query was parsed into a
 * plain object, where `__proto__` was dropped unseen (the list answered unfiltered) and
 * `constructor` read the inherited function (a 500).
 */

let h: Harness
beforeAll(async () => {
  h = await makeHarness()
})
afterAll(() => h.close())

describe("query parameter names", () => {
  it("named like Object.prototype's properties are unknown parameters, each a 400 naming it", async () => {
    const { key } = await h.newAccount()
    for (const name of ["__proto__", "constructor", "toString", "hasOwnProperty", "valueOf"]) {
      for (const path of ["/api/v1/proofs", "/api/v1/keys"]) {
        const reply = await h.call("GET", `${path}?${name}=x&${name}=y`, { token: key })
        expectEnvelope(reply, 400, "invalid_request")
        expect(detailPaths(reply), `${path}?${name}`).toEqual([name])
      }
    }
  })

  it("a metadata filter on such a key is a pair like any other", async () => {
    const { key } = await h.newAccount()
    const listed = await h.call("GET", "/api/v1/proofs?metadata[constructor]=x&metadata[__proto__]=y", { token: key })
    expect([listed.status, listed.json.total]).toEqual([200, 0])
  })
})
