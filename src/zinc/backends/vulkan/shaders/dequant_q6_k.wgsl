// Q6_K on the chunked rows of weights.py (words: A, B, H of the U = K / 64 chunks, 4 a chunk each, then
// one word of int8 scales per chunk, then the f16 d's two a word). 32-element piece c: half c % 2 of
// chunk c / 2, i.e. its 16-element groups p = 2 (c % 2) and p + 1.
fn chunk(row: u32, c: u32) -> array<f32, 32> {
    var v: array<f32, 32>;
    let U = P.K / 64u;
    let u = c / 2u;
    let row0 = row * P.row_words;
    let b = u / 4u;
    let dw = unpack2x16float(W[row0 + 13u * U + b / 2u]);
    let d = select(dw.x, dw.y, (b % 2u) == 1u);
    let sc = W[row0 + 12u * U + u];
    for (var g = 0u; g < 2u; g++) {
        let p = 2u * (c % 2u) + g;  // A for p = 0, 2, B for 1, 3; low nibbles for p < 2
        let s = d * f32((i32(sc << (24u - 8u * p))) >> 24u);
        for (var k = 0u; k < 4u; k++) {
            let lo = (W[row0 + 4u * ((p % 2u) * U + u) + k] >> (4u * (p / 2u))) & 0x0f0f0f0fu;
            let hi = (W[row0 + 4u * (2u * U + u) + k] >> (2u * p)) & 0x03030303u;
            let q = lo | (hi << 4u);
            for (var j = 0u; j < 4u; j++) {
                v[16u * g + 4u * k + j] = s * f32(i32((q >> (8u * j)) & 0xffu) - 32);
            }
        }
    }
    return v;
}
