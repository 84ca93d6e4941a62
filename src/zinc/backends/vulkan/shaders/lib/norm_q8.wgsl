// The rms_norm of a one-token row done inside an 8-bit-activation matvec (mvq.wgsl, mvq_glu.wgsl with
// XQ = this file, PRE = "norm_q8(lid, workgroup)"): y = s / sqrt(mean(s^2) + eps) * w, s = x (+ r),
// quantized to the workgroup's own copy XQ of the row's 8-bit activations (lib/q8.wgsl layout), the
// same arithmetic in the same order as rms_norm4.wgsl (256 threads: thread tid holds vec4 256 k + tid,
// the same sum tree, 8 threads a block of 32), so the codes equal that kernel's bit for bit.
// Workgroup 0 also writes s to NSO when NSW. NB0..NB2: binding numbers after the matvec's own.
@group(0) @binding(1) var<storage, read> NX: array<vec4<f32>>;
@group(0) @binding({{NB0}}) var<storage, read> NR: array<vec4<f32>>;
@group(0) @binding({{NB1}}) var<storage, read> NW: array<vec4<f32>>;
@group(0) @binding({{NB2}}) var<storage, read_write> NSO: array<vec4<f32>>;

const NADD: bool = {{NADD}};
const NHASW: bool = {{NHASW}};
const NSW: bool = {{NSW}};
const NEPS: f32 = {{NEPS}};  // the f32 eps, written exactly
const NSL: u32 = (K + 1023u) / 1024u;  // vec4 per thread

var<workgroup> XQ: array<vec4<u32>, XROW>;
var<workgroup> nred: array<f32, 256>;
var<workgroup> ncs: array<i32, 256>;

fn norm_in(i: u32) -> vec4<f32> {
    var a = NX[i];
    if (NADD) { a += NR[i]; }
    return a;
}

fn norm_q8(tid: u32, g: u32) {
    let D4 = K / 4u;
    var ss = 0.0;
    for (var k = 0u; k < NSL; k++) {
        let i = 256u * k + tid;
        if (i < D4) {
            let a = norm_in(i);
            ss += dot(a, a);
        }
    }
    nred[tid] = ss;
    workgroupBarrier();
    for (var o = 128u; o > 0u; o >>= 1u) {
        if (tid < o) { nred[tid] += nred[tid + o]; }
        workgroupBarrier();
    }
    let r = 1.0 / sqrt(nred[0] / f32(K) + NEPS);
    workgroupBarrier();
    for (var k = 0u; k < NSL; k++) {
        let i = 256u * k + tid;
        let ok = i < D4;  // K % 256 == 0: the 8 threads of a block are all in or all out
        var a = vec4<f32>(0.0);
        if (ok) { a = norm_in(i); }
        if (NSW && ok && g == 0u) { NSO[i] = a; }
        var y = a * r;
        if (NHASW && ok) { y *= NW[i]; }
        let ab = abs(y);
        nred[tid] = max(max(ab.x, ab.y), max(ab.z, ab.w));
        workgroupBarrier();
        let b0 = tid & ~7u;
        var am = 0.0;
        for (var j = 0u; j < 8u; j++) { am = max(am, nred[b0 + j]); }
        let d = am / 127.0;
        let inv = select(0.0, 127.0 / am, am > 0.0);
        let code = pack4xI8(vec4<i32>(round(y * inv)));
        ncs[tid] = dot4I8Packed(code, 0x01010101u);
        workgroupBarrier();
        let e = 4u * i;
        let u = e / 64u;
        let p = (e % 64u) / 16u;
        if (ok) {
            XQ[p * (K / 64u) + u][(e % 16u) / 4u] = code;
            let mb = K / 16u + 2u * u;
            if (tid % 4u == 0u) {
                let s16 = ncs[tid] + ncs[tid + 1u] + ncs[tid + 2u] + ncs[tid + 3u];
                XQ[mb][p] = bitcast<u32>(d * f32(s16));
            }
            if (tid % 8u == 0u) {
                let s32 = ncs[tid] + ncs[tid + 1u] + ncs[tid + 2u] + ncs[tid + 3u]
                        + ncs[tid + 4u] + ncs[tid + 5u] + ncs[tid + 6u] + ncs[tid + 7u];
                let h = p / 2u;
                XQ[mb + 1u][h] = bitcast<u32>(d);
                XQ[mb + 1u][2u + h] = bitcast<u32>(d * f32(s32));
            }
        }
        workgroupBarrier();
    }
}
