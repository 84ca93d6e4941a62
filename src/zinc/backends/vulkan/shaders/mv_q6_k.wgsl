// Q6_K matvec unit (matvec.wgsl) on the split row layout of weights.py: ql of all blocks (8 vec4 a
// block), qh (4 vec4), scales (1 vec4), then the f16 d's. Unit u = 4 * block + 2 * half + lh covers
// elements 128 half + 32 q + 16 lh + i (q = 0..3, i < 16): low 4 bits from ql byte
// 64 half + 32 (q & 1) + 16 lh + i (nibble q >> 1), high 2 bits from qh byte 32 half + 16 lh + i
// (bits 2q), scale int8 8 half + 2q + lh. No function-local arrays: everything stays in registers.
fn mv_b4(w: u32) -> vec4<f32> {
    return vec4<f32>(vec4<u32>(w, w >> 8u, w >> 16u, w >> 24u) & vec4<u32>(0xffu)) - 32.0;
}

fn mv_i8(w: u32, i: u32) -> f32 {
    return f32(i32(w << (24u - 8u * i)) >> 24u);
}

// -- dot
// per quarter q: sum of (code - 32) * x over the 4 values of word k (ql words a, c; qh word h)
fn mv_word(a: u32, c: u32, h: u32, v: u32) -> vec4<f32> {
    let q0 = (a & 0x0f0f0f0fu) | ((h & 0x03030303u) << 4u);
    let q1 = (c & 0x0f0f0f0fu) | (((h >> 2u) & 0x03030303u) << 4u);
    let q2 = ((a >> 4u) & 0x0f0f0f0fu) | (((h >> 4u) & 0x03030303u) << 4u);
    let q3 = ((c >> 4u) & 0x0f0f0f0fu) | (((h >> 6u) & 0x03030303u) << 4u);
    return vec4<f32>(dot(mv_b4(q0), X[v]), dot(mv_b4(q1), X[v + 8u]), dot(mv_b4(q2), X[v + 16u]),
                     dot(mv_b4(q3), X[v + 24u]));
}

fn mv_dot(row: u32, u: u32) -> f32 {
    let nb = P.K / 256u;
    let b = u / 4u;
    let hf = (u / 2u) % 2u;
    let lh = u % 2u;
    let a = W[row + 8u * b + 4u * hf + lh];
    let c = W[row + 8u * b + 4u * hf + 2u + lh];
    let h = W[row + 8u * nb + 4u * b + 2u * hf + lh];
    let sc = W[row + 12u * nb + b];
    let dv = W[row + 13u * nb + b / 8u];
    let di = (b / 2u) % 4u;
    let dw = select(select(dv.x, dv.y, di == 1u), select(dv.z, dv.w, di == 3u), di >= 2u);
    let dd = unpack2x16float(dw);
    let d = select(dd.x, dd.y, (b % 2u) == 1u);
    let v = b * 64u + hf * 32u + lh * 4u;
    let dq = mv_word(a.x, c.x, h.x, v) + mv_word(a.y, c.y, h.y, v + 1u) + mv_word(a.z, c.z, h.z, v + 2u)
             + mv_word(a.w, c.w, h.w, v + 3u);
    let sw = select(sc.x, sc.z, hf == 1u);   // scale bytes 8 half + 0..3: q = 0, 1
    let sw2 = select(sc.y, sc.w, hf == 1u);  // scale bytes 8 half + 4..7: q = 2, 3
    let s = vec4<f32>(mv_i8(sw, lh), mv_i8(sw, 2u + lh), mv_i8(sw2, lh), mv_i8(sw2, 2u + lh));
    return d * dot(s, dq);
}
