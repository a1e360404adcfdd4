import { storageConformance } from "@mzk/storage-conformance"
import { describePostgres, FreshPostgresStore } from "./freshDatabase.js"

describePostgres("postgres", () => {
  storageConformance("postgres (fresh database on 127.0.0.1:5432)", FreshPostgresStore)
})
