// Q6_K on the split row layout of weights.py (for 16-byte loads in the matvec): per row, ql[128] of
// every super-block (32 words each), then qh[64] of every block (16 words), scales[16] int8 (4 words),
// then the f16 d's (two a word), the row padded to a multiple of 16 bytes.
fn wbyte(base: u32, off: u32) -> u32 {
    return (W[base + off / 4u] >> ((off % 4u) * 8u)) & 0xffu;
}

fn chunk(row: u32, c: u32) -> array<f32, 32> {
    var v: array<f32, 32>;
    let nb = P.K / 256u;
    let b = c / 8u;
    let row0 = row * P.row_words;
    let sub = c % 8u;
    let half = sub / 4u;
    let quarter = sub % 4u;  // which of the four 32-element groups of the half
    let dw = unpack2x16float(W[row0 + 52u * nb + b / 2u]);
    let d = select(dw.x, dw.y, (b % 2u) == 1u);
    let ql = row0 + 32u * b;
    let qh = row0 + 32u * nb + 16u * b;
    let sc = row0 + 48u * nb + 4u * b;
    let ql_off = half * 64u + (quarter & 1u) * 32u;
    let ql_shift = (quarter >> 1u) * 4u;
    let qh_shift = quarter * 2u;
    let s0 = half * 8u + quarter * 2u;
    for (var l = 0u; l < 32u; l++) {
        let q = ((wbyte(ql, ql_off + l) >> ql_shift) & 0xfu) | (((wbyte(qh, half * 32u + l) >> qh_shift) & 3u) << 4u);
        let s = f32((i32(wbyte(sc, s0 + l / 16u)) << 24u) >> 24u);
        v[l] = d * s * f32(i32(q) - 32);
    }
    return v;
}
