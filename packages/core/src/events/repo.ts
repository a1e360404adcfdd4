import { Context, type Effect, type Option } from "effect"
import type { StorageError } from "../kernel/errors.js"
import type { AccountId, EventId } from "../kernel/ids.js"
import type { Page, PageOf } from "../kernel/paging.js"
import type { EventRecord } from "./event.js"

export class EventsRepo extends Context.Tag("@mzk/core/EventsRepo")<EventsRepo, {
  readonly insert: (event: EventRecord) => Effect.Effect<void, StorageError>
  readonly get: (id: EventId) => Effect.Effect<Option.Option<EventRecord>, StorageError>
  /** The account's events, in id order. */
  readonly list: (accountId: AccountId, page: Page) => Effect.Effect<PageOf<EventRecord>, StorageError>
}>() {}
