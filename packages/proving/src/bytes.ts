import { Option } from "effect"

// A module of its own, exported as @mzk/proving/bytes: the CLI reads sizes in its settings
// without loading the prover (docs/performance.md, "CLI start-up").

const UNITS: Readonly<Record<string, number>> = { "": 1, b: 1, kib: 2 ** 10, mib: 2 ** 20, gib: 2 ** 30, kb: 1e3, mb: 1e6, gb: 1e9 }

/** `1073741824`, `512MiB`, `2 GiB`, `500MB` → bytes. */
export const parseBytes = (text: string): Option.Option<number> => {
  const match = /^\s*(\d+)\s*([a-z]*)\s*$/i.exec(text)
  const unit = match === null ? undefined : UNITS[match[2]!.toLowerCase()]
  return unit === undefined ? Option.none() : Option.some(Number(match![1]) * unit)
}
