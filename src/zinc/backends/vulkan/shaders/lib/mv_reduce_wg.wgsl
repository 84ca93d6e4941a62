// matvec reduction in core WGSL: the NACC partial sums of every thread go to workgroup memory, then a
// tree over the L lanes of each row slot (log2(L) barriers); lane 0 of the slot ends with the sums.
var<workgroup> red: array<f32, WG * NACC>;

fn reduce_rows(acc: ptr<function, array<f32, NACC>>, t: u32) {
    for (var r = 0u; r < NACC; r++) { red[r * WG + t] = (*acc)[r]; }
    workgroupBarrier();
    let lane = t % L;
    for (var o = L / 2u; o > 0u; o >>= 1u) {
        if (lane < o) {
            for (var r = 0u; r < NACC; r++) { red[r * WG + t] += red[r * WG + t + o]; }
        }
        workgroupBarrier();
    }
    for (var r = 0u; r < NACC; r++) { (*acc)[r] = red[r * WG + t]; }
    workgroupBarrier();  // a second reduce_rows in the same invocation reuses red
}
