// y[:, d0 : d0 + C] = x[:, c0 : c0 + C] for row-major x (R, Cin) and y (R, Cout): a split along the last
// axis (d0 = 0, Cout = C) or one part of a concatenation (c0 = 0, Cin = C).
struct Params { R: u32, C: u32, Cin: u32, c0: u32, Cout: u32, d0: u32 }
@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> X: array<u32>;
@group(0) @binding(2) var<storage, read_write> Y: array<u32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * 64u;
    if (i >= P.R * P.C) { return; }
    let r = i / P.C;
    let j = i % P.C;
    Y[r * P.Cout + P.d0 + j] = X[r * P.Cin + P.c0 + j];
}
