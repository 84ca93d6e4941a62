// Router top-k, one thread per token: gate probabilities from the logits (softmax, sigmoid, or the raw
// logits with a softmax over the winners), the k largest (ties: lowest index first), optional
// renormalisation and scale. k <= 64.
struct Params { T: u32, E: u32, k: u32, gating: u32, norm_w: u32, w_scale: f32 }
@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> L: array<f32>;
@group(0) @binding(2) var<storage, read_write> IDS: array<i32>;
@group(0) @binding(3) var<storage, read_write> WOUT: array<f32>;

fn prob(l: f32, mx: f32, inv: f32) -> f32 {
    if (P.gating == 0u) { return exp(l - mx) * inv; }
    if (P.gating == 1u) { return 1.0 / (1.0 + exp(-l)); }
    return l;
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = gid.x + gid.y * nwg.x * 64u;
    if (t >= P.T) { return; }
    let lb = t * P.E;
    var mx = -3.4e38;
    for (var e = 0u; e < P.E; e++) { mx = max(mx, L[lb + e]); }
    var z = 0.0;
    for (var e = 0u; e < P.E; e++) { z += exp(L[lb + e] - mx); }
    let inv = 1.0 / z;
    var ids: array<u32, 64>;
    var w: array<f32, 64>;
    for (var i = 0u; i < P.k; i++) {
        var best = 0.0;
        var bi = 0xffffffffu;
        for (var e = 0u; e < P.E; e++) {
            var taken = false;
            for (var j = 0u; j < i; j++) { taken = taken || ids[j] == e; }
            let p = prob(L[lb + e], mx, inv);
            if (!taken && (bi == 0xffffffffu || p > best)) { best = p; bi = e; }
        }
        ids[i] = bi;
        w[i] = best;
    }
    if (P.gating == 2u) {
        var m = -3.4e38;
        for (var i = 0u; i < P.k; i++) { m = max(m, w[i]); }
        var s = 0.0;
        for (var i = 0u; i < P.k; i++) { w[i] = exp(w[i] - m); s += w[i]; }
        for (var i = 0u; i < P.k; i++) { w[i] *= 1.0 / s; }
    }
    if (P.norm_w != 0u) {
        var s = 0.0;
        for (var i = 0u; i < P.k; i++) { s += w[i]; }
        for (var i = 0u; i < P.k; i++) { w[i] /= max(s, 6.103515625e-5); }
    }
    for (var i = 0u; i < P.k; i++) {
        IDS[t * P.k + i] = i32(ids[i]);
        WOUT[t * P.k + i] = w[i] * P.w_scale;
    }
}
