import { CircuitCatalog, type CircuitSpec } from "@mzk/core"

const R = "21888242871839275222246405745257275088548364400416034343698204186575808495617"

/**
 * The proof types of `@mzk/circuits` (its `src/catalog.json`) without the verification keys, so
 * tests validate against the real shapes without the GPL package. A circuits test asserts that
 * the two stay equal.
 */
export const FAKE_CIRCUIT_SPECS: ReadonlyArray<CircuitSpec> = [
  {
    type: "multiplier",
    circuit: "multiplier",
    version: "1.0.0",
    inputs: [
      { name: "a", visibility: "private", kind: "field" },
      { name: "b", visibility: "private", kind: "field" }
    ],
    public_signals: ["c"],
    description: "Knowledge of two factors a and b, both different from 1, of the public product c = a * b (mod r).",
    field_modulus: R,
    verification_key: null
  },
  {
    type: "range",
    circuit: "range",
    version: "1.0.0",
    inputs: [
      { name: "value", visibility: "private", kind: "uint64" },
      { name: "min", visibility: "public", kind: "uint64" },
      { name: "max", visibility: "public", kind: "uint64" }
    ],
    public_signals: ["min", "max"],
    description:
      "A private 64-bit unsigned value lies in the closed interval [min, max]; value, min and max are range-checked to 64 bits.",
    field_modulus: R,
    verification_key: null
  },
  {
    type: "hash_preimage",
    circuit: "hash_preimage",
    version: "1.0.0",
    inputs: [
      { name: "preimage", visibility: "private", kind: "field" },
      { name: "hash", visibility: "public", kind: "field" }
    ],
    public_signals: ["hash"],
    description: "Knowledge of a preimage with Poseidon(1)([preimage]) == hash (circomlib Poseidon, bn128).",
    field_modulus: R,
    verification_key: null
  },
  {
    type: "merkle_membership",
    circuit: "merkle_membership",
    version: "1.0.0",
    inputs: [
      { name: "secret", visibility: "private", kind: "field" },
      { name: "path_elements", visibility: "private", kind: "field", length: 20 },
      { name: "path_indices", visibility: "private", kind: "bit", length: 20 },
      { name: "root", visibility: "public", kind: "field" }
    ],
    public_signals: ["root"],
    description:
      "Poseidon(1)([secret]) is a leaf of a depth-20 binary Poseidon(2) Merkle tree with the public root. path_elements[i] is the sibling at level i (0 = next to the leaf); path_indices[i] = 0 if the current node is the left child (hash(node, sibling)), 1 if it is the right child (hash(sibling, node)).",
    field_modulus: R,
    verification_key: null
  }
]

export const FakeCircuitCatalog = CircuitCatalog.fromSpecs(FAKE_CIRCUIT_SPECS)
