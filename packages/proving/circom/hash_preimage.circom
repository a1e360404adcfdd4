pragma circom 2.0.0;

include "circomlib/circuits/poseidon.circom";

// Proves knowledge of a field element whose Poseidon hash is the public hash.
//
// Public signals (snarkjs order): [hash]
template HashPreimage() {
    signal input preimage;
    signal input hash;

    component h = Poseidon(1);
    h.inputs[0] <== preimage;
    h.out === hash;
}

component main {public [hash]} = HashPreimage();
