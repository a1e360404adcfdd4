import ipaddr from "ipaddr.js"

/**
 * Where an address points, for the SSRF guard. Only `public` may receive webhooks; every other
 * class names why not, and that name goes into the error and the attempt log.
 */
export type AddressClass =
  | "public"
  | "invalid"
  | "unspecified"
  | "loopback"
  | "private"
  | "link_local"
  | "metadata"
  | "carrier_grade_nat"
  | "unique_local"
  | "multicast"
  | "broadcast"
  | "reserved"
  | "embedded_ipv4"

const METADATA_V4 = ["169.254.169.254", "169.254.170.2", "100.100.100.200"]

const V4_CLASSES: Readonly<Record<string, AddressClass>> = {
  unicast: "public",
  unspecified: "unspecified",
  broadcast: "broadcast",
  multicast: "multicast",
  linkLocal: "link_local",
  loopback: "loopback",
  carrierGradeNat: "carrier_grade_nat",
  private: "private"
}

const classifyV4 = (address: ipaddr.IPv4): AddressClass => {
  if (METADATA_V4.includes(address.toString())) return "metadata"
  // benchmarking, documentation, as112, amt, 240/4 and anything ipaddr.js adds later.
  return V4_CLASSES[address.range()] ?? "reserved"
}

const v4FromParts = (high: number, low: number) =>
  new ipaddr.IPv4([(high >> 8) & 0xff, high & 0xff, (low >> 8) & 0xff, low & 0xff])

/**
 * The IPv4 addresses an IPv6 address carries, when it is one of the forms that reach an IPv4
 * host: mapped (`::ffff:a.b.c.d`), SIIT (`::ffff:0:a.b.c.d`), compatible (`::a.b.c.d`), NAT64
 * (`64:ff9b::/96`), 6to4 (`2002::/16`) and Teredo (`2001::/32`, server and obfuscated client).
 * Undefined when it is none of them.
 */
const embeddedV4 = (address: ipaddr.IPv6): ReadonlyArray<ipaddr.IPv4> | undefined => {
  const p = address.parts
  const range = address.range()
  if (range === "ipv4Mapped" || range === "rfc6145") return [v4FromParts(p[6]!, p[7]!)]
  if (p.slice(0, 6).every((part) => part === 0) && range !== "unspecified" && range !== "loopback") {
    return [v4FromParts(p[6]!, p[7]!)]
  }
  if (range === "rfc6052") {
    // 64:ff9b:1::/48 (RFC 8215) is for local use: it can only lead inside some network.
    return p[2] === 0 ? [v4FromParts(p[6]!, p[7]!)] : [new ipaddr.IPv4([127, 0, 0, 1])]
  }
  if (range === "6to4") return [v4FromParts(p[1]!, p[2]!)]
  if (range === "teredo") return [v4FromParts(p[2]!, p[3]!), v4FromParts(p[6]! ^ 0xffff, p[7]! ^ 0xffff)]
  return undefined
}

const V6_CLASSES: Readonly<Record<string, AddressClass>> = {
  unicast: "public",
  unspecified: "unspecified",
  linkLocal: "link_local",
  multicast: "multicast",
  loopback: "loopback",
  uniqueLocal: "unique_local"
}

const classifyV6 = (address: ipaddr.IPv6): AddressClass => {
  if (address.zoneId !== undefined) return "link_local"
  const embedded = embeddedV4(address)
  if (embedded !== undefined) {
    const inner = embedded.map(classifyV4).find((c) => c !== "public")
    return inner === undefined ? "public" : "embedded_ipv4"
  }
  const named = V6_CLASSES[address.range()] ?? "reserved"
  // Only 2000::/3 is allocated as global unicast; ipaddr.js calls the unassigned rest "unicast" too.
  return named === "public" && (address.parts[0]! & 0xe000) !== 0x2000 ? "reserved" : named
}

/** Classifies an IP literal, with or without the brackets a URL puts around IPv6. */
export const classifyAddress = (ip: string): AddressClass => {
  const bare = ip.startsWith("[") && ip.endsWith("]") ? ip.slice(1, -1) : ip
  // Only canonical forms: resolvers and the URL parser produce them, and ipaddr.js would also
  // accept octal or hex quads that other software reads differently.
  if (ipaddr.IPv4.isValidFourPartDecimal(bare)) return classifyV4(ipaddr.IPv4.parse(bare))
  if (ipaddr.IPv6.isValid(bare) && bare.includes(":")) return classifyV6(ipaddr.IPv6.parse(bare))
  return "invalid"
}

export const isPublicAddress = (ip: string): boolean => classifyAddress(ip) === "public"

/** True for text that is an IP literal rather than a host name. */
export const isIpLiteral = (host: string): boolean => {
  const bare = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host
  return ipaddr.IPv4.isValidFourPartDecimal(bare) || (bare.includes(":") && ipaddr.IPv6.isValid(bare))
}

/** Names that point inside a network by convention, whatever DNS says. */
const isInternalName = (host: string): boolean => {
  const name = host.toLowerCase().replace(/\.$/, "")
  if (!name.includes(".")) return true // single labels resolve through search domains: intranet hosts
  return ["localhost", "local", "internal", "intranet", "lan", "home.arpa", "localdomain"].some(
    (suffix) => name === suffix || name.endsWith(`.${suffix}`)
  )
}

export type UrlProblem =
  | { readonly kind: "invalid"; readonly message: string }
  | { readonly kind: "not_public"; readonly message: string }

export interface CheckedUrl {
  readonly url: URL
  /** The host without IPv6 brackets. */
  readonly hostname: string
  readonly isLiteral: boolean
}

/**
 * The checks a webhook URL passes before anything is resolved or sent: an absolute `https` URL
 * (or `http` in development), no credentials, a port other than 0, and a host that is not a
 * non-public literal or an internal name. With `allowInsecure` only the shape is checked.
 */
export const checkWebhookUrl = (raw: string, allowInsecure: boolean): { ok: true; value: CheckedUrl } | { ok: false; problem: UrlProblem } => {
  const invalid = (message: string) => ({ ok: false as const, problem: { kind: "invalid" as const, message } })
  const notPublic = (message: string) => ({ ok: false as const, problem: { kind: "not_public" as const, message } })
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return invalid("url must be an absolute URL")
  }
  if (url.protocol !== "https:" && !(allowInsecure && url.protocol === "http:")) {
    return invalid(allowInsecure ? "url must use http or https" : "url must use https")
  }
  if (url.username !== "" || url.password !== "") return invalid("url must not contain credentials")
  if (url.hostname === "") return invalid("url must name a host")
  // Port 0 names no port a receiver can listen on; every delivery would fail.
  if (url.port === "0") return invalid("url must not use port 0")
  const hostname = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname
  const isLiteral = isIpLiteral(hostname)
  if (!allowInsecure) {
    if (isLiteral) {
      const cls = classifyAddress(hostname)
      if (cls !== "public") return notPublic(`url points to a non-public address (${cls})`)
    } else if (isInternalName(hostname)) {
      return notPublic("url must name a publicly resolvable host")
    }
  }
  return { ok: true, value: { url, hostname, isLiteral } }
}

/** The first resolved address that is not public, with its class; undefined when all are public. */
export const firstNonPublic = (addresses: ReadonlyArray<string>): { address: string; cls: AddressClass } | undefined => {
  for (const address of addresses) {
    const cls = classifyAddress(address)
    if (cls !== "public") return { address, cls }
  }
  return undefined
}
