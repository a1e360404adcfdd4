import { describe, expect, it } from "@effect/vitest"
import {
  Accounts,
  classifyAddress,
  computeSignature,
  CreateWebhookInput,
  decodeInput,
  DEFAULT_WEBHOOK_CONFIG,
  SUBSCRIBABLE_EVENT_TYPES,
  HostResolutionFailure,
  HostResolver,
  signatureHeader,
  truncateUtf8,
  UpdateWebhookInput,
  WebhookConfig,
  Webhooks,
  WebhooksRepo
} from "@mzk/core"
import { testCore } from "@mzk/testkit"
import { Effect, Layer, Redacted, TestClock } from "effect"
import { createHmac } from "node:crypto"

const TestLayer = testCore()
const newAccount = Effect.map(Effect.flatMap(Accounts, (a) => a.create({ name: "Acme" })), (a) => a.id)
const body = (url: string, extra: Partial<CreateWebhookInput> = {}): CreateWebhookInput => ({ url, events: ["proof.completed"], ...extra })
/** Raw bodies as the HTTP layer receives them: decoded at the boundary, then given to the service. */
const decodeCreate = decodeInput(CreateWebhookInput)
const decodeUpdate = decodeInput(UpdateWebhookInput)

/** A resolver with fixed answers, so no test asks real DNS. */
const resolverLayer = (answers: Readonly<Record<string, ReadonlyArray<string>>>) =>
  Layer.succeed(HostResolver, {
    resolve: (host) =>
      host in answers ? Effect.succeed(answers[host]!) : Effect.fail(new HostResolutionFailure({ message: `no such host ${host}` }))
  })

const NON_PUBLIC_URLS = [
  "https://127.0.0.1",
  "https://[::1]",
  "https://10.0.0.5",
  "https://169.254.169.254",
  "https://[::ffff:127.0.0.1]",
  "https://[::ffff:a00:5]/x",
  "https://[64:ff9b::a00:5]/",
  "https://[2002:c0a8:101::1]/",
  "https://[fd00:ec2::254]/",
  "https://100.64.0.1/",
  "https://0.0.0.0/",
  "https://localhost/",
  "https://metadata.google.internal/",
  "https://intranet/"
]

describe("Webhooks service", () => {
  it.effect("create returns the whsec_ secret once; get and list never show it", () =>
    Effect.gen(function*() {
      const account = yield* newAccount
      const webhooks = yield* Webhooks
      yield* TestClock.setTime(Date.UTC(2026, 10, 22, 9, 30))
      const created = yield* webhooks.create(account, {
        url: "https://hooks.example.com/mzk",
        events: ["proof.completed", "key.created"],
        description: "billing"
      })
      const secret = Redacted.value(created.secret)
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
      expect(String(created.secret)).not.toContain("whsec_")
      expect(created.webhook).toEqual({
        id: expect.stringMatching(/^wh_/),
        url: "https://hooks.example.com/mzk",
        events: ["proof.completed", "key.created"],
        description: "billing",
        active: true,
        disabled_reason: null,
        previous_secret_expires_at: null,
        created_at: "2026-11-22T09:30:00.000Z",
        updated_at: "2026-11-22T09:30:00.000Z",
        metadata: {}
      })
      const got = yield* webhooks.get(account, created.webhook.id)
      const listed = yield* webhooks.list(account)
      expect(got).toEqual(created.webhook)
      expect(listed).toEqual({ webhooks: [created.webhook], total: 1, has_more: false })
      expect(JSON.stringify([got, listed])).not.toContain(secret)
      expect(JSON.stringify([got, listed])).not.toContain('"secret"')
      expect(JSON.stringify([got, listed])).not.toContain("whsec_")
      const other = yield* webhooks.create(account, body("https://hooks.example.com/2"))
      expect(Redacted.value(other.secret)).not.toBe(secret)
    }).pipe(Effect.provide(TestLayer)))

  it.effect("create may start inactive; events must be a non-empty subset of the subscribable types without repeats", () =>
    Effect.gen(function*() {
      const account = yield* newAccount
      const webhooks = yield* Webhooks
      expect((yield* webhooks.create(account, body("https://a.example.com/", { active: false }))).webhook.active).toBe(false)
      expect((yield* webhooks.create(account, { url: "https://a.example.com/", events: [...SUBSCRIBABLE_EVENT_TYPES] })).webhook.events)
        .toEqual(SUBSCRIBABLE_EVENT_TYPES)
      const refusals = [
        [{ url: "https://a.example.com/", events: [] }, "events"],
        [{ url: "https://a.example.com/", events: ["proof.completed", "proof.completed"] }, "events"],
        [{ url: "https://a.example.com/", events: ["proof.started"] }, "events.0"],
        // Sent only to the webhook a test is asked of.
        [{ url: "https://a.example.com/", events: ["proof.completed", "webhook.test"] }, "events.1"],
        [{ url: "https://a.example.com/" }, "events"],
        [{ events: ["key.created"] }, "url"],
        [{ url: "http://a.example.com/", events: ["key.created"] }, "url"],
        [{ url: "not a url", events: ["key.created"] }, "url"],
        [{ url: "https://user:pw@a.example.com/", events: ["key.created"] }, "url"],
        [{ url: "https://a.example.com/", events: ["key.created"], description: "x".repeat(1025) }, "description"],
        [{ url: "https://a.example.com/", events: ["key.created"], secret: "whsec_mine" }, "secret"],
        [{ url: "https://a.example.com/", events: ["key.created"], active: "yes" }, "active"]
      ] as const
      for (const [input, path] of refusals) {
        const error = yield* Effect.flip(Effect.flatMap(decodeCreate(input), (decoded) => webhooks.create(account, decoded)))
        expect(error._tag, JSON.stringify(input)).toBe("InvalidRequest")
        if (error._tag === "InvalidRequest") expect(error.details?.map((d) => d.path), JSON.stringify(input)).toContain(path)
      }
      expect((yield* webhooks.list(account)).total).toBe(2)
    }).pipe(Effect.provide(TestLayer)))

  it.effect("non-public hosts are refused at create and at update with InvalidWebhookUrl", () =>
    Effect.gen(function*() {
      const account = yield* newAccount
      const webhooks = yield* Webhooks
      const good = yield* webhooks.create(account, body("https://public.example.com/"))
      for (const url of [...NON_PUBLIC_URLS, "https://private.example.com/", "https://mixed.example.com/"]) {
        expect((yield* Effect.flip(webhooks.create(account, body(url))))._tag, url).toBe("InvalidWebhookUrl")
        expect((yield* Effect.flip(webhooks.update(account, good.webhook.id, { url })))._tag, url).toBe("InvalidWebhookUrl")
      }
      expect((yield* webhooks.list(account)).total).toBe(1)
      expect((yield* webhooks.get(account, good.webhook.id)).url).toBe("https://public.example.com/")
      // Unresolvable names pass: the check at delivery time still stands between them and a network.
      expect((yield* webhooks.create(account, body("https://not-yet.example.com/"))).webhook.active).toBe(true)
    }).pipe(
      Effect.provide(TestLayer),
      Effect.provide(resolverLayer({
        "public.example.com": ["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"],
        "private.example.com": ["10.1.2.3"],
        "mixed.example.com": ["93.184.216.34", "192.168.1.10"]
      }))
    ))

  it.effect("the development flag admits http and loopback", () =>
    Effect.gen(function*() {
      const account = yield* newAccount
      const created = yield* (yield* Webhooks).create(account, body("http://127.0.0.1:8080/hook"))
      expect(created.webhook.url).toBe("http://127.0.0.1:8080/hook")
      expect((yield* Effect.flip((yield* Webhooks).create(account, body("ftp://127.0.0.1/"))))._tag).toBe("InvalidRequest")
    }).pipe(
      Effect.provide(TestLayer),
      Effect.provideService(WebhookConfig, { ...DEFAULT_WEBHOOK_CONFIG, allowInsecureWebhooks: true })
    ))

  it.effect("an account holds at most 20 webhooks", () =>
    Effect.gen(function*() {
      const account = yield* newAccount
      const webhooks = yield* Webhooks
      for (let i = 0; i < 20; i++) yield* webhooks.create(account, body(`https://h${i}.example.com/`))
      expect((yield* Effect.flip(webhooks.create(account, body("https://h20.example.com/"))))._tag).toBe("WebhookLimitReached")
      // Another account is not affected.
      yield* webhooks.create(yield* newAccount, body("https://h20.example.com/"))
    }).pipe(Effect.provide(TestLayer)))

  it.effect("update has PATCH semantics; active: true clears disabled_reason", () =>
    Effect.gen(function*() {
      const account = yield* newAccount
      const webhooks = yield* Webhooks
      const created = yield* webhooks.create(account, body("https://a.example.com/", { description: "first" }))
      yield* TestClock.adjust(1000)
      const renamed = yield* webhooks.update(account, created.webhook.id, { events: ["key.revoked"] })
      expect(renamed).toEqual({
        ...created.webhook,
        events: ["key.revoked"],
        updated_at: "1970-01-01T00:00:01.000Z"
      })
      const off = yield* webhooks.update(account, created.webhook.id, { active: false, description: null })
      expect([off.active, off.description, off.url]).toEqual([false, null, "https://a.example.com/"])
      yield* (yield* WebhooksRepo).update(account, created.webhook.id, { disabled_reason: "delivery_failures" }, off.updated_at)
      const on = yield* webhooks.update(account, created.webhook.id, { active: true })
      expect([on.active, on.disabled_reason]).toEqual([true, null])
      const bad = yield* Effect.flip(
        Effect.flatMap(decodeUpdate({ events: [], bogus: 1 }), (changes) => webhooks.update(account, created.webhook.id, changes))
      )
      expect(bad._tag === "InvalidRequest" && bad.details?.map((d) => d.path).sort()).toEqual(["bogus", "events"])
    }).pipe(Effect.provide(TestLayer)))

  it.effect("unknown, malformed and other accounts' ids are WebhookNotFound; delete is permanent", () =>
    Effect.gen(function*() {
      const account = yield* newAccount
      const stranger = yield* newAccount
      const webhooks = yield* Webhooks
      const created = yield* webhooks.create(account, body("https://a.example.com/"))
      const id = created.webhook.id
      for (const [who, which] of [[stranger, id], [account, "wh_nope"], [account, "key_123"]] as const) {
        expect((yield* Effect.flip(webhooks.get(who, which)))._tag).toBe("WebhookNotFound")
        expect((yield* Effect.flip(webhooks.update(who, which, { active: false })))._tag).toBe("WebhookNotFound")
        expect((yield* Effect.flip(webhooks.remove(who, which)))._tag).toBe("WebhookNotFound")
        expect((yield* Effect.flip(webhooks.listDeliveryAttempts(who, which)))._tag).toBe("WebhookNotFound")
      }
      yield* webhooks.remove(account, id)
      expect((yield* Effect.flip(webhooks.get(account, id)))._tag).toBe("WebhookNotFound")
      expect((yield* Effect.flip(webhooks.remove(account, id)))._tag).toBe("WebhookNotFound")
      expect((yield* webhooks.list(account)).total).toBe(0)
    }).pipe(Effect.provide(TestLayer)))
})

describe("address classification", () => {
  it("refuses every non-public range and IPv6 forms that embed one", () => {
    const cases: ReadonlyArray<readonly [string, string]> = [
      ["127.0.0.1", "loopback"],
      ["127.255.255.254", "loopback"],
      ["10.0.0.5", "private"],
      ["172.16.0.1", "private"],
      ["192.168.1.1", "private"],
      ["169.254.169.254", "metadata"],
      ["169.254.1.1", "link_local"],
      ["100.64.0.1", "carrier_grade_nat"],
      ["0.0.0.0", "unspecified"],
      ["255.255.255.255", "broadcast"],
      ["224.0.0.1", "multicast"],
      ["192.0.2.10", "reserved"],
      ["198.18.0.1", "reserved"],
      ["240.0.0.1", "reserved"],
      ["::1", "loopback"],
      ["[::1]", "loopback"],
      ["::", "unspecified"],
      ["fe80::1", "link_local"],
      ["fe80::1%eth0", "link_local"],
      ["fc00::1", "unique_local"],
      ["fd00:ec2::254", "unique_local"],
      ["ff02::1", "multicast"],
      ["::ffff:127.0.0.1", "embedded_ipv4"],
      ["::ffff:7f00:1", "embedded_ipv4"],
      ["::ffff:0:a00:5", "embedded_ipv4"],
      ["::10.0.0.5", "embedded_ipv4"],
      ["64:ff9b::a9fe:a9fe", "embedded_ipv4"],
      ["64:ff9b:1::808:808", "embedded_ipv4"],
      ["2002:7f00:1::1", "embedded_ipv4"],
      ["2001:0:4136:e378:8000:63bf:f5ff:fffe", "embedded_ipv4"],
      ["2001:db8::1", "reserved"],
      ["100::1", "reserved"],
      ["127.1", "invalid"],
      ["0x7f000001", "invalid"],
      ["example.com", "invalid"]
    ]
    for (const [ip, expected] of cases) expect(classifyAddress(ip), ip).toBe(expected)
  })

  it("accepts public addresses, also IPv6 forms that embed a public IPv4", () => {
    for (const ip of ["93.184.216.34", "8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "[2a00:1450:4001:80b::200e]", "::ffff:93.184.216.34", "64:ff9b::808:808", "2002:5db8:d822::1"]) {
      expect(classifyAddress(ip), ip).toBe("public")
    }
  })
})

describe("signing", () => {
  it("is HMAC-SHA256 of <t>.<body> keyed with the whole secret, as node:crypto computes it", () => {
    const secret = "whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LXNlY3I="
    const body = JSON.stringify({ id: "evt_1", data: { text: "ünïcödé" } })
    const expected = createHmac("sha256", secret).update(`1763800000.${body}`, "utf8").digest("hex")
    expect(computeSignature(secret, 1763800000, body)).toBe(expected)
    expect(signatureHeader(secret, 1763800000, body)).toBe(`t=1763800000,v1=${expected}`)
  })

  it("cuts response bodies to 4 KiB of UTF-8 without splitting a character", () => {
    expect(truncateUtf8("abc", 4096)).toBe("abc")
    const cut = truncateUtf8("é".repeat(3000), 4096)
    expect(cut).toBe("é".repeat(2048))
    expect(new TextEncoder().encode(truncateUtf8("a" + "€".repeat(2000), 4096)).length).toBe(4096)
    expect(truncateUtf8("aa€", 4)).toBe("aa")
  })
})
