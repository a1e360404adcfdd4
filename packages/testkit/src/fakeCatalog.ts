import { BN128_FIELD_MODULUS, BuiltinCircuits, type Circuit, type CircuitInput, type Digest, type Timestamp } from "@mzk/core"

const CREATED_AT = "2026-11-22T03:58:01.000Z" as Timestamp

/** A digest that is plainly not of any real file: the fake prover never reads artifacts. */
const fakeDigest = (n: number) => n.toString(16).padStart(64, "f") as Digest

const scalar = (name: string, visibility: CircuitInput["visibility"], kind: CircuitInput["kind"]): CircuitInput => ({
  name,
  visibility,
  kind,
  dimensions: []
})

const builtin = (
  n: number,
  fields: Pick<Circuit, "name" | "description" | "constraints" | "inputs" | "public_signals">
): Circuit => ({
  ...fields,
  id: null,
  version: 1,
  owner: "builtin",
  status: "ready",
  error: null,
  verification_key: null,
  proving_system: "groth16",
  proving_systems: ["groth16"],
  development_only: true,
  field_modulus: BN128_FIELD_MODULUS,
  artifacts: { wasm: fakeDigest(2 * n), zkey: fakeDigest(2 * n + 1), r1cs: null, sym: null },
  created_at: CREATED_AT,
  updated_at: CREATED_AT,
  metadata: {}
})

/**
 * The built-in circuits of `@mzk/proving` (its `src/catalog.json` and build manifest) without
 * verification keys and with fake artifact digests, so tests validate against the real shapes
 * without the GPL package.
 */
export const FAKE_BUILTIN_CIRCUITS: ReadonlyArray<Circuit> = [
  builtin(1, {
    name: "multiplier",
    description: "Knowledge of two factors a and b, both different from 1, of the public product c = a * b (mod r).",
    constraints: 3,
    inputs: [scalar("a", "private", "field"), scalar("b", "private", "field")],
    public_signals: ["c"]
  }),
  builtin(2, {
    name: "range",
    description:
      "A private 64-bit unsigned value lies in the closed interval [min, max]; value, min and max are range-checked to 64 bits.",
    constraints: 320,
    inputs: [scalar("value", "private", "uint64"), scalar("min", "public", "uint64"), scalar("max", "public", "uint64")],
    public_signals: ["min", "max"]
  }),
  builtin(3, {
    name: "hash_preimage",
    description: "Knowledge of a preimage with Poseidon(1)([preimage]) == hash (circomlib Poseidon, bn128).",
    constraints: 213,
    inputs: [scalar("preimage", "private", "field"), scalar("hash", "public", "field")],
    public_signals: ["hash"]
  }),
  builtin(4, {
    name: "merkle_membership",
    description:
      "Poseidon(1)([secret]) is a leaf of a depth-20 binary Poseidon(2) Merkle tree with the public root. path_elements[i] is the sibling at level i (0 = next to the leaf); path_indices[i] = 0 if the current node is the left child (hash(node, sibling)), 1 if it is the right child (hash(sibling, node)).",
    constraints: 5053,
    inputs: [
      scalar("secret", "private", "field"),
      { name: "path_elements", visibility: "private", kind: "field", dimensions: [20] },
      { name: "path_indices", visibility: "private", kind: "bit", dimensions: [20] },
      scalar("root", "public", "field")
    ],
    public_signals: ["root"]
  })
]

export const FakeBuiltinCircuits = BuiltinCircuits.fromCircuits(FAKE_BUILTIN_CIRCUITS)
