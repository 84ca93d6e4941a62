// y = s / sqrt(mean(s^2) + eps) * w over rows of D (D % 4 == 0) with s = x, or s = x + r (add = 1,
// which also writes S). A row is spread over NS = ceil(D / 1024) workgroups of 256 (workgroup g:
// row g / NS, slice g % NS): each reads the whole row (from cache after the first) for the sum of
// squares, thread tid reading vec4 256 k + tid (k < NS), and normalizes only its slice's vec4 (one
// per thread), so a one-token row is not one workgroup's serial work.
// q8 = 1 also writes y's 8-bit activations to QO (lib/q8.wgsl; D % 256 == 0): a block of 32 values is
// 8 consecutive threads, which swap their max and code sums through workgroup memory.
struct Params { D: u32, rows: u32, has_w: u32, eps: f32, add: u32, q8: u32 }
@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> X: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> R: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> Wt: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> S: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read_write> Y: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read_write> QO: array<u32>;

const NS: u32 = {{NS}}u;

// #include "lib/sum256.wgsl"

var<workgroup> amx: array<f32, 256>;
var<workgroup> csum: array<i32, 256>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32) {
    let g = wid.x + wid.y * nwg.x;
    let row = min(g / NS, P.rows - 1u);
    let slc = g % NS;
    let live = g / NS < P.rows;
    let D4 = P.D / 4u;
    let base = row * D4;
    var mine = vec4<f32>(0.0);
    var ss = 0.0;
    for (var k = 0u; k < NS; k++) {
        let i = 256u * k + tid;
        if (i < D4) {
            var a = X[base + i];
            if (P.add != 0u) { a += R[base + i]; }
            ss += dot(a, a);
            if (k == slc) { mine = a; }
        }
    }
    let r = 1.0 / sqrt(sum256(tid, ss) / f32(P.D) + P.eps);
    let i = 256u * slc + tid;
    let ok = live && i < D4;
    var y = mine * r;
    if (P.has_w != 0u && i < D4) { y *= Wt[i]; }
    if (ok) {
        Y[base + i] = y;
        if (P.add != 0u) { S[base + i] = mine; }
    }
    if (P.q8 == 0u) { return; }
    let a = abs(y);
    amx[tid] = max(max(a.x, a.y), max(a.z, a.w));
    workgroupBarrier();
    let b0 = tid & ~7u;  // the first thread of this block of 32
    var am = 0.0;
    for (var j = 0u; j < 8u; j++) { am = max(am, amx[b0 + j]); }
    let d = am / 127.0;
    let inv = select(0.0, 127.0 / am, am > 0.0);
    let code = pack4xI8(vec4<i32>(round(y * inv)));
    csum[tid] = dot4I8Packed(code, 0x01010101u);
    workgroupBarrier();
    let e = 4u * i;  // the thread's first element in the row
    let u = e / 64u;  // its 64-value chunk, quarter p of it (16 values) and word in the quarter
    let p = (e % 64u) / 16u;
    let qrow = row * (P.D / 4u + P.D / 8u);
    if (!ok) { return; }
    QO[qrow + 4u * (p * (P.D / 64u) + u) + (e % 16u) / 4u] = code;
    let mb = qrow + P.D / 4u + 8u * u;
    if (tid % 4u == 0u) {
        let s16 = csum[tid] + csum[tid + 1u] + csum[tid + 2u] + csum[tid + 3u];
        QO[mb + p] = bitcast<u32>(d * f32(s16));
    }
    if (tid % 8u == 0u) {
        let s32 = csum[tid] + csum[tid + 1u] + csum[tid + 2u] + csum[tid + 3u]
                + csum[tid + 4u] + csum[tid + 5u] + csum[tid + 6u] + csum[tid + 7u];
        let h = p / 2u;
        QO[mb + 4u + h] = bitcast<u32>(d);
        QO[mb + 6u + h] = bitcast<u32>(d * f32(s32));
    }
}
