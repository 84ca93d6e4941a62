// Causal / sliding-window attention with GQA, optional softcap and sinks: one workgroup of 256 per
// (query token, query head), over the keys in tiles of 64 with one online softmax. A tile is two
// short parallel steps, so that a short cache costs a few memory latencies: the scores (4 threads
// per key, each a quarter of the dot: thread part p takes dims p, p + 4, ...; the q values stay in
// registers), then the weighted sum of V (thread = column slot c and key slice ks: columns c + NC r,
// r < 4, keys ks, ks + NSL, ... of the tile), the slices summed at the end. Compile-time DH, DV <= 256
// (QN = ceil(DH / 4)), NC (a power of two >= DV / 4, 4 <= NC <= 64) and NSL = 256 / NC.
struct Params { T: u32, Hq: u32, Hkv: u32, Dh: u32, Dv: u32, unused: u32, window: u32, has_sinks: u32,
                scale: f32, softcap: f32 }
@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> Q: array<f32>;
@group(0) @binding(2) var<storage, read> K: array<f32>;
@group(0) @binding(3) var<storage, read> V: array<f32>;
@group(0) @binding(4) var<storage, read> QPOS: array<i32>;
@group(0) @binding(5) var<storage, read> KPOS: array<i32>;
@group(0) @binding(6) var<storage, read> SINKS: array<f32>;
@group(0) @binding(7) var<storage, read_write> O: array<f32>;
@group(0) @binding(8) var<storage, read> NKV: array<u32>;  // [n_kv]: per step, so P stays the same
@group(0) @binding(9) var<storage, read_write> QO: array<u32>;  // Q8: O's rows (T, Hq Dv) as 8-bit activations

const Q8: bool = {{Q8}};
const DH: u32 = {{DH}}u;
const DV: u32 = {{DV}}u;
const QN: u32 = {{QN}}u;
const NC: u32 = {{NC}}u;
const NSL: u32 = 256u / NC;

// #include "lib/q8.wgsl"

const NEG: f32 = -3.0e38;
var<workgroup> sp: array<f32, 256>;  // the quarter dots
var<workgroup> red: array<f32, 64>;  // the tile's max
var<workgroup> pj: array<f32, 64>;  // the tile's exp(s - m) (0: masked)
var<workgroup> part: array<f32, 1024>;  // each key slice's unnormalized output (4 NC columns)
var<workgroup> lp: array<f32, 64>;  // and its sum of weights
var<workgroup> ov: array<f32, 256>;  // Q8: the head's output

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32) {
    let g = wid.x + wid.y * nwg.x;
    let n_kv = NKV[0];
    let live = g < P.T * P.Hq;
    let gg = min(g, P.T * P.Hq - 1u);
    let t = gg / P.Hq;
    let hq = gg % P.Hq;
    let hk = hq / (P.Hq / P.Hkv);
    let kk = tid / 4u;
    let qpart = tid % 4u;
    let c = tid % NC;
    let ks = tid / NC;
    var qr: array<f32, QN>;
    for (var i = 0u; i < QN; i++) {
        let d = qpart + 4u * i;
        qr[i] = select(0.0, Q[gg * DH + min(d, DH - 1u)], d < DH);
    }
    let qp = QPOS[t];
    var m = NEG;
    var l = 0.0;
    if (P.has_sinks != 0u) {
        m = SINKS[hq];
        if (ks == 0u) { l = 1.0; }
    }
    var acc: array<f32, 4>;
    for (var t0 = 0u; t0 < n_kv; t0 += 64u) {
        // scores: a quarter dot per thread; thread tid < 64 checks key t0 + tid meanwhile
        let kb = (min(t0 + kk, n_kv - 1u) * P.Hkv + hk) * DH;
        var dot = 0.0;
        for (var i = 0u; i < QN; i++) {
            let d = qpart + 4u * i;
            if (d < DH) { dot += qr[i] * K[kb + d]; }
        }
        var valid = false;
        if (tid < 64u && t0 + tid < n_kv) {
            let kp = KPOS[t0 + tid];
            let dist = qp - kp;
            valid = kp >= 0 && dist >= 0 && (P.window == 0u || u32(dist) < P.window);
        }
        sp[tid] = dot;
        workgroupBarrier();
        var s = NEG;
        if (tid < 64u) {
            if (valid) {
                var dt = (sp[4u * tid] + sp[4u * tid + 1u]) + (sp[4u * tid + 2u] + sp[4u * tid + 3u]);
                if (P.softcap > 0.0) { dt = P.softcap * tanh(dt / P.softcap); }
                s = dt * P.scale;
            }
            red[tid] = s;
        }
        workgroupBarrier();
        for (var k = 32u; k > 0u; k >>= 1u) {
            if (tid < k) { red[tid] = max(red[tid], red[tid + k]); }
            workgroupBarrier();
        }
        let mt = max(m, red[0]);
        if (tid < 64u) { pj[tid] = select(0.0, exp(s - mt), s > 0.5 * NEG); }
        let alpha = exp(m - mt);
        m = mt;
        l *= alpha;
        for (var r = 0u; r < 4u; r++) { acc[r] *= alpha; }
        workgroupBarrier();
        // weighted sum of V: the loads of a thread's keys do not wait on each other
        for (var i = 0u; i < 64u / NSL; i++) {
            let jj = ks + NSL * i;
            let p = pj[jj];
            let vb = (min(t0 + jj, n_kv - 1u) * P.Hkv + hk) * DV;
            for (var r = 0u; r < 4u; r++) {
                let d = c + NC * r;
                let vv = V[vb + min(d, DV - 1u)];
                if (p > 0.0 && d < DV) { acc[r] += p * vv; }
            }
            l += p;
        }
        workgroupBarrier();
    }
    for (var r = 0u; r < 4u; r++) { part[ks * 4u * NC + c + NC * r] = acc[r]; }
    if (c == 0u) { lp[ks] = l; }
    workgroupBarrier();
    if (!live) { return; }
    var den = 0.0;
    for (var i = 0u; i < NSL; i++) { den += lp[i]; }
    let inv = select(0.0, 1.0 / den, den > 0.0);
    if (tid < DV) {
        var o = 0.0;
        for (var i = 0u; i < NSL; i++) { o += part[i * 4u * NC + tid]; }
        O[gg * DV + tid] = o * inv;
        if (Q8) { ov[tid] = o * inv; }
    }
    if (Q8) {  // Dv % 32 == 0: the head's blocks of 32 in the token's row of Hq Dv values
        workgroupBarrier();
        if (tid < DV / 32u) {
            var v: array<vec4<f32>, 8>;
            for (var i = 0u; i < 8u; i++) {
                let o = 32u * tid + 4u * i;
                v[i] = vec4<f32>(ov[o], ov[o + 1u], ov[o + 2u], ov[o + 3u]);
            }
            let width = P.Hq * DV;
            q8_store_block(t * q8_row_words(width), width, (hq * DV) / 32u + tid, v);
        }
    }
}
