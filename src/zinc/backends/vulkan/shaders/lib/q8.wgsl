// 8-bit activations for the integer-dot matvecs (mvq.wgsl). A row of K values (K % 256 == 0) is
// Q8_ROW(K) = K / 4 + K / 8 words in 64-element chunks u (C = K / 64 a row): first the codes in four
// planes, vec4 p * C + u holding elements 16 p .. 16 p + 16 of chunk u (one byte each, 4 a word), so
// that lanes reading consecutive chunks read consecutive vec4; then two vec4 per chunk (vec4 K / 16 +
// 2u and + 1): d * (sum of the codes) of each 16 elements, and (d0, d1, d0 * sum0, d1 * sum1) of its
// two 32-element blocks (x ~ d * code, d = max|x| / 127). Writers store words into QO (array<u32>).
fn q8_row_words(K: u32) -> u32 {
    return K / 4u + K / 8u;
}

fn q8_absmax(v: vec4<f32>) -> f32 {
    let a = abs(v);
    return max(max(a.x, a.y), max(a.z, a.w));
}

// block `blk` (elements 32 blk ..) of the row at word `row` of QO from its 8 vec4 of values
fn q8_store_block(row: u32, K: u32, blk: u32, v: array<vec4<f32>, 8>) {
    var amax = 0.0;
    for (var i = 0u; i < 8u; i++) { amax = max(amax, q8_absmax(v[i])); }
    let d = amax / 127.0;
    let inv = select(0.0, 127.0 / amax, amax > 0.0);
    let u = blk / 2u;
    let h = blk % 2u;
    let mb = row + K / 4u + 8u * u;
    var s = vec2<i32>(0);
    for (var i = 0u; i < 8u; i++) {
        let c = pack4xI8(vec4<i32>(round(v[i] * inv)));
        QO[row + 4u * ((2u * h + i / 4u) * (K / 64u) + u) + i % 4u] = c;
        let cs = dot4I8Packed(c, 0x01010101u);
        s += select(vec2<i32>(cs, 0), vec2<i32>(0, cs), i >= 4u);
    }
    QO[mb + 2u * h] = bitcast<u32>(d * f32(s.x));
    QO[mb + 2u * h + 1u] = bitcast<u32>(d * f32(s.y));
    QO[mb + 4u + h] = bitcast<u32>(d);
    QO[mb + 6u + h] = bitcast<u32>(d * f32(s.x + s.y));
}
