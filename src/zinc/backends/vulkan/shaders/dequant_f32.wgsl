// F32 weights: the raw row-major floats; row r starts at word r * row_words (row_words = K).
fn chunk(row: u32, c: u32) -> array<f32, 32> {
    var v: array<f32, 32>;
    let base = row * P.row_words;
    for (var l = 0u; l < 32u; l++) {
        let k = c * 32u + l;
        if (k < P.K) { v[l] = bitcast<f32>(W[base + k]); }
    }
    return v;
}
