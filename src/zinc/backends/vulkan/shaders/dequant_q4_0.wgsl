// Q4_0 repacked to 5 words a block: word 0 = d (f16, low half), words 1..4 = qs[16]
// (low nibbles are elements 0..15, high nibbles 16..31).
fn chunk(row: u32, c: u32) -> array<f32, 32> {
    var v: array<f32, 32>;
    let base = row * P.row_words + c * 5u;
    let d = unpack2x16float(W[base]).x;
    for (var i = 0u; i < 4u; i++) {
        let q = W[base + 1u + i];
        for (var j = 0u; j < 4u; j++) {
            let b = (q >> (8u * j)) & 0xffu;
            v[4u * i + j] = f32(i32(b & 0xfu) - 8) * d;
            v[16u + 4u * i + j] = f32(i32(b >> 4u) - 8) * d;
        }
    }
    return v;
}
