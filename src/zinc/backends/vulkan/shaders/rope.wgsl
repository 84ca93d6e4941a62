// Rotary embedding of x (T, H, Dh) from host-built cos/sin tables (T, n_dims / 2); dims past n_dims
// pass through. NEOX = 1 rotates (i, i + n/2), NEOX = 0 (NORM) rotates adjacent pairs (2i, 2i + 1).
struct Params { T: u32, H: u32, Dh: u32, n_dims: u32, neox: u32 }
@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> X: array<f32>;
@group(0) @binding(2) var<storage, read> COS: array<f32>;
@group(0) @binding(3) var<storage, read> SIN: array<f32>;
@group(0) @binding(4) var<storage, read_write> Y: array<f32>;

// #include "lib/rope.wgsl"

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * 64u;
    if (i >= P.T * P.H * P.Dh) { return; }
    let d = i % P.Dh;
    let base = i - d;
    let t = i / (P.H * P.Dh);
    if (d >= P.n_dims) { Y[i] = X[i]; return; }
    let half = P.n_dims / 2u;
    let p = rope_pair(d, P.n_dims, P.neox);
    Y[i] = rope_mix(X[base + p.i0], X[base + p.i1], COS[t * half + p.j], SIN[t * half + p.j], p.second);
}
