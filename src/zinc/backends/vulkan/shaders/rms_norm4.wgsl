// y = s / sqrt(mean(s^2) + eps) * w over rows of D (D % 4 == 0) with s = x, or s = x + r (add = 1,
// which also writes S); one workgroup of 256 per row, VPT vec4 per invocation kept in registers
// between the two passes. q8 = 1 also writes y's 8-bit activations to QO (lib/q8.wgsl; D % 256 == 0).
struct Params { D: u32, rows: u32, has_w: u32, eps: f32, add: u32, q8: u32 }
@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> X: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> R: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> Wt: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> S: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read_write> Y: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read_write> QO: array<u32>;

const VPT: u32 = {{VPT}}u;

// #include "lib/sum256.wgsl"
// #include "lib/q8.wgsl"

var<workgroup> ys: array<vec4<f32>, 1024>;  // q8: 4096 values of y at a time

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32) {
    let row = wid.x + wid.y * nwg.x;
    let live = row < P.rows;
    let D4 = P.D / 4u;
    let base = min(row, P.rows - 1u) * D4;
    var v: array<vec4<f32>, VPT>;
    var ss = 0.0;
    for (var k = 0u; k < VPT; k++) {
        let i = tid + 256u * k;
        if (i < D4) {
            var a = X[base + i];
            if (P.add != 0u) {
                a += R[base + i];
                if (live) { S[base + i] = a; }
            }
            v[k] = a;
            ss += dot(a, a);
        }
    }
    let r = 1.0 / sqrt(sum256(tid, ss) / f32(P.D) + P.eps);
    for (var k = 0u; k < VPT; k++) {
        let i = tid + 256u * k;
        if (i < D4) {
            var y = v[k] * r;
            if (P.has_w != 0u) { y *= Wt[i]; }
            if (live) { Y[base + i] = y; }
            v[k] = y;
        }
    }
    if (P.q8 == 0u) { return; }
    let qrow = min(row, P.rows - 1u) * q8_row_words(P.D);
    for (var c = 0u; c < (VPT + 3u) / 4u; c++) {  // 1024 vec4 (128 blocks of 32) at a time
        workgroupBarrier();
        for (var k = 4u * c; k < min(4u * c + 4u, VPT); k++) { ys[tid + 256u * (k - 4u * c)] = v[k]; }
        workgroupBarrier();
        let blk = 128u * c + tid;
        if (live && tid < 128u && 32u * blk < P.D) {
            var b: array<vec4<f32>, 8>;
            for (var i = 0u; i < 8u; i++) { b[i] = ys[8u * tid + i]; }
            q8_store_block(qrow, P.D, blk, b);
        }
    }
}
