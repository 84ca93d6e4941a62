// Q4_K unit of mvq.wgsl on the raw 144-byte super-blocks (9 vec4: d|dmin, scales[12], then qs[128]):
// unit u = 4 * block + j covers qs bytes 32j .. 32j + 32 (two vec4), whose low nibbles are elements
// 64j + i and high nibbles elements 64j + 32 + i of the block (sub-blocks 2j and 2j + 1).
struct WU { q0: vec4<u32>, q1: vec4<u32>, s: vec4<f32> }  // s: d sc(2j), d sc(2j+1), dmin m(2j), dmin m(2j+1)
struct XU { a: vec4<u32>, b: vec4<u32>, c: vec4<u32>, d: vec4<u32>, dx: vec2<f32>, sx: vec2<f32> }

fn idot(a: vec4<u32>, b: vec4<u32>) -> i32 {
    return dot4I8Packed(a.x, b.x) + dot4I8Packed(a.y, b.y) + dot4I8Packed(a.z, b.z) + dot4I8Packed(a.w, b.w);
}

// the codes of elements 64j .. 64j + 64 of the block, d of their two 32-blocks and d * code sums
fn mvq_x(u: u32, xb: u32) -> XU {
    let b = u / 4u;
    let j = u % 4u;
    let q = xb + 16u * b + 4u * j;
    let dv = bitcast<vec4<f32>>(XQ[xb + K / 16u + 2u * b + j / 2u]);
    let sv = bitcast<vec4<f32>>(XQ[xb + K / 16u + K / 128u + 4u * b + j]);
    return XU(XQ[q], XQ[q + 1u], XQ[q + 2u], XQ[q + 3u], select(dv.xy, dv.zw, (j & 1u) == 1u),
              vec2<f32>(sv.x + sv.y, sv.z + sv.w));
}

// six-bit scales and mins of sub-blocks 2j, 2j + 1 (two per 16 bits), times d and dmin
fn q4k_scales(hd: vec4<u32>, j: u32) -> vec4<f32> {
    let sh = 16u * (j & 1u);
    let y = hd.y >> sh;
    let z = hd.z >> sh;
    let w = hd.w >> sh;
    let lo = j < 2u;
    let sc = select((w & 0x0f0fu) | ((y >> 2u) & 0x3030u), y & 0x3f3fu, lo);
    let mn = select(((w >> 4u) & 0x0f0fu) | ((z >> 2u) & 0x3030u), z & 0x3f3fu, lo);
    let dm = unpack2x16float(hd.x);
    return vec4<f32>(dm.x * f32(sc & 0xffu), dm.x * f32(sc >> 8u), dm.y * f32(mn & 0xffu), dm.y * f32(mn >> 8u));
}

fn mvq_dot(w: WU, x: XU) -> f32 {
    let m = vec4<u32>(0x0f0f0f0fu);
    let four = vec4<u32>(4u);
    let lo = idot(w.q0 & m, x.a) + idot(w.q1 & m, x.b);
    let hi = idot((w.q0 >> four) & m, x.c) + idot((w.q1 >> four) & m, x.d);
    return w.s.x * x.dx.x * f32(lo) + w.s.y * x.dx.y * f32(hi) - (w.s.z * x.sx.x + w.s.w * x.sx.y);
}

// -- w
fn mvq_w(row: u32, u: u32) -> WU {
    let blk = row + (u / 4u) * 9u;
    let j = u % 4u;
    return WU(W[blk + 1u + 2u * j], W[blk + 2u + 2u * j], q4k_scales(W[blk], j));
}
