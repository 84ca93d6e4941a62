// Rotate K (T, H, Dh) as rope.wgsl does (COSSIN = the cos table (T, n_dims / 2) then the sin table),
// return it, and store it, V (T, RV words a row) and the positions in the cache cells `slots`.
struct Params { T: u32, H: u32, Dh: u32, n_dims: u32, neox: u32, RV: u32 }
@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> X: array<f32>;
@group(0) @binding(2) var<storage, read> COSSIN: array<f32>;
@group(0) @binding(3) var<storage, read> V: array<f32>;
@group(0) @binding(4) var<storage, read> POS: array<i32>;
@group(0) @binding(5) var<storage, read> SLOTS: array<i32>;
@group(0) @binding(6) var<storage, read_write> Y: array<f32>;
@group(0) @binding(7) var<storage, read_write> CK: array<f32>;
@group(0) @binding(8) var<storage, read_write> CV: array<f32>;
@group(0) @binding(9) var<storage, read_write> CP: array<i32>;

// #include "lib/rope.wgsl"

fn rotated(i: u32) -> f32 {
    let d = i % P.Dh;
    if (d >= P.n_dims) { return X[i]; }
    let base = i - d;
    let t = i / (P.H * P.Dh);
    let half = P.n_dims / 2u;
    let p = rope_pair(d, P.n_dims, P.neox);
    let c = COSSIN[t * half + p.j];
    let s = COSSIN[P.T * half + t * half + p.j];
    return rope_mix(X[base + p.i0], X[base + p.i1], c, s, p.second);
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * 64u;
    let RK = P.H * P.Dh;
    let R = max(RK, P.RV);
    if (i >= P.T * R) { return; }
    let t = i / R;
    let j = i % R;
    let s = u32(SLOTS[t]);
    if (j < RK) {
        let y = rotated(t * RK + j);
        Y[t * RK + j] = y;
        CK[s * RK + j] = y;
    }
    if (j < P.RV) { CV[s * P.RV + j] = V[t * P.RV + j]; }
    if (j == 0u) { CP[s] = POS[t]; }
}
