// y = s / sqrt(mean(s^2) + eps) * w over rows of D (D % 4 == 0) with s = x, or s = x + r (add = 1,
// which also writes S); one workgroup of 256 per row. The row is read in chunks of 1024 vec4, thread
// tid holding vec4 4 tid .. 4 tid + 3 of each chunk (NC chunks) in registers between the passes.
// q8 = 1 also writes y's 8-bit activations to QO (lib/q8.wgsl; D % 256 == 0): the 16 values of a
// thread are half a block of 32, quantized in place (the two halves swap their max and code sums
// through workgroup memory).
struct Params { D: u32, rows: u32, has_w: u32, eps: f32, add: u32, q8: u32 }
@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> X: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> R: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> Wt: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> S: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read_write> Y: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read_write> QO: array<u32>;

const NC: u32 = {{NC}}u;

// #include "lib/sum256.wgsl"

var<workgroup> amx: array<f32, 256>;
var<workgroup> csum: array<i32, 256>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32) {
    let row = wid.x + wid.y * nwg.x;
    let live = row < P.rows;
    let D4 = P.D / 4u;
    let base = min(row, P.rows - 1u) * D4;
    var v: array<vec4<f32>, 4u * NC>;
    var ss = 0.0;
    for (var k = 0u; k < 4u * NC; k++) {
        let i = 1024u * (k / 4u) + 4u * tid + k % 4u;
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
    for (var k = 0u; k < 4u * NC; k++) {
        let i = 1024u * (k / 4u) + 4u * tid + k % 4u;
        if (i < D4) {
            var y = v[k] * r;
            if (P.has_w != 0u) { y *= Wt[i]; }
            if (live) { Y[base + i] = y; }
            v[k] = y;
        }
    }
    if (P.q8 == 0u) { return; }
    let qrow = min(row, P.rows - 1u) * (P.D / 4u + P.D / 8u);
    let half = tid % 2u;
    for (var c = 0u; c < NC; c++) {
        let blk = 128u * c + tid / 2u;  // the thread's block of 32 in the row
        let ok = live && 32u * blk < P.D;
        var am = 0.0;
        for (var j = 0u; j < 4u; j++) {
            let a = abs(v[4u * c + j]);
            am = max(am, max(max(a.x, a.y), max(a.z, a.w)));
        }
        amx[tid] = am;
        workgroupBarrier();
        am = max(am, amx[tid ^ 1u]);
        let d = am / 127.0;
        let inv = select(0.0, 127.0 / am, am > 0.0);
        let u = blk / 2u;
        let h = blk % 2u;
        var s = 0;
        for (var j = 0u; j < 4u; j++) {
            let code = pack4xI8(vec4<i32>(round(v[4u * c + j] * inv)));
            if (ok) { QO[qrow + 4u * ((2u * h + half) * (P.D / 64u) + u) + j] = code; }
            s += dot4I8Packed(code, 0x01010101u);
        }
        csum[tid] = s;
        workgroupBarrier();
        let mb = qrow + P.D / 4u + 8u * u;
        if (ok) {
            QO[mb + 2u * h + half] = bitcast<u32>(d * f32(s));
            if (half == 0u) {
                QO[mb + 4u + h] = bitcast<u32>(d);
                QO[mb + 6u + h] = bitcast<u32>(d * f32(s + csum[tid + 1u]));
            }
        }
    }
}
