import type { ColumnType } from "kysely"

/**
 * The tables as Kysely sees them. Timestamps are ISO 8601 text in both dialects (they sort as
 * text and round-trip exactly, milliseconds included); arrays and event bodies are JSON text;
 * booleans are 0/1 integers, so one row mapping serves SQLite and Postgres alike.
 */
export interface AccountsTable {
  id: string
  name: string
  created_at: string
}

export interface ApiKeysTable {
  id: string
  account_id: string
  name: string
  description: string | null
  prefix: string
  scopes: string
  hash: string
  created_at: string
  last_used_at: string | null
  revoked_at: string | null
}

export interface WebhooksTable {
  id: string
  account_id: string
  url: string
  events: string
  description: string | null
  active: number
  disabled_reason: string | null
  secret: string
  created_at: string
  updated_at: string
}

export interface EventsTable {
  id: string
  account_id: string
  type: string
  created_at: string
  data: string
}

export interface DeliveriesTable {
  id: string
  account_id: string
  event_id: string
  webhook_id: string
  status: string
  attempts: number
  next_attempt_at: string | null
  created_at: string
  updated_at: string
}

export interface RateCountersTable {
  bucket: string
  // pg returns BIGINT as text to keep precision; epoch milliseconds fit a double exactly.
  window_start: ColumnType<number | string, number, number>
  count: number
}

export interface Database {
  accounts: AccountsTable
  api_keys: ApiKeysTable
  webhooks: WebhooksTable
  events: EventsTable
  deliveries: DeliveriesTable
  rate_counters: RateCountersTable
}

export type Dialect = "sqlite" | "postgres"
