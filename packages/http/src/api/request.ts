import { STRICT_PARSE } from "@mzk/core"
import type { Schema } from "effect"

/** Request bodies are decoded as the core decodes untrusted input (`STRICT_PARSE`). */
export const strictBody = <S extends Schema.Schema.Any>(schema: S) => schema.annotations({ parseOptions: STRICT_PARSE }) as S
