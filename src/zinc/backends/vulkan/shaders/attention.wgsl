// Causal / sliding-window attention with GQA, optional softcap and sinks: one workgroup of G * 64 per
// (query token, query head); its G groups of 64 take turns over the keys in tiles of 64 (group g the
// tiles g, g + G, ...), each with its own online softmax, merged at the end (short caches stay
// latency-bound: G tiles are in flight at once); Dh, Dv <= 256 (compile-time DH, DV: the per-key
// loops unroll).
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

// #include "lib/q8.wgsl"

const NEG: f32 = -3.0e38;
const G: u32 = 4u;
var<workgroup> qs: array<f32, 256>;
var<workgroup> sc: array<f32, 64 * G>;
var<workgroup> part: array<f32, 256 * G>;  // each group's unnormalized output
var<workgroup> pm: array<f32, G>;  // and its running max and sum
var<workgroup> pl: array<f32, G>;
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
    let grp = tid / 64u;
    let lt = tid % 64u;
    for (var d = tid; d < DH; d += 256u) { qs[d] = Q[gg * DH + d]; }
    let qp = QPOS[t];
    var m = NEG;
    var l = 0.0;
    if (P.has_sinks != 0u && grp == 0u) { m = SINKS[hq]; l = 1.0; }
    var acc: array<f32, 4>;
    workgroupBarrier();
    for (var t0 = 0u; t0 < n_kv; t0 += 64u * G) {
        let j0 = t0 + 64u * grp;
        let j = j0 + lt;
        var s = NEG;
        if (j < n_kv) {
            let kp = KPOS[j];
            let dist = qp - kp;
            if (kp >= 0 && dist >= 0 && (P.window == 0u || u32(dist) < P.window)) {
                var dot = 0.0;
                let kb = (j * P.Hkv + hk) * DH;
                for (var d = 0u; d < DH; d++) { dot += qs[d] * K[kb + d]; }
                if (P.softcap > 0.0) { dot = P.softcap * tanh(dot / P.softcap); }
                s = dot * P.scale;
            }
        }
        sc[tid] = s;
        workgroupBarrier();
        let nj = select(0u, min(64u, n_kv - j0), j0 < n_kv);
        var mt = m;
        for (var i = 0u; i < nj; i++) { mt = max(mt, sc[64u * grp + i]); }
        let alpha = exp(m - mt);
        l *= alpha;
        for (var r = 0u; r < 4u; r++) { acc[r] *= alpha; }
        for (var i = 0u; i < nj; i++) {
            let si = sc[64u * grp + i];
            if (si > 0.5 * NEG) {
                let p = exp(si - mt);
                l += p;
                let vb = ((j0 + i) * P.Hkv + hk) * DV;
                for (var r = 0u; r < 4u; r++) {
                    let d = lt + 64u * r;
                    if (d < DV) { acc[r] += p * V[vb + d]; }
                }
            }
        }
        m = mt;
        workgroupBarrier();
    }
    for (var r = 0u; r < 4u; r++) {
        let d = lt + 64u * r;
        if (d < DV) { part[grp * DV + d] = acc[r]; }
    }
    if (lt == 0u) { pm[grp] = m; pl[grp] = l; }
    workgroupBarrier();
    if (!live) { return; }
    var mx = NEG;
    for (var i = 0u; i < G; i++) { mx = max(mx, pm[i]); }
    var den = 0.0;
    for (var i = 0u; i < G; i++) { den += pl[i] * exp(pm[i] - mx); }
    let inv = select(0.0, 1.0 / den, den > 0.0);
    if (tid < DV) {
        var o = 0.0;
        for (var i = 0u; i < G; i++) { o += part[i * DV + tid] * exp(pm[i] - mx); }
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
