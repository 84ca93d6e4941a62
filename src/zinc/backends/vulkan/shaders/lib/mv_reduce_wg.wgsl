// matvec reduction in core WGSL: the R partial sums of every thread go to workgroup memory, then a
// tree over the L lanes of each row slot (log2(L) barriers); lane 0 of the slot ends with the sums.
var<workgroup> red: array<f32, WG * R>;

fn reduce_rows(acc: ptr<function, array<f32, R>>, t: u32) {
    for (var r = 0u; r < R; r++) { red[r * WG + t] = (*acc)[r]; }
    workgroupBarrier();
    let lane = t % L;
    for (var o = L / 2u; o > 0u; o >>= 1u) {
        if (lane < o) {
            for (var r = 0u; r < R; r++) { red[r * WG + t] += red[r * WG + t + o]; }
        }
        workgroupBarrier();
    }
    for (var r = 0u; r < R; r++) { (*acc)[r] = red[r * WG + t]; }
    workgroupBarrier();  // a second reduce_rows in the same invocation reuses red
}
