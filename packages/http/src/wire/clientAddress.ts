import { Context } from "effect"
import proxyAddr from "proxy-addr"
import { header, type MzkRequest } from "./message.js"

/**
 * The proxies whose `X-Forwarded-For` is believed, as Express's `trust proxy` names them:
 * addresses and CIDR ranges, or `loopback`, `linklocal`, `uniquelocal`. Empty (the default): the
 * client is the connection's peer and the header is ignored, since any client can send it.
 */
export class TrustedProxies extends Context.Reference<TrustedProxies>()("@mzk/http/TrustedProxies", {
  defaultValue: (): ReadonlyArray<string> => []
}) {}

/** Why a `TrustedProxies` entry is not one, or undefined when every entry compiles. */
export const trustedProxiesProblem = (proxies: ReadonlyArray<string>): string | undefined => {
  try {
    proxyAddr.compile([...proxies])
    return undefined
  } catch (error) {
    return error instanceof Error ? error.message : String(error)
  }
}

/**
 * The client's address for a request: the connection's peer, or, where that peer is a trusted
 * proxy, the nearest address in `X-Forwarded-For` that is not one (proxy-addr, Express's rules).
 * A fetch handler sees no connection: there, with trusted proxies set, the platform in front is
 * taken as the first of them and `X-Forwarded-For` is read the same way; without, null.
 */
export const makeClientAddress = (proxies: ReadonlyArray<string>) => {
  const trust = proxyAddr.compile([...proxies])
  return (request: MzkRequest): string | null => {
    const peer = request.remoteAddress
    if (proxies.length === 0) return peer ?? null
    const forwarded = header(request, "x-forwarded-for")
    if (peer === undefined) {
      // The hops nearest first; the first not trusted is the client, else the farthest.
      const hops = (forwarded ?? "").split(",").map((hop) => hop.trim()).filter((hop) => hop !== "").reverse()
      return hops.find((hop, i) => !trust(hop, i + 1)) ?? hops.at(-1) ?? null
    }
    // proxy-addr reads a Node request's socket and headers, nothing else.
    const like = { socket: { remoteAddress: peer }, headers: forwarded === undefined ? {} : { "x-forwarded-for": forwarded } }
    return proxyAddr(like as never, trust)
  }
}
