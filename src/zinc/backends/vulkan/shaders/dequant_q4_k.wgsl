// Q4_K on the chunked rows of weights.py (words: A of the U = K / 64 chunks, 4 a chunk, then B, then
// the 144-byte blocks' 16-byte headers d|dmin, scales[12]). 32-element piece c: sub-block c % 8 of
// block c / 8, the low (c even) or high nibbles of chunk c / 2's A and B words.
fn wbyte(base: u32, off: u32) -> u32 {
    return (W[base + off / 4u] >> ((off % 4u) * 8u)) & 0xffu;
}

// #include "lib/kquant_scale.wgsl"

fn chunk(row: u32, c: u32) -> array<f32, 32> {
    var v: array<f32, 32>;
    let U = P.K / 64u;
    let row0 = row * P.row_words;
    let dmn = kscale_min(row0 + 8u * U + 4u * (c / 8u), c % 8u);
    let shift = (c % 2u) * 4u;
    for (var i = 0u; i < 8u; i++) {
        let q = W[row0 + 4u * ((i / 4u) * U + c / 2u) + i % 4u] >> shift;
        for (var j = 0u; j < 4u; j++) {
            v[4u * i + j] = dmn.x * f32((q >> (8u * j)) & 0xfu) - dmn.y;
        }
    }
    return v;
}
