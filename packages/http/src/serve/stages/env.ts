import type { Scope } from "effect"

// Its own module, not endpoint.ts: every endpoint stage names it, and endpoint.ts imports every
// stage to assemble them, so a type kept there made each stage and endpoint.ts import each other.

/** An endpoint's stages may need the request's scope: only an upload's form reads into it. */
export type EndpointEnv = Scope.Scope
