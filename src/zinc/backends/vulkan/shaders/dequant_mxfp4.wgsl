// MXFP4 repacked to 5 words a block: word 0 = the E8M0 exponent (low byte), words 1..4 = qs[16]
// (E2M1 codes; low nibbles are elements 0..15). ggml's doubled code table with half the scale.
var<private> FP4: array<f32, 16> = array<f32, 16>(0.0, 1.0, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 0.0, -1.0, -2.0, -3.0, -4.0, -6.0, -8.0, -12.0);

fn chunk(row: u32, c: u32) -> array<f32, 32> {
    var v: array<f32, 32>;
    let base = row * P.row_words + c * 5u;
    let e = W[base] & 0xffu;
    var bits = (e - 1u) << 23u;  // 2^(e - 128)
    if (e == 1u) { bits = 0x00400000u; }
    if (e == 0u) { bits = 0x00200000u; }
    let d = bitcast<f32>(bits);
    for (var i = 0u; i < 4u; i++) {
        let q = W[base + 1u + i];
        for (var j = 0u; j < 4u; j++) {
            let b = (q >> (8u * j)) & 0xffu;
            v[4u * i + j] = FP4[b & 0xfu] * d;
            v[16u + 4u * i + j] = FP4[b >> 4u] * d;
        }
    }
    return v;
}
