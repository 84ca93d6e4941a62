// Q8_0 repacked to 9 words a block: word 0 = d (f16, low half), words 1..8 = the 32 int8 codes.
fn chunk(row: u32, c: u32) -> array<f32, 32> {
    var v: array<f32, 32>;
    let base = row * P.row_words + c * 9u;
    let d = unpack2x16float(W[base]).x;
    for (var i = 0u; i < 8u; i++) {
        let q = W[base + 1u + i];
        for (var j = 0u; j < 4u; j++) {
            v[4u * i + j] = d * f32((i32(q << (24u - 8u * j))) >> 24u);
        }
    }
    return v;
}
