// The rotary pair of dimension d < n_dims: cos/sin table index j, the two source dims, and whether d
// is the second output of the pair. NEOX != 0 pairs (i, i + n/2); NEOX = 0 (NORM) pairs (2i, 2i + 1).
struct RopePair { j: u32, i0: u32, i1: u32, second: bool }

fn rope_pair(d: u32, n_dims: u32, neox: u32) -> RopePair {
    let half = n_dims / 2u;
    if (neox != 0u) {
        let j = d % half;
        return RopePair(j, j, j + half, d >= half);
    }
    let j = d / 2u;
    return RopePair(j, 2u * j, 2u * j + 1u, (d % 2u) == 1u);
}

fn rope_mix(x0: f32, x1: f32, c: f32, s: f32, second: bool) -> f32 {
    return select(x0 * c - x1 * s, x0 * s + x1 * c, second);
}
