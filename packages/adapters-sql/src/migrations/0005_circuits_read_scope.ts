import { type Kysely, type Migration, sql } from "kysely"

// Reading circuits needed no scope before `circuits:read` existed, so every key had that
// power already: granting the scope keeps it and gives no key anything new. `circuits:write`
// is a new power and is not granted.
export const migration = (): Migration => ({
  up: async (db: Kysely<unknown>) => {
    const keys = await sql<{ id: string; scopes: string }>`select id, scopes from api_keys`.execute(db)
    for (const key of keys.rows) {
      const scopes = JSON.parse(key.scopes) as Array<string>
      if (scopes.includes("circuits:read")) continue
      await sql`update api_keys set scopes = ${JSON.stringify([...scopes, "circuits:read"])} where id = ${key.id}`.execute(db)
    }
  }
})
