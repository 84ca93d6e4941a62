// Depthwise causal conv of x (T, C) over the window [state (K-1, C), x], one thread per channel;
// y[t, c] = sum_j win[t + j, c] * w[c, j] (taps added in order); the state keeps the last K-1 inputs.
struct Params { T: u32, C: u32, K: u32 }
@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> X: array<f32>;
@group(0) @binding(2) var<storage, read> Wt: array<f32>;
@group(0) @binding(3) var<storage, read_write> ST: array<f32>;
@group(0) @binding(4) var<storage, read_write> Y: array<f32>;

fn win(i: u32, c: u32) -> f32 {
    if (i < P.K - 1u) { return ST[i * P.C + c]; }
    return X[(i - (P.K - 1u)) * P.C + c];
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let c = gid.x + gid.y * nwg.x * 64u;
    if (c >= P.C) { return; }
    for (var t = 0u; t < P.T; t++) {
        var y = win(t, c) * Wt[c * P.K];
        for (var j = 1u; j < P.K; j++) { y += win(t + j, c) * Wt[c * P.K + j]; }
        Y[t * P.C + c] = y;
    }
    for (var i = 0u; i + 1u < P.K; i++) { ST[i * P.C + c] = win(P.T + i, c); }
}
