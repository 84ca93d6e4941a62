// cache_k[slots[t]] = k[t], cache_v[slots[t]] = v[t], cache_pos[slots[t]] = pos[t] (rows of RK / RV words).
struct Params { T: u32, RK: u32, RV: u32, pad: u32 }
@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> K: array<u32>;
@group(0) @binding(2) var<storage, read> V: array<u32>;
@group(0) @binding(3) var<storage, read> POS: array<i32>;
@group(0) @binding(4) var<storage, read> SLOTS: array<i32>;
@group(0) @binding(5) var<storage, read_write> CK: array<u32>;
@group(0) @binding(6) var<storage, read_write> CV: array<u32>;
@group(0) @binding(7) var<storage, read_write> CP: array<i32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * 64u;
    let R = max(P.RK, P.RV);
    if (i >= P.T * R) { return; }
    let t = i / R;
    let j = i % R;
    let s = u32(SLOTS[t]);
    if (j < P.RK) { CK[s * P.RK + j] = K[t * P.RK + j]; }
    if (j < P.RV) { CV[s * P.RV + j] = V[t * P.RV + j]; }
    if (j == 0u) { CP[s] = POS[t]; }
}
