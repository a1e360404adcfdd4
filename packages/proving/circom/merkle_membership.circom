pragma circom 2.0.0;

include "circomlib/circuits/poseidon.circom";

// Proves that leaf = Poseidon(secret) is a leaf of a binary Poseidon Merkle
// tree of the given depth with the public root.
//
// path_elements[i] is the sibling at level i (i = 0 next to the leaf).
// path_indices[i] is 0 when the current node is the LEFT child at level i
// (node = Poseidon(current, sibling)) and 1 when it is the RIGHT child
// (node = Poseidon(sibling, current)).
//
// Public signals (snarkjs order): [root]
template MerkleMembership(depth) {
    signal input secret;
    signal input path_elements[depth];
    signal input path_indices[depth];
    signal input root;

    component leaf = Poseidon(1);
    leaf.inputs[0] <== secret;

    component hashers[depth];
    signal nodes[depth + 1];
    signal swap[depth];
    nodes[0] <== leaf.out;

    for (var i = 0; i < depth; i++) {
        // each index is a bit
        path_indices[i] * (1 - path_indices[i]) === 0;

        // swap = idx * (sibling - current); left/right are linear in it
        swap[i] <== path_indices[i] * (path_elements[i] - nodes[i]);

        hashers[i] = Poseidon(2);
        hashers[i].inputs[0] <== nodes[i] + swap[i];
        hashers[i].inputs[1] <== path_elements[i] - swap[i];
        nodes[i + 1] <== hashers[i].out;
    }

    root === nodes[depth];
}

component main {public [root]} = MerkleMembership(20);
