// out (T, D) = sum over j of x (T, k, D)[:, j] * w (T, k)[:, j], added in selection order.
struct Params { T: u32, k: u32, D: u32 }
@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> X: array<f32>;
@group(0) @binding(2) var<storage, read> Wt: array<f32>;
@group(0) @binding(3) var<storage, read_write> Y: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * 64u;
    if (i >= P.T * P.D) { return; }
    let t = i / P.D;
    let d = i % P.D;
    var acc = X[t * P.k * P.D + d] * Wt[t * P.k];
    for (var j = 1u; j < P.k; j++) { acc += X[(t * P.k + j) * P.D + d] * Wt[t * P.k + j]; }
    Y[i] = acc;
}
