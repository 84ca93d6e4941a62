// Q4_K / Q5_K: (d * scale, dmin * min) of 32-element sub-block `sub` of the super-block at word `base`
// (d|dmin as f16 x2 in word 0, then 8 six-bit scale/min pairs packed in 12 bytes from byte 4).
fn kscale_min(base: u32, sub: u32) -> vec2<f32> {
    let dm = unpack2x16float(W[base]);
    var sc: u32;
    var m: u32;
    if (sub < 4u) {
        sc = wbyte(base, 4u + sub) & 63u;
        m = wbyte(base, 8u + sub) & 63u;
    } else {
        sc = (wbyte(base, 8u + sub) & 0xfu) | ((wbyte(base, sub) >> 6u) << 4u);
        m = (wbyte(base, 8u + sub) >> 4u) | ((wbyte(base, 4u + sub) >> 6u) << 4u);
    }
    return vec2<f32>(dm.x * f32(sc), dm.y * f32(m));
}
