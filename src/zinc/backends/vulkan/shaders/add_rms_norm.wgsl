// s = x + r; y = s / sqrt(mean(s^2) + eps) * w over rows of length D (one workgroup per row).
struct Params { D: u32, rows: u32, has_w: u32, eps: f32 }
@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> X: array<f32>;
@group(0) @binding(2) var<storage, read> R: array<f32>;
@group(0) @binding(3) var<storage, read> Wt: array<f32>;
@group(0) @binding(4) var<storage, read_write> S: array<f32>;
@group(0) @binding(5) var<storage, read_write> Y: array<f32>;

// #include "lib/sum256.wgsl"

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32) {
    let row = wid.x + wid.y * nwg.x;
    let base = row * P.D;
    var acc = 0.0;
    if (row < P.rows) {
        for (var i = tid; i < P.D; i += 256u) {
            let v = X[base + i] + R[base + i];
            S[base + i] = v;
            acc += v * v;
        }
    }
    let total = sum256(tid, acc);
    if (row >= P.rows) { return; }
    let r = 1.0 / sqrt(total / f32(P.D) + P.eps);
    for (var i = tid; i < P.D; i += 256u) {
        var y = (X[base + i] + R[base + i]) * r;
        if (P.has_w != 0u) { y *= Wt[i]; }
        Y[base + i] = y;
    }
}
