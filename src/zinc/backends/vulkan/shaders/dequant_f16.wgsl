// F16 weights: two halves per u32 word, each row padded to an even length (row_words = ceil(K / 2)).
fn chunk(row: u32, c: u32) -> array<f32, 32> {
    var v: array<f32, 32>;
    let base = row * P.row_words + c * 16u;
    for (var l = 0u; l < 16u; l++) {
        let k = c * 32u + 2u * l;
        if (k < P.K) {
            let h = unpack2x16float(W[base + l]);
            v[2u * l] = h.x;
            v[2u * l + 1u] = select(0.0, h.y, k + 1u < P.K);
        }
    }
    return v;
}
