import { storageConformance } from "@mzk/testkit/conformance"
import { MemoryStore } from "@mzk/testkit"

storageConformance("memory", MemoryStore)
