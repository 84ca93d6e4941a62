// Rotary embedding of x (T, H, Dh) from host-built cos/sin tables (T, n_dims / 2); dims past n_dims
// pass through. NEOX = 1 rotates (i, i + n/2), NEOX = 0 (NORM) rotates adjacent pairs (2i, 2i + 1).
struct Params { T: u32, H: u32, Dh: u32, n_dims: u32, neox: u32 }
@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> X: array<f32>;
@group(0) @binding(2) var<storage, read> COS: array<f32>;
@group(0) @binding(3) var<storage, read> SIN: array<f32>;
@group(0) @binding(4) var<storage, read_write> Y: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * 64u;
    if (i >= P.T * P.H * P.Dh) { return; }
    let d = i % P.Dh;
    let base = i - d;
    let t = i / (P.H * P.Dh);
    if (d >= P.n_dims) { Y[i] = X[i]; return; }
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
    let c = COS[t * half + j];
    let s = SIN[t * half + j];
    let x0 = X[base + i0];
    let x1 = X[base + i1];
    Y[i] = select(x0 * c - x1 * s, x0 * s + x1 * c, second);
}
