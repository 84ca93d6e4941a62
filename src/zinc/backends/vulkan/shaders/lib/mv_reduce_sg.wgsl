// matvec reduction with subgroup shuffles: the L lanes of a row slot are L consecutive invocations of
// one subgroup (t = subgroup_id * subgroup_size + lane, and L <= the adapter's minimum subgroup size),
// so log2(L) xor-shuffles leave every lane with the row's sum; no workgroup memory, no barrier.
fn reduce_rows(acc: ptr<function, array<f32, NACC>>, t: u32) {
    for (var r = 0u; r < NACC; r++) {
        var v = (*acc)[r];
        for (var o = 1u; o < L; o <<= 1u) { v += subgroupShuffleXor(v, o); }
        (*acc)[r] = v;
    }
}
