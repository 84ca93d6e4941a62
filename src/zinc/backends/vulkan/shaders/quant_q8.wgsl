// The 8-bit activations (lib/q8.wgsl) of x (T, K) for the integer-dot matvecs: one invocation per
// 32-element block.
struct Params { T: u32, K: u32 }
@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> X: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> QO: array<u32>;

// #include "lib/q8.wgsl"

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let g = (wid.x + wid.y * nwg.x) * 64u + lid;
    let nb = P.K / 32u;
    if (g >= P.T * nb) { return; }
    let t = g / nb;
    let b = g % nb;
    var v: array<vec4<f32>, 8>;
    for (var i = 0u; i < 8u; i++) { v[i] = X[(t * P.K) / 4u + 8u * b + i]; }
    q8_store_block(t * q8_row_words(P.K), P.K, b, v);
}
