// Q4_K unit of mvq.wgsl on the chunked rows of weights.py: unit u is the 64-element chunk u (sub-blocks
// 2j, 2j + 1 of block u / 4, j = u % 4): its qs words A[u] (elements 0..16 low nibbles, 32..48 high)
// and B[u] (16..32, 48..64), and the block's header.
// Activations come through the kernel's xq(i) (XQ or its rows staged in workgroup memory).
struct WU { a: vec4<u32>, b: vec4<u32>, s: vec4<f32> }  // s: d sc(2j), d sc(2j+1), dmin m(2j), dmin m(2j+1)
struct XU { p0: vec4<u32>, p1: vec4<u32>, p2: vec4<u32>, p3: vec4<u32>, m: vec4<f32> }  // m: d0, d1, d0 s0, d1 s1

// #include "lib/q4k_scales.wgsl"

fn idot(a: vec4<u32>, b: vec4<u32>) -> i32 {
    return dot4I8Packed(a.x, b.x) + dot4I8Packed(a.y, b.y) + dot4I8Packed(a.z, b.z) + dot4I8Packed(a.w, b.w);
}

fn mvq_x(u: u32, xb: u32) -> XU {
    let C = K / 64u;
    return XU(xq(xb + u), xq(xb + C + u), xq(xb + 2u * C + u), xq(xb + 3u * C + u),
              bitcast<vec4<f32>>(xq(xb + K / 16u + 2u * u + 1u)));
}

fn mvq_dot(w: WU, x: XU) -> f32 {
    let m = vec4<u32>(0x0f0f0f0fu);
    let four = vec4<u32>(4u);
    let lo = idot(w.a & m, x.p0) + idot(w.b & m, x.p1);
    let hi = idot((w.a >> four) & m, x.p2) + idot((w.b >> four) & m, x.p3);
    return w.s.x * x.m.x * f32(lo) + w.s.y * x.m.y * f32(hi) - (w.s.z * x.m.z + w.s.w * x.m.w);
}

// -- w
fn mvq_w(row: u32, u: u32) -> WU {
    let U = K / 64u;
    return WU(W[row + u], W[row + U + u], q4k_scales(W[row + 2u * U + u / 4u], u % 4u));
}
