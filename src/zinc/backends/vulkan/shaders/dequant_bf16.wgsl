// BF16 weights: two values per u32 word (the upper halves of f32s), rows padded to an even length.
fn chunk(row: u32, c: u32) -> array<f32, 32> {
    var v: array<f32, 32>;
    let base = row * P.row_words + c * 16u;
    for (var l = 0u; l < 16u; l++) {
        let k = c * 32u + 2u * l;
        if (k < P.K) {
            let w = W[base + l];
            v[2u * l] = bitcast<f32>(w << 16u);
            v[2u * l + 1u] = select(0.0, bitcast<f32>(w & 0xffff0000u), k + 1u < P.K);
        }
    }
    return v;
}
