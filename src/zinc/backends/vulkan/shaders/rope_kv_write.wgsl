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

fn rotated(i: u32) -> f32 {
    let d = i % P.Dh;
    if (d >= P.n_dims) { return X[i]; }
    let base = i - d;
    let t = i / (P.H * P.Dh);
    let half = P.n_dims / 2u;
    var j: u32;
    var i0: u32;
    var i1: u32;
    var second: bool;
    if (P.neox != 0u) {
        j = d % half; i0 = j; i1 = j + half; second = d >= half;
    } else {
        j = d / 2u; i0 = 2u * j; i1 = 2u * j + 1u; second = (d % 2u) == 1u;
    }
    let c = COSSIN[t * half + j];
    let s = COSSIN[P.T * half + t * half + j];
    let x0 = X[base + i0];
    let x1 = X[base + i1];
    return select(x0 * c - x1 * s, x0 * s + x1 * c, second);
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
