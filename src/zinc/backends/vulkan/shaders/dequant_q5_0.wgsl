// Q5_0 repacked to 6 words a block: word 0 = d (f16, low half), word 1 = qh (the 5th bits),
// words 2..5 = qs[16] (low nibbles are elements 0..15, high nibbles 16..31).
fn chunk(row: u32, c: u32) -> array<f32, 32> {
    var v: array<f32, 32>;
    let base = row * P.row_words + c * 6u;
    let d = unpack2x16float(W[base]).x;
    let qh = W[base + 1u];
    for (var i = 0u; i < 4u; i++) {
        let q = W[base + 2u + i];
        for (var j = 0u; j < 4u; j++) {
            let e = 4u * i + j;
            let b = (q >> (8u * j)) & 0xffu;
            let lo = (b & 0xfu) | (((qh >> e) & 1u) << 4u);
            let hi = (b >> 4u) | (((qh >> (e + 16u)) & 1u) << 4u);
            v[e] = f32(i32(lo) - 16) * d;
            v[16u + e] = f32(i32(hi) - 16) * d;
        }
    }
    return v;
}
