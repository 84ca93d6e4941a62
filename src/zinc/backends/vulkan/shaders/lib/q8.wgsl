// 8-bit activations for the integer-dot matvecs (mvq.wgsl). An activation row of K values (K % 256
// == 0) takes Q8_ROW(K) = K / 4 + K / 32 + K / 16 words: the codes (element e in byte e % 4 of word
// e / 4), then d per 32 elements (x ~ d * code, d = max|x| / 127), then d * (sum of the codes) per 16
// elements. Writers store words into QO (array<u32>); readers load vec4<u32>.
fn q8_row_words(K: u32) -> u32 {
    return K / 4u + K / 32u + K / 16u;
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
    var s = vec2<i32>(0);
    for (var i = 0u; i < 8u; i++) {
        let c = pack4xI8(vec4<i32>(round(v[i] * inv)));
        QO[row + 8u * blk + i] = c;
        let cs = dot4I8Packed(c, 0x01010101u);
        s += select(vec2<i32>(cs, 0), vec2<i32>(0, cs), i >= 4u);
    }
    QO[row + K / 4u + blk] = bitcast<u32>(d);
    QO[row + K / 4u + K / 32u + 2u * blk] = bitcast<u32>(d * f32(s.x));
    QO[row + K / 4u + K / 32u + 2u * blk + 1u] = bitcast<u32>(d * f32(s.y));
}
