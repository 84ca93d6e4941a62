// Q6_K unit of mvq.wgsl on the chunked rows of weights.py: unit u is the 64-element chunk u: low 4 bits
// A[u] (elements 0..16 low nibbles, 32..48 high), B[u] (16..32, 48..64), high 2 bits H[u] (bits 2p:
// elements 16p ..), the int8 scales of its four 16-element groups (one word) and the block's f16 d.
// Activations come through the kernel's xq(i) (XQ or its rows staged in workgroup memory).
struct WU { a: vec4<u32>, b: vec4<u32>, h: vec4<u32>, s: vec4<f32> }  // s: d * scale of group p
struct XU { p0: vec4<u32>, p1: vec4<u32>, p2: vec4<u32>, p3: vec4<u32>, s: vec4<f32>, d: vec4<f32> }

fn idot(a: vec4<u32>, b: vec4<u32>) -> i32 {
    return dot4I8Packed(a.x, b.x) + dot4I8Packed(a.y, b.y) + dot4I8Packed(a.z, b.z) + dot4I8Packed(a.w, b.w);
}

fn mvq_x(u: u32, xb: u32) -> XU {
    let C = K / 64u;
    let m = xb + K / 16u + 2u * u;
    let d = bitcast<vec4<f32>>(xq(m + 1u));
    return XU(xq(xb + u), xq(xb + C + u), xq(xb + 2u * C + u), xq(xb + 3u * C + u), bitcast<vec4<f32>>(xq(m)),
              vec4<f32>(d.x, d.x, d.y, d.y));
}

// sum over groups p of d scale(p) (sum of (code - 32) * x): codes 0..63 as int8 dot the activations
fn mvq_dot(w: WU, x: XU) -> f32 {
    let m4 = vec4<u32>(0x0f0f0f0fu);
    let m2 = vec4<u32>(0x03030303u);
    let four = vec4<u32>(4u);
    let q0 = (w.a & m4) | ((w.h & m2) << four);
    let q1 = (w.b & m4) | (((w.h >> vec4<u32>(2u)) & m2) << four);
    let q2 = ((w.a >> four) & m4) | (((w.h >> four) & m2) << four);
    let q3 = ((w.b >> four) & m4) | (((w.h >> vec4<u32>(6u)) & m2) << four);
    let iv = vec4<f32>(f32(idot(q0, x.p0)), f32(idot(q1, x.p1)), f32(idot(q2, x.p2)), f32(idot(q3, x.p3)));
    return dot(w.s, iv * x.d - 32.0 * x.s);
}

fn i8x4(w: u32) -> vec4<f32> {
    return vec4<f32>(unpack4xI8(w));
}

// -- w
fn mvq_w(row: u32, u: u32) -> WU {
    let U = K / 64u;
    let sc = W[row + 3u * U + u / 4u][u % 4u];
    let dv = W[row + 13u * U / 4u + u / 32u];
    let dw = dv[(u / 8u) % 4u];
    let d = unpack2x16float(dw)[(u / 4u) % 2u];
    return WU(W[row + u], W[row + U + u], W[row + 2u * U + u], d * i8x4(sc));
}
