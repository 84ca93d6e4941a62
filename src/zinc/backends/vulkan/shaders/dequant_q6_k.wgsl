// Q6_K repacked to 53 words a super-block: the 210 bytes (ql[128], qh[64], scales[16] int8, d f16)
// followed by 2 zero bytes.
fn wbyte(base: u32, off: u32) -> u32 {
    return (W[base + off / 4u] >> ((off % 4u) * 8u)) & 0xffu;
}

fn chunk(row: u32, c: u32) -> array<f32, 32> {
    var v: array<f32, 32>;
    let base = row * P.row_words + (c / 8u) * 53u;
    let sub = c % 8u;
    let half = sub / 4u;
    let quarter = sub % 4u;  // which of the four 32-element groups of the half
    let d = unpack2x16float(W[base + 52u]).x;
    let ql = half * 64u + (quarter & 1u) * 32u;
    let ql_shift = (quarter >> 1u) * 4u;
    let qh = 128u + half * 32u;
    let qh_shift = quarter * 2u;
    let s0 = 192u + half * 8u + quarter * 2u;
    for (var l = 0u; l < 32u; l++) {
        let q = ((wbyte(base, ql + l) >> ql_shift) & 0xfu) | (((wbyte(base, qh + l) >> qh_shift) & 3u) << 4u);
        let s = f32((i32(wbyte(base, s0 + l / 16u)) << 24u) >> 24u);
        v[l] = d * s * f32(i32(q) - 32);
    }
    return v;
}
