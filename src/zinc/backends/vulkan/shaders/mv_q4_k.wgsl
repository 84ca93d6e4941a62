// Q4_K unit of matvec.wgsl (f32 activations) on the chunked rows of weights.py: unit u is the
// 64-element chunk u, its qs words A[u] (elements 0..16 low nibbles, 32..48 high), B[u] (16..32,
// 48..64) and the block's header; x of the chunk is X[16u .. 16u + 16]. No function-local arrays.
fn mv_nib(w: u32, s: u32) -> vec4<f32> {
    return vec4<f32>((vec4<u32>(w, w >> 8u, w >> 16u, w >> 24u) >> vec4<u32>(s)) & vec4<u32>(15u));
}

// (low-nibble codes . x, high-nibble codes . x, sum of that x low, high) for one word at x vec4 index v
fn mv_word(w: u32, v: u32) -> vec4<f32> {
    let xl = X[v];
    let xh = X[v + 8u];
    let one = vec4<f32>(1.0);
    return vec4<f32>(dot(mv_nib(w, 0u), xl), dot(mv_nib(w, 4u), xh), dot(xl, one), dot(xh, one));
}

// #include "lib/q4k_scales.wgsl"

// -- dot
fn mv_dot(row: u32, u: u32) -> f32 {
    let U = P.K / 64u;
    let a = W[row + u];
    let b = W[row + U + u];
    let v = 16u * u;
    let s = mv_word(a.x, v) + mv_word(a.y, v + 1u) + mv_word(a.z, v + 2u) + mv_word(a.w, v + 3u)
            + mv_word(b.x, v + 4u) + mv_word(b.y, v + 5u) + mv_word(b.z, v + 6u) + mv_word(b.w, v + 7u);
    let sc = q4k_scales(W[row + 2u * U + u / 4u], u % 4u);
    return sc.x * s.x + sc.y * s.y - (sc.z * s.z + sc.w * s.w);
}
