// Q4_K matvec unit (matvec.wgsl): a super-block is 9 vec4 (d|dmin, scales[12], then qs[128]); unit
// u = 8 * block + 2 * j + h covers qs bytes 32j + 16h .. +16 of the block: their low nibbles are
// elements 64j + 16h + i of the block (sub-block 2j), the high nibbles elements 64j + 32 + 16h + i
// (sub-block 2j + 1). No function-local arrays: everything stays in registers.
fn mv_byte(w: u32, i: u32) -> u32 {
    return (w >> (8u * i)) & 0xffu;
}

fn mv_nib(w: u32, s: u32) -> vec4<f32> {
    return vec4<f32>((vec4<u32>(w, w >> 8u, w >> 16u, w >> 24u) >> vec4<u32>(s)) & vec4<u32>(15u));
}

// -- dot
// (sum of low-nibble codes * x, high-nibble codes * x, x low, x high) for one word at x vec4 index v
fn mv_word(w: u32, v: u32) -> vec4<f32> {
    let xl = X[v];
    let xh = X[v + 8u];
    let one = vec4<f32>(1.0);
    return vec4<f32>(dot(mv_nib(w, 0u), xl), dot(mv_nib(w, 4u), xh), dot(xl, one), dot(xh, one));
}

fn mv_dot(row: u32, u: u32) -> f32 {
    let blk = row + (u / 8u) * 9u;
    let j = (u % 8u) / 2u;
    let hd = W[blk];
    let q = W[blk + 1u + (u % 8u)];
    let v = (u / 8u) * 64u + j * 16u + (u % 2u) * 4u;
    let s = mv_word(q.x, v) + mv_word(q.y, v + 1u) + mv_word(q.z, v + 2u) + mv_word(q.w, v + 3u);
    // six-bit scales and mins of sub-blocks 2j and 2j + 1 (i = 2j for j < 2, else 2j - 4)
    let i = (2u * j) % 4u;
    let hi = j >= 2u;
    let sc0 = select(mv_byte(hd.y, i) & 63u, (mv_byte(hd.w, i) & 15u) | ((mv_byte(hd.y, i) >> 6u) << 4u), hi);
    let sc1 = select(mv_byte(hd.y, i + 1u) & 63u,
                     (mv_byte(hd.w, i + 1u) & 15u) | ((mv_byte(hd.y, i + 1u) >> 6u) << 4u), hi);
    let m0 = select(mv_byte(hd.z, i) & 63u, (mv_byte(hd.w, i) >> 4u) | ((mv_byte(hd.z, i) >> 6u) << 4u), hi);
    let m1 = select(mv_byte(hd.z, i + 1u) & 63u,
                    (mv_byte(hd.w, i + 1u) >> 4u) | ((mv_byte(hd.z, i + 1u) >> 6u) << 4u), hi);
    let dm = unpack2x16float(hd.x);
    return dm.x * (f32(sc0) * s.x + f32(sc1) * s.y) - dm.y * (f32(m0) * s.z + f32(m1) * s.w);
}
