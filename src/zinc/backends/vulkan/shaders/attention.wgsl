// Causal / sliding-window attention with GQA, optional softcap and sinks: one workgroup of 256 per
// (query token, query head), over the keys in tiles of 64 with one online softmax. A tile is two
// short parallel steps, so that a short cache costs a few memory latencies: the scores (4 threads
// per key, each a quarter of the dot: thread part p takes dims p, p + 4, ...; the q values stay in
// registers), then the weighted sum of V (thread = column slot c and key slice ks: columns c + NC r,
// r < 4, keys ks, ks + NSL, ... of the tile), the slices summed at the end. Compile-time DH, DV <= 256
// (QN = ceil(DH / 4)), NC (a power of two >= DV / 4, 4 <= NC <= 64) and NSL = 256 / NC.
// FUSE (one token): Q, XK, XV are the layer's raw q, k, v rows; the workgroup first applies the
// per-head norms (has_wq / has_wk: times NWQ / NWK) and the rope (COSSIN: cos then sin) to its q head
// and its kv head's k, and the first q head of each kv group stores k, v and the position in the cache
// cell SLOTS[0]; every workgroup reads that cell's k, v and position from its own copy (the others may
// still be writing it), so the rope + KV write needs no dispatch of its own.
struct Params { T: u32, Hq: u32, Hkv: u32, Dh: u32, Dv: u32, unused: u32, window: u32, has_sinks: u32,
                scale: f32, softcap: f32, n_dims: u32, neox: u32, has_wq: u32, has_wk: u32, eps: f32 }
@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> Q: array<f32>;
@group(0) @binding(2) var<storage, read_write> K: array<f32>;
@group(0) @binding(3) var<storage, read_write> V: array<f32>;
@group(0) @binding(4) var<storage, read> QPOS: array<i32>;
@group(0) @binding(5) var<storage, read_write> KPOS: array<i32>;
@group(0) @binding(6) var<storage, read> SINKS: array<f32>;
@group(0) @binding(7) var<storage, read_write> O: array<f32>;
@group(0) @binding(8) var<storage, read> NKV: array<u32>;  // [n_kv]: per step, so P stays the same
@group(0) @binding(9) var<storage, read_write> QO: array<u32>;  // Q8: O's rows (T, Hq Dv) as 8-bit activations
@group(0) @binding(10) var<storage, read> XK: array<f32>;  // FUSE: the raw k (Hkv, Dh), v (Hkv, Dv) rows
@group(0) @binding(11) var<storage, read> XV: array<f32>;
@group(0) @binding(12) var<storage, read> NWQ: array<f32>;
@group(0) @binding(13) var<storage, read> NWK: array<f32>;
@group(0) @binding(14) var<storage, read> COSSIN: array<f32>;
@group(0) @binding(15) var<storage, read> SLOTS: array<i32>;

const Q8: bool = {{Q8}};
const FUSE: bool = {{FUSE}};
const DH: u32 = {{DH}}u;
const DV: u32 = {{DV}}u;
const QN: u32 = {{QN}}u;
const NC: u32 = {{NC}}u;
const NSL: u32 = 256u / NC;

// #include "lib/q8.wgsl"
// #include "lib/rope.wgsl"

const NEG: f32 = -3.0e38;
var<workgroup> sp: array<f32, 256>;  // the quarter dots
var<workgroup> red: array<f32, 64>;  // the tile's max
var<workgroup> pj: array<f32, 64>;  // the tile's exp(s - m) (0: masked)
var<workgroup> part: array<f32, 1024>;  // each key slice's unnormalized output (4 NC columns)
var<workgroup> lp: array<f32, 64>;  // and its sum of weights
var<workgroup> ov: array<f32, 256>;  // Q8: the head's output
var<workgroup> qs: array<f32, 256>;  // the rotated q, k and the v of the new cell
var<workgroup> kr: array<f32, 256>;
var<workgroup> vn: array<f32, 256>;

// FUSE: the norms and rope of the workgroup's q head and k head into qs, kr, v into vn, and the cache
// write of the new cell `sl` (T = 1; call from uniform control flow); sp and ov hold the sums of
// squares of q and k, part the normed q (0 ..) and k (256 ..)
fn fuse_prologue(tid: u32, hq: u32, hk: u32, sl: u32) {
    let ok = tid < DH;
    let d = min(tid, DH - 1u);
    let xq = select(0.0, Q[hq * DH + d], ok);
    let xk = select(0.0, XK[hk * DH + d], ok);
    if (tid < DV) { vn[tid] = XV[hk * DV + tid]; }
    let wq = NWQ[select(0u, d, P.has_wq != 0u)];  // loaded before the sums: their latencies overlap
    let wk = NWK[select(0u, d, P.has_wk != 0u)];
    let rot = ok && tid < P.n_dims;
    let pr = rope_pair(select(0u, tid, rot), max(P.n_dims, 2u), P.neox);
    let c = COSSIN[pr.j];
    let sn = COSSIN[P.n_dims / 2u + pr.j];
    sp[tid] = xq * xq;
    ov[tid] = xk * xk;
    workgroupBarrier();
    for (var k = 128u; k > 0u; k >>= 1u) {
        if (tid < k) {
            sp[tid] += sp[tid + k];
            ov[tid] += ov[tid + k];
        }
        workgroupBarrier();
    }
    var yq = xq;
    var yk = xk;
    if (P.has_wq != 0u) { yq = xq * (1.0 / sqrt(sp[0] / f32(DH) + P.eps)) * wq; }
    if (P.has_wk != 0u) { yk = xk * (1.0 / sqrt(ov[0] / f32(DH) + P.eps)) * wk; }
    workgroupBarrier();  // sp, ov read
    part[tid] = yq;
    part[256u + tid] = yk;
    workgroupBarrier();
    if (rot) {
        yq = rope_mix(part[pr.i0], part[pr.i1], c, sn, pr.second);
        yk = rope_mix(part[256u + pr.i0], part[256u + pr.i1], c, sn, pr.second);
    }
    qs[tid] = yq;
    kr[tid] = yk;
    if (hq % (P.Hq / P.Hkv) == 0u) {
        if (ok) { K[(sl * P.Hkv + hk) * DH + tid] = yk; }
        if (tid < DV) { V[(sl * P.Hkv + hk) * DV + tid] = vn[tid]; }
        if (hq == 0u && tid == 0u) { KPOS[sl] = QPOS[0]; }
    }
    workgroupBarrier();
}

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
    var sl = 0xffffffffu;  // FUSE: the new cell
    if (FUSE) {
        sl = u32(SLOTS[0]);
        fuse_prologue(tid, hq, hk, sl);
    }
    var qr: array<f32, QN>;
    for (var i = 0u; i < QN; i++) {
        let d = qpart + 4u * i;
        var x = 0.0;
        if (FUSE) { x = qs[min(d, DH - 1u)]; } else { x = Q[gg * DH + min(d, DH - 1u)]; }
        qr[i] = select(0.0, x, d < DH);
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
        let jc = min(t0 + kk, n_kv - 1u);
        let kb = (jc * P.Hkv + hk) * DH;
        let own = jc == sl;
        var dot = 0.0;
        for (var i = 0u; i < QN; i++) {
            let d = qpart + 4u * i;
            if (d < DH) { dot += qr[i] * select(K[kb + d], kr[d], own); }
        }
        var valid = false;
        if (tid < 64u && t0 + tid < n_kv) {
            let kp = select(KPOS[t0 + tid], QPOS[0], t0 + tid == sl);
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
            let jv = min(t0 + jj, n_kv - 1u);
            let vb = (jv * P.Hkv + hk) * DV;
            for (var r = 0u; r < 4u; r++) {
                let d = c + NC * r;
                let vv = select(V[vb + min(d, DV - 1u)], vn[min(d, DV - 1u)], jv == sl);
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
