// y (T, k, N) = x (T, K) or (T, k, K) @ W[ids[t, j]].T for an expert stack W (E, N, K): a workgroup
// per (output row, selected pair); only the selected experts' rows are read. has_bias = 1 adds the
// selected expert's row of BIAS (E, N).
struct Params { N: u32, K: u32, n_pairs: u32, row_words: u32, nchunk: u32, k: u32, x_per_pair: u32, has_bias: u32 }
@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> X: array<f32>;
@group(0) @binding(2) var<storage, read> W: array<u32>;
@group(0) @binding(3) var<storage, read> IDS: array<i32>;
@group(0) @binding(4) var<storage, read_write> Y: array<f32>;
@group(0) @binding(5) var<storage, read> BIAS: array<f32>;

const WG: u32 = 64u;
// #include "lib/sum64.wgsl"

{{DEQUANT}}

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32) {
    let g = wid.x + wid.y * nwg.x;
    let n = g % P.N;
    let pair = g / P.N;
    let live = pair < P.n_pairs;
    var acc = 0.0;
    if (live) {
        let row = u32(IDS[pair]) * P.N + n;
        let xb0 = select(pair / P.k, pair, P.x_per_pair != 0u) * P.K;
        for (var c = tid; c < P.nchunk; c += WG) {
            let w = chunk(row, c);
            let k0 = c * 32u;
            let kn = min(32u, P.K - k0);
            var s = 0.0;
            for (var l = 0u; l < kn; l++) { s += w[l] * X[xb0 + k0 + l]; }
            acc += s;
        }
    }
    let total = sum64(tid, acc);
    if (tid == 0u && live) {
        let b = select(0.0, BIAS[u32(IDS[pair]) * P.N + n], P.has_bias != 0u);
        Y[pair * P.N + n] = select(total, total + b, P.has_bias != 0u);
    }
}
