// out = a OP b with NumPy broadcasting over up to 4 dims (a broadcast dim has stride 0).
struct Params { shape: vec4<u32>, sa: vec4<u32>, sb: vec4<u32>, n: u32 }
@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> A: array<f32>;
@group(0) @binding(2) var<storage, read> B: array<f32>;
@group(0) @binding(3) var<storage, read_write> Y: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * 64u;
    if (i >= P.n) { return; }
    var r = i;
    var ia = 0u;
    var ib = 0u;
    for (var d = 3; d >= 0; d--) {
        let c = r % P.shape[d];
        r = r / P.shape[d];
        ia += c * P.sa[d];
        ib += c * P.sb[d];
    }
    let a = A[ia];
    let b = B[ib];
    Y[i] = {{EXPR}};
}
