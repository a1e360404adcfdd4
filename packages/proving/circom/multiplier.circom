pragma circom 2.0.0;

// Proves knowledge of two factors a, b (both different from 1) of the
// public output c = a * b.
//
// Public signals (snarkjs order): [c]

// Enforces in != 1 with the IsZero-style inverse trick:
// (in - 1) * inv === 1 has a solution only when in - 1 is invertible.
template NotOne() {
    signal input in;
    signal inv;

    inv <-- (in - 1) != 0 ? 1 / (in - 1) : 0;
    (in - 1) * inv === 1;
}

template Multiplier() {
    signal input a;
    signal input b;
    signal output c;

    component aNotOne = NotOne();
    aNotOne.in <== a;
    component bNotOne = NotOne();
    bNotOne.in <== b;

    c <== a * b;
}

component main = Multiplier();
