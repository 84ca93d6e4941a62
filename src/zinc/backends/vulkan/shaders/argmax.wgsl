// out[row] = the first index of the row's maximum (one workgroup per row of length N).
struct Params { N: u32, rows: u32 }
@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> X: array<f32>;
@group(0) @binding(2) var<storage, read_write> Y: array<i32>;

var<workgroup> best_v: array<f32, 64>;
var<workgroup> best_i: array<u32, 64>;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32) {
    let row = wid.x + wid.y * nwg.x;
    var bv = -3.4e38;
    var bi = 0xffffffffu;
    if (row < P.rows) {
        for (var i = tid; i < P.N; i += 64u) {
            let v = X[row * P.N + i];
            if (v > bv || bi == 0xffffffffu) { bv = v; bi = i; }
        }
    }
    best_v[tid] = bv;
    best_i[tid] = bi;
    workgroupBarrier();
    for (var k = 32u; k > 0u; k >>= 1u) {
        if (tid < k) {
            let ov = best_v[tid + k];
            let oi = best_i[tid + k];
            if (oi != 0xffffffffu && (ov > best_v[tid] || (ov == best_v[tid] && oi < best_i[tid])
                                      || best_i[tid] == 0xffffffffu)) {
                best_v[tid] = ov;
                best_i[tid] = oi;
            }
        }
        workgroupBarrier();
    }
    if (tid == 0u && row < P.rows) { Y[row] = i32(best_i[0]); }
}
