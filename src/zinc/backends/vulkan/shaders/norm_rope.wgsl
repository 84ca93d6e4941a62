// rms_norm over each head row (optional weight) fused with the rotary embedding, one workgroup per
// (token, head) row of x (T, H, Dh); with KV = 1 the rotated rows, V (T, H, Dv) and the positions
// are also stored in the cache cells `slots` (the K norm + rope + KV write of an attention layer).
// H2 > 0 adds the T H2 rows of X2 (T, H2, Dh) normed with NW2 into Y2, no cache write: the Q norm +
// rope of the same layer in the same dispatch.
// COSSIN = the cos table (T, n_dims / 2) then the sin table, as rope_kv_write.wgsl.
struct Params { T: u32, H: u32, Dh: u32, n_dims: u32, neox: u32, has_w: u32, kv: u32, Dv: u32, eps: f32,
                H2: u32, has_w2: u32 }
@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> X: array<f32>;
@group(0) @binding(2) var<storage, read> NW: array<f32>;
@group(0) @binding(3) var<storage, read> COSSIN: array<f32>;
@group(0) @binding(4) var<storage, read> V: array<f32>;
@group(0) @binding(5) var<storage, read> POS: array<i32>;
@group(0) @binding(6) var<storage, read> SLOTS: array<i32>;
@group(0) @binding(7) var<storage, read_write> Y: array<f32>;
@group(0) @binding(8) var<storage, read_write> CK: array<f32>;
@group(0) @binding(9) var<storage, read_write> CV: array<f32>;
@group(0) @binding(10) var<storage, read_write> CP: array<i32>;
@group(0) @binding(11) var<storage, read> X2: array<f32>;
@group(0) @binding(12) var<storage, read> NW2: array<f32>;
@group(0) @binding(13) var<storage, read_write> Y2: array<f32>;

// #include "lib/sum64.wgsl"
// #include "lib/rope.wgsl"

fn xv(q: bool, i: u32) -> f32 {
    if (q) { return X2[i]; }
    return X[i];
}

fn xn(q: bool, base: u32, d: u32, r: f32) -> f32 {
    var y = xv(q, base + d) * r;
    if (q && P.has_w2 != 0u) { y *= NW2[d]; }
    if (!q && P.has_w != 0u) { y *= NW[d]; }
    return y;
}

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32) {
    let row0 = wid.x + wid.y * nwg.x;
    let live = row0 < P.T * (P.H + P.H2);
    let q = row0 >= P.T * P.H;  // a row of X2
    let row = select(row0, row0 - P.T * P.H, q);
    let heads = select(P.H, P.H2, q);
    let base = row * P.Dh;
    var acc = 0.0;
    if (live) {
        for (var i = tid; i < P.Dh; i += 64u) { let v = xv(q, base + i); acc += v * v; }
    }
    let total = sum64(tid, acc);
    if (!live) { return; }
    let r = 1.0 / sqrt(total / f32(P.Dh) + P.eps);
    let t = row / heads;
    let h = row % heads;
    let kv = P.kv != 0u && !q;
    let half = P.n_dims / 2u;
    let s = u32(SLOTS[t * P.kv]);
    for (var d = tid; d < P.Dh; d += 64u) {
        var y: f32;
        if (d >= P.n_dims) {
            y = xn(q, base, d, r);
        } else {
            let p = rope_pair(d, P.n_dims, P.neox);
            let c = COSSIN[t * half + p.j];
            let sn = COSSIN[P.T * half + t * half + p.j];
            y = rope_mix(xn(q, base, p.i0, r), xn(q, base, p.i1, r), c, sn, p.second);
        }
        if (q) {
            Y2[base + d] = y;
        } else {
            Y[base + d] = y;
        }
        if (kv) { CK[(s * P.H + h) * P.Dh + d] = y; }
    }
    if (kv) {
        for (var d = tid; d < P.Dv; d += 64u) { CV[(s * P.H + h) * P.Dv + d] = V[row * P.Dv + d]; }
        if (h == 0u && tid == 0u) { CP[s] = POS[t]; }
    }
}
