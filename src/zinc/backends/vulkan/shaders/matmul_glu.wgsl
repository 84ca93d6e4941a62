// y (T, N) = act(x @ Wg.T) * (x @ Wu.T): the gate and up matmuls and the GLU in one pass; a
// workgroup per (output row, tile of TILE tokens), as matmul.wgsl. Wg and Wu may differ in type.
struct Params { N: u32, K: u32, T: u32, row_words: u32, nchunk: u32, n_tiles: u32, row_words2: u32 }
@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> X: array<f32>;
@group(0) @binding(2) var<storage, read> W: array<u32>;
@group(0) @binding(3) var<storage, read> W2: array<u32>;
@group(0) @binding(4) var<storage, read_write> Y: array<f32>;

const WG: u32 = 64u;
const TILE: u32 = 4u;
var<workgroup> red: array<f32, 512>;  // 2 * WG * TILE

{{DEQUANT}}

{{DEQUANT2}}

// #include "lib/activations.wgsl"

fn act(g: f32, u: f32) -> f32 {
    return {{EXPR}};
}

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32) {
    let g = wid.x + wid.y * nwg.x;
    let n = g % P.N;
    let tile = g / P.N;
    let in_range = tile < P.n_tiles;
    let t0 = tile * TILE;
    var ag: array<f32, 4>;
    var au: array<f32, 4>;
    if (in_range) {
        for (var c = tid; c < P.nchunk; c += WG) {
            let wg = chunk(n, c);
            let wu = chunk2(n, c);
            let k0 = c * 32u;
            let kn = min(32u, P.K - k0);
            for (var j = 0u; j < TILE; j++) {
                let t = t0 + j;
                if (t < P.T) {
                    var sg = 0.0;
                    var su = 0.0;
                    let xb = t * P.K + k0;
                    for (var l = 0u; l < kn; l++) {
                        let x = X[xb + l];
                        sg += wg[l] * x;
                        su += wu[l] * x;
                    }
                    ag[j] += sg;
                    au[j] += su;
                }
            }
        }
    }
    for (var j = 0u; j < TILE; j++) {
        red[j * WG + tid] = ag[j];
        red[(TILE + j) * WG + tid] = au[j];
    }
    workgroupBarrier();
    for (var s = WG / 2u; s > 0u; s >>= 1u) {
        if (tid < s) {
            for (var j = 0u; j < 2u * TILE; j++) { red[j * WG + tid] += red[j * WG + tid + s]; }
        }
        workgroupBarrier();
    }
    if (tid == 0u && in_range) {
        for (var j = 0u; j < TILE; j++) {
            let t = t0 + j;
            if (t < P.T) { Y[t * P.N + n] = act(red[j * WG], red[(TILE + j) * WG]); }
        }
    }
}
