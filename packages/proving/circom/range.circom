pragma circom 2.0.0;

include "circomlib/circuits/bitify.circom";
include "circomlib/circuits/comparators.circom";

// Proves that a private 64-bit value lies in the closed interval [min, max].
// value, min and max are all range-checked to 64 bits so that field
// wrap-around cannot satisfy the comparators.
//
// Public signals (snarkjs order): [min, max]
template Range(n) {
    signal input value;
    signal input min;
    signal input max;

    component valueBits = Num2Bits(n);
    valueBits.in <== value;
    component minBits = Num2Bits(n);
    minBits.in <== min;
    component maxBits = Num2Bits(n);
    maxBits.in <== max;

    // min <= value
    component geMin = GreaterEqThan(n);
    geMin.in[0] <== value;
    geMin.in[1] <== min;
    geMin.out === 1;

    // value <= max
    component leMax = LessEqThan(n);
    leMax.in[0] <== value;
    leMax.in[1] <== max;
    leMax.out === 1;
}

component main {public [min, max]} = Range(64);
