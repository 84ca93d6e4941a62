// Q6_K unit of matvec.wgsl (f32 activations) on the chunked rows of weights.py: unit u is the
// 64-element chunk u (A, B, H words, the four int8 group scales, the block's d); x of its 16-element
// group p is X[16u + 4p .. + 4]. No function-local arrays: everything stays in registers.
fn mv_b4(w: u32) -> vec4<f32> {
    return vec4<f32>(vec4<u32>(w, w >> 8u, w >> 16u, w >> 24u) & vec4<u32>(0xffu)) - 32.0;
}

// per group p: sum of (code - 32) * x over the 4 values of word k (A word a, B word b, H word h)
fn mv_word(a: u32, b: u32, h: u32, v: u32) -> vec4<f32> {
    let q0 = (a & 0x0f0f0f0fu) | ((h & 0x03030303u) << 4u);
    let q1 = (b & 0x0f0f0f0fu) | (((h >> 2u) & 0x03030303u) << 4u);
    let q2 = ((a >> 4u) & 0x0f0f0f0fu) | (((h >> 4u) & 0x03030303u) << 4u);
    let q3 = ((b >> 4u) & 0x0f0f0f0fu) | (((h >> 6u) & 0x03030303u) << 4u);
    return vec4<f32>(dot(mv_b4(q0), X[v]), dot(mv_b4(q1), X[v + 4u]), dot(mv_b4(q2), X[v + 8u]),
                     dot(mv_b4(q3), X[v + 12u]));
}

// -- dot
fn mv_dot(row: u32, u: u32) -> f32 {
    let U = P.K / 64u;
    let a = W[row + u];
    let b = W[row + U + u];
    let h = W[row + 2u * U + u];
    let sc = W[row + 3u * U + u / 4u][u % 4u];
    let d = unpack2x16float(W[row + 13u * U / 4u + u / 32u][(u / 8u) % 4u])[(u / 4u) % 2u];
    let v = 16u * u;
    let dq = mv_word(a.x, b.x, h.x, v) + mv_word(a.y, b.y, h.y, v + 1u) + mv_word(a.z, b.z, h.z, v + 2u)
             + mv_word(a.w, b.w, h.w, v + 3u);
    return d * dot(vec4<f32>(unpack4xI8(sc)), dq);
}
