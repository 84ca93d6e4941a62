// Q4_K: (d sc, d sc', dmin m, dmin m') of the sub-block pair 2j, 2j + 1 from the block header hd
// (d|dmin as f16 x2, then 8 six-bit scale/min pairs packed in 12 bytes), two six-bit values per 16 bits.
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
