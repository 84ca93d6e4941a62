// Q4_K: the raw 144-byte super-block is already 36 words: d|dmin (f16 x2), scales[12], qs[128].
fn wbyte(base: u32, off: u32) -> u32 {
    return (W[base + off / 4u] >> ((off % 4u) * 8u)) & 0xffu;
}

// #include "lib/kquant_scale.wgsl"

fn chunk(row: u32, c: u32) -> array<f32, 32> {
    var v: array<f32, 32>;
    let base = row * P.row_words + (c / 8u) * 36u;
    let sub = c % 8u;  // 32-element sub-block: scale index, and the low/high nibbles of qs[32 * (sub / 2)]
    let dmn = kscale_min(base, sub);
    let d = dmn.x;
    let mn = dmn.y;
    let shift = (sub % 2u) * 4u;
    let qw = base + 4u + (sub / 2u) * 8u;  // qs start at byte 16 = word 4
    for (var i = 0u; i < 8u; i++) {
        let q = W[qw + i] >> shift;
        for (var j = 0u; j < 4u; j++) {
            v[4u * i + j] = d * f32((q >> (8u * j)) & 0xfu) - mn;
        }
    }
    return v;
}
