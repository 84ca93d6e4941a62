// out = f(x) elementwise; `s` is the op's scalar (scale factor, softcap).
struct Params { n: u32, s: f32 }
@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> X: array<f32>;
@group(0) @binding(2) var<storage, read_write> Y: array<f32>;

// #include "lib/activations.wgsl"

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * 64u;
    if (i >= P.n) { return; }
    let x = X[i];
    let s = P.s;
    Y[i] = {{EXPR}};
}
