// Q6_K unit of mvq.wgsl on the split row layout of weights.py (ql of all blocks: 8 vec4 a block, qh:
// 4 vec4, scales: 1 vec4, then the f16 d's). Unit u = 4 * block + 2 * half + lh covers elements
// 128 half + 32 q + 16 lh + i (quarter q = 0..3, i < 16): low 4 bits from ql byte
// 64 half + 32 (q & 1) + 16 lh + i (nibble q >> 1), high 2 bits from qh byte 32 half + 16 lh + i
// (bits 2q), scale int8 8 half + 2q + lh.
struct WU { a: vec4<u32>, c: vec4<u32>, h: vec4<u32>, s: vec4<f32> }  // s: d * scale of quarter q
struct XU { q0: vec4<u32>, q1: vec4<u32>, q2: vec4<u32>, q3: vec4<u32>, dx: vec4<f32>, sx: vec4<f32> }

fn idot(a: vec4<u32>, b: vec4<u32>) -> i32 {
    return dot4I8Packed(a.x, b.x) + dot4I8Packed(a.y, b.y) + dot4I8Packed(a.z, b.z) + dot4I8Packed(a.w, b.w);
}

fn i8_at(w: u32, i: u32) -> f32 {
    return f32(i32(w << (24u - 8u * i)) >> 24u);
}

// per quarter q: the 16 codes, d of its 32-block and d * (sum of the 16 codes)
fn mvq_x(u: u32, xb: u32) -> XU {
    let b = u / 4u;
    let hf = (u / 2u) % 2u;
    let lh = u % 2u;
    let q = xb + 16u * b + 8u * hf + lh;
    let dx = bitcast<vec4<f32>>(XQ[xb + K / 16u + 2u * b + hf]);
    let s0 = bitcast<vec4<f32>>(XQ[xb + K / 16u + K / 128u + 4u * b + 2u * hf]);
    let s1 = bitcast<vec4<f32>>(XQ[xb + K / 16u + K / 128u + 4u * b + 2u * hf + 1u]);
    let sx = select(vec4<f32>(s0.x, s0.z, s1.x, s1.z), vec4<f32>(s0.y, s0.w, s1.y, s1.w), lh == 1u);
    return XU(XQ[q], XQ[q + 2u], XQ[q + 4u], XQ[q + 6u], dx, sx);
}

// sum over quarters of d scale(q) (sum of (code - 32) * x): codes 0..63 as int8 dot the activations
fn mvq_dot(w: WU, x: XU) -> f32 {
    let m4 = vec4<u32>(0x0f0f0f0fu);
    let m2 = vec4<u32>(0x03030303u);
    let four = vec4<u32>(4u);
    let q0 = (w.a & m4) | ((w.h & m2) << four);
    let q1 = (w.c & m4) | (((w.h >> vec4<u32>(2u)) & m2) << four);
    let q2 = ((w.a >> four) & m4) | (((w.h >> four) & m2) << four);
    let q3 = ((w.c >> four) & m4) | (((w.h >> vec4<u32>(6u)) & m2) << four);
    let iv = vec4<f32>(f32(idot(q0, x.q0)), f32(idot(q1, x.q1)), f32(idot(q2, x.q2)), f32(idot(q3, x.q3)));
    return dot(w.s, iv * x.dx - 32.0 * x.sx);
}

// -- w
fn mvq_w(row: u32, u: u32) -> WU {
    let nb = K / 256u;
    let b = u / 4u;
    let hf = (u / 2u) % 2u;
    let lh = u % 2u;
    let sc = W[row + 12u * nb + b];
    let dv = W[row + 13u * nb + b / 8u];
    let di = (b / 2u) % 4u;
    let dw = select(select(dv.x, dv.y, di == 1u), select(dv.z, dv.w, di == 3u), di >= 2u);
    let dd = unpack2x16float(dw);
    let d = select(dd.x, dd.y, (b % 2u) == 1u);
    let sw = select(sc.x, sc.z, hf == 1u);   // scale bytes 8 half + 0..3: q = 0, 1
    let sw2 = select(sc.y, sc.w, hf == 1u);  // scale bytes 8 half + 4..7: q = 2, 3
    let s = d * vec4<f32>(i8_at(sw, lh), i8_at(sw, 2u + lh), i8_at(sw2, lh), i8_at(sw2, 2u + lh));
    return WU(W[row + 8u * b + 4u * hf + lh], W[row + 8u * b + 4u * hf + 2u + lh],
              W[row + 8u * nb + 4u * b + 2u * hf + lh], s);
}
