import { makeClientAddress, type MzkRequest, trustedProxiesProblem } from "@mzk/http"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"

const request = (remoteAddress: string | undefined, forwarded?: string): MzkRequest => ({
  method: "POST",
  url: "/api/v1/keys",
  headers: forwarded === undefined ? {} : { "x-forwarded-for": forwarded },
  body: Effect.succeed(""),
  stream: () => Effect.void,
  remoteAddress
})

describe("the client address", () => {
  it("is the connection's peer unless it is a trusted proxy; X-Forwarded-For from anyone else is ignored", () => {
    const none = makeClientAddress([])
    expect(none(request("203.0.113.9", "198.51.100.4"))).toBe("203.0.113.9")
    const loopback = makeClientAddress(["loopback"])
    expect(loopback(request("203.0.113.9", "198.51.100.4"))).toBe("203.0.113.9")
    expect(loopback(request("127.0.0.1", "198.51.100.4"))).toBe("198.51.100.4")
    expect(loopback(request("::1", "198.51.100.4"))).toBe("198.51.100.4")
    expect(loopback(request("127.0.0.1"))).toBe("127.0.0.1")
  })

  it("walks the proxy chain from the nearest hop and stops at the first untrusted one (what a client wrote before it is not believed)", () => {
    const chain = makeClientAddress(["loopback", "10.0.0.0/8"])
    expect(chain(request("127.0.0.1", "6.6.6.6, 198.51.100.4, 10.1.2.3"))).toBe("198.51.100.4")
    expect(chain(request("127.0.0.1", "10.9.9.9, 10.1.2.3"))).toBe("10.9.9.9")
  })

  it("without a connection (a fetch handler) is null, or with trusted proxies what X-Forwarded-For names", () => {
    expect(makeClientAddress([])(request(undefined, "198.51.100.4"))).toBeNull()
    const platform = makeClientAddress(["10.0.0.0/8"])
    expect(platform(request(undefined, "198.51.100.4"))).toBe("198.51.100.4")
    expect(platform(request(undefined, "6.6.6.6, 198.51.100.4, 10.1.2.3"))).toBe("198.51.100.4")
    expect(platform(request(undefined))).toBeNull()
  })

  it("refuses a setting that names no address or range", () => {
    expect(trustedProxiesProblem(["loopback", "10.0.0.0/8", "2001:db8::/32", "192.0.2.1"])).toBeUndefined()
    expect(trustedProxiesProblem(["proxy.internal"])).toMatch(/proxy\.internal/)
    expect(trustedProxiesProblem(["10.0.0.0/99"])).toMatch(/10\.0\.0\.0\/99/)
  })
})
