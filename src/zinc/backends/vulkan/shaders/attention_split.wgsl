// One-token decode attention, split over the cache (pass 1 of 2; attn_combine.wgsl merges): one
// workgroup of 256 per (kv head, group of up to 4 of its query heads, split of the cells), so each
// K/V cell is read once per group. The split takes cells [c0, c1): ceil(n_kv / NS) rounded up to a
// tile of 64, in order. Per tile: every thread loads its quarter of a key (4 threads a key, thread
// part p the dims p, p + 4, ...) and its V values (column slot c = tid % NC, key slice ks = tid / NC:
// columns c + NC j, j < 4, keys ks + NSL i) at once; then the 4 heads' quarter dots per key (q from
// shared memory), the scores (thread = head tid / 64, key tid % 64), the tile max in two rounds of 8,
// exp, and the weighted sum of V for the 4 heads: four barriers a tile. NS > 1: writes per (q head,
// split) m, l and the unnormalized o (Dv) into O, at (hq NS + split) (Dv + 2); NS == 1: the output
// itself (with the sink) and, Q8, its 8-bit rows. Same semantics as attention.wgsl (GQA, causal +
// sliding window from KPOS, -1 empty; softcap, scale, sinks). FUSE: the per-head norms and rope of
// the group's q heads and its kv head's k (COSSIN) in the prologue; the workgroup of split 0, group 0
// of each kv head stores k, v (and the kv head 0 one the position) in cell SLOTS[0]; every workgroup
// uses its own copy of that cell. A group of fewer than 4 heads repeats its last one. Compile-time
// DH, DV <= 256, QN = ceil(DH / 4), NC (a power of two >= DV / 4, 4 <= NC <= 64), NSL = 256 / NC; the
// per-tile loops come unrolled from attention.py (LOADS, DOTS, VSUM).
struct Params { NS: u32, Hq: u32, Hkv: u32, Dh: u32, Dv: u32, G: u32, window: u32, has_sinks: u32,
                scale: f32, softcap: f32, n_dims: u32, neox: u32, has_wq: u32, has_wk: u32, eps: f32 }
@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> Q: array<f32>;
@group(0) @binding(2) var<storage, read_write> K: array<f32>;
@group(0) @binding(3) var<storage, read_write> V: array<f32>;
@group(0) @binding(4) var<storage, read> QPOS: array<i32>;
@group(0) @binding(5) var<storage, read_write> KPOS: array<i32>;
@group(0) @binding(6) var<storage, read> SINKS: array<f32>;
@group(0) @binding(7) var<storage, read_write> O: array<f32>;  // NS == 1: (Hq, Dv); else (Hq, NS, 2 + Dv)
@group(0) @binding(8) var<storage, read> NKV: array<u32>;  // [n_kv]: per step, so P stays the same
@group(0) @binding(9) var<storage, read_write> QO: array<u32>;  // Q8, NS == 1: O's row as 8-bit activations
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
var<workgroup> qs: array<vec4<f32>, 256>;  // the group's q heads: qs[d][r] (r < 4)
var<workgroup> kr: array<f32, 256>;  // FUSE: the new cell's rotated k and its v
var<workgroup> vn: array<f32, 256>;
var<workgroup> sc: array<f32, 1024>;  // quarter dots (4, 256); at the end each key slice's output
var<workgroup> sv: array<f32, 256>;  // the tile's scores (4, 64); at the end the sums of weights
var<workgroup> mx: array<f32, 32>;  // the tile's max (then the weights' sum) in blocks of 8 (4, 8)
var<workgroup> pj: array<f32, 256>;  // the tile's exp(s - m) (4, 64), 0 masked; at the end the Q8 row

// Per-head values of the group live in the components of a vec4 (head r: component r), so that no
// array is indexed by a run-time value (the NVIDIA driver puts such arrays in local memory).
fn comp(v: vec4<f32>, r: u32) -> f32 {
    return select(select(v.x, v.y, r == 1u), select(v.z, v.w, r == 3u), r >= 2u);
}

fn q_at(hq0: u32, r: u32, nh: u32, d: u32) -> f32 {
    return Q[(hq0 + min(r, nh - 1u)) * DH + d];
}


// FUSE: the norms and rope of q heads hq0 .. hq0 + nh into qs, of k into kr, v into vn; `writer`
// stores the new cell sl (call from uniform control flow)
fn fuse_prologue(tid: u32, hq0: u32, nh: u32, hk: u32, sl: u32, writer: bool) {
    let ok = tid < DH;
    let d = min(tid, DH - 1u);
    let xq = select(vec4<f32>(0.0), vec4<f32>(q_at(hq0, 0u, nh, d), q_at(hq0, 1u, nh, d), q_at(hq0, 2u, nh, d),
                                               q_at(hq0, 3u, nh, d)), ok);
    let xk = select(0.0, XK[hk * DH + d], ok);
    var xv = 0.0;
    if (tid < DV) { xv = XV[hk * DV + tid]; }
    let wq = NWQ[select(0u, d, P.has_wq != 0u)];
    let wk = NWK[select(0u, d, P.has_wk != 0u)];
    let rot = ok && tid < P.n_dims;
    let pr = rope_pair(select(0u, tid, rot), max(P.n_dims, 2u), P.neox);
    let c = COSSIN[pr.j];
    let sn = COSSIN[P.n_dims / 2u + pr.j];
    let q2 = xq * xq;
    sc[tid] = q2.x;
    sc[256u + tid] = q2.y;
    sc[512u + tid] = q2.z;
    sc[768u + tid] = q2.w;
    sv[tid] = xk * xk;
    if (tid < DV) { vn[tid] = xv; }
    workgroupBarrier();
    if (tid < 80u) {  // sums of squares in blocks of 16: vector tid / 16 (4: k)
        let h = tid / 16u;
        let b = (tid % 16u) * 16u;
        var s = 0.0;
        for (var i = 0u; i < 16u; i++) { s += select(sv[b + i], sc[min(h, 3u) * 256u + b + i], h < 4u); }
        pj[tid] = s;
    }
    workgroupBarrier();
    if (tid < 5u) {
        var s = 0.0;
        for (var i = 0u; i < 16u; i++) { s += pj[16u * tid + i]; }
        mx[tid] = s;
    }
    workgroupBarrier();
    var yq = xq;
    if (P.has_wq != 0u) { yq = xq * (1.0 / sqrt(vec4<f32>(mx[0], mx[1], mx[2], mx[3]) / f32(DH) + P.eps)) * wq; }
    var yk = xk;
    if (P.has_wk != 0u) { yk = xk * (1.0 / sqrt(mx[4] / f32(DH) + P.eps)) * wk; }
    sc[tid] = yq.x;
    sc[256u + tid] = yq.y;
    sc[512u + tid] = yq.z;
    sc[768u + tid] = yq.w;
    sv[tid] = yk;
    workgroupBarrier();
    if (rot) {
        yq = vec4<f32>(rope_mix(sc[pr.i0], sc[pr.i1], c, sn, pr.second),
                       rope_mix(sc[256u + pr.i0], sc[256u + pr.i1], c, sn, pr.second),
                       rope_mix(sc[512u + pr.i0], sc[512u + pr.i1], c, sn, pr.second),
                       rope_mix(sc[768u + pr.i0], sc[768u + pr.i1], c, sn, pr.second));
        yk = rope_mix(sv[pr.i0], sv[pr.i1], c, sn, pr.second);
    }
    if (ok) {
        qs[tid] = yq;
        kr[tid] = yk;
    }
    if (writer) {
        if (ok) { K[(sl * P.Hkv + hk) * DH + tid] = yk; }
        if (tid < DV) { V[(sl * P.Hkv + hk) * DV + tid] = xv; }
        if (hk == 0u && tid == 0u) { KPOS[sl] = QPOS[0]; }
    }
    workgroupBarrier();
}

// key / value element d of cell j, or the new cell's own copy
fn k_at(kb: u32, d: u32, own: bool) -> f32 {
    let e = min(d, DH - 1u);
    return select(0.0, select(K[kb + e], kr[e], own), d < DH);
}

fn v_at(j: u32, d: u32, c1: u32, hk: u32, sl: u32) -> f32 {
    let jv = min(j, c1 - 1u);
    let e = min(d, DV - 1u);
    return select(V[(jv * P.Hkv + hk) * DV + e], vn[e], jv == sl);
}

// the head's output row (NS == 1: normalized, with the sink; else m, l, o into O) from the key
// slices' sums in sc and the weights' sum l
fn finish_head(tid: u32, r: u32, hq: u32, split: u32, m: f32, l: f32, live: bool) {
    var o = 0.0;
    for (var i = 0u; i < NSL; i++) { o += sc[i * 4u * NC + min(tid, DV - 1u)]; }
    if (P.NS == 1u) {
        var den = l;
        if (P.has_sinks != 0u) {
            let sk = SINKS[hq];
            let mf = max(m, sk);
            let a = exp(m - mf);
            o *= a;
            den = l * a + exp(sk - mf);
        }
        let y = o * select(0.0, 1.0 / den, den > 0.0);
        if (live && tid < DV) { O[hq * DV + tid] = y; }
        if (Q8 && tid < DV) {  // the Q8 row of head r: qs[d][r]
            if (r == 0u) { qs[tid].x = y; } else if (r == 1u) { qs[tid].y = y; } else if (r == 2u) { qs[tid].z = y; }
            else { qs[tid].w = y; }
        }
    } else if (live && tid < DV) {
        let b = (hq * P.NS + split) * (DV + 2u);
        O[b + 2u + tid] = o;
        if (tid == 0u) {
            O[b] = m;
            O[b + 1u] = l;
        }
    }
}

// Q8, NS == 1 (Dv % 32 == 0): the blocks of 32 of the nh heads' rows in qs, all at once
fn q8_heads(tid: u32, hq0: u32, nh: u32) {
    let nb = DV / 32u;
    let r = tid / nb;
    if (r < nh) {
        let b = tid % nb;
        var v: array<vec4<f32>, 8>;
        for (var i = 0u; i < 8u; i++) {
            let e = 32u * b + 4u * i;
            v[i] = vec4<f32>(comp(qs[e], r), comp(qs[e + 1u], r), comp(qs[e + 2u], r), comp(qs[e + 3u], r));
        }
        q8_store_block(0u, P.Hq * DV, ((hq0 + r) * DV) / 32u + b, v);
    }
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
    let R = P.Hq / P.Hkv;
    let hk = wid.x / P.G;
    let h0 = (wid.x % P.G) * 4u;
    let nh = min(4u, R - h0);  // the group's heads: hq0 .. hq0 + nh
    let hq0 = hk * R + h0;
    let split = wid.y;
    let n_kv = NKV[0];
    let chunk = ((n_kv + P.NS - 1u) / P.NS + 63u) / 64u * 64u;
    let c0 = min(split * chunk, n_kv);
    let c1 = min(c0 + chunk, n_kv);
    var sl = 0xffffffffu;  // FUSE: the new cell
    if (FUSE) {
        sl = u32(SLOTS[0]);
        fuse_prologue(tid, hq0, nh, hk, sl, split == 0u && h0 == 0u);
    } else {
        let d = min(tid, DH - 1u);
        let xq = vec4<f32>(q_at(hq0, 0u, nh, d), q_at(hq0, 1u, nh, d), q_at(hq0, 2u, nh, d), q_at(hq0, 3u, nh, d));
        if (tid < DH) { qs[tid] = xq; }
        workgroupBarrier();
    }
    let qp = QPOS[0];
    let kk = tid / 4u;
    let qpart = tid % 4u;
    let c = tid % NC;
    let ks = tid / NC;
    let sr = tid / 64u;  // score thread: head sr, key sk of the tile
    let sk = tid % 64u;
    var m = vec4<f32>(NEG);
    var lk = 0.0;  // score thread: its key's sum of weights
    var acc0 = vec4<f32>(0.0);  // column c + NC j: accj, over the group's heads
    var acc1 = vec4<f32>(0.0);
    var acc2 = vec4<f32>(0.0);
    var acc3 = vec4<f32>(0.0);
    for (var t0 = c0; t0 < c1; t0 += 64u) {
        let jc = min(t0 + kk, c1 - 1u);
        let kb = (jc * P.Hkv + hk) * DH;
        let own = jc == sl;
        var kv: array<f32, QN>;  // 0 past DH
        var vr: array<f32, NC>;  // keys ks + NSL i, i < NC / 4 (64 / NSL), columns c + NC j
        var dot4 = vec4<f32>(0.0);
        var pv = vec4<f32>(0.0);
        // unrolled (attention.py), so that all the loads are in flight together:
        // for i < QN: kv[i] = k_at(kb, qpart + 4 i, own)
        // for i < NC / 4, j < 4: vr[4 i + j] = v_at(t0 + ks + NSL i, c + NC j, c1, hk, sl)
{{LOADS}}
        let js = t0 + sk;
        var kp = -1;
        if (js < c1) { kp = select(KPOS[js], QPOS[0], js == sl); }
        // unrolled: for i < QN: dot4 += qs[min(qpart + 4 i, DH - 1)] kv[i]
{{DOTS}}
        sc[tid] = dot4.x;
        sc[256u + tid] = dot4.y;
        sc[512u + tid] = dot4.z;
        sc[768u + tid] = dot4.w;
        workgroupBarrier();
        var s = NEG;
        let dist = qp - kp;
        if (kp >= 0 && dist >= 0 && (P.window == 0u || u32(dist) < P.window)) {
            let b = sr * 256u + 4u * sk;
            var dt = (sc[b] + sc[b + 1u]) + (sc[b + 2u] + sc[b + 3u]);
            if (P.softcap > 0.0) { dt = P.softcap * tanh(dt / P.softcap); }
            s = dt * P.scale;
        }
        sv[tid] = s;
        workgroupBarrier();
        if (tid < 32u) {
            var mm = sv[8u * tid];
            for (var i = 1u; i < 8u; i++) { mm = max(mm, sv[8u * tid + i]); }
            mx[tid] = mm;
        }
        workgroupBarrier();
        var mt = m;
        for (var i = 0u; i < 8u; i++) { mt = max(mt, vec4<f32>(mx[i], mx[8u + i], mx[16u + i], mx[24u + i])); }
        let alpha = exp(m - mt);
        m = mt;
        let p = select(0.0, exp(s - comp(m, sr)), s > 0.5 * NEG);
        pj[tid] = p;
        lk = lk * comp(alpha, sr) + p;
        acc0 *= alpha;
        acc1 *= alpha;
        acc2 *= alpha;
        acc3 *= alpha;
        workgroupBarrier();
        // unrolled: for i < NC / 4: pv = the 4 heads' pj of key ks + NSL i; accj += pv vr[4 i + j]
{{VSUM}}
    }
    sv[tid] = lk;
    workgroupBarrier();
    if (tid < 32u) {
        var l8 = 0.0;
        for (var i = 0u; i < 8u; i++) { l8 += sv[8u * tid + i]; }
        mx[tid] = l8;
    }
    for (var r = 0u; r < 4u; r++) {
        let e = select(vec4<f32>(0.0), vec4<f32>(1.0), vec4<u32>(0u, 1u, 2u, 3u) == vec4<u32>(r));
        sc[ks * 4u * NC + c] = dot(acc0, e);
        sc[ks * 4u * NC + c + NC] = dot(acc1, e);
        sc[ks * 4u * NC + c + 2u * NC] = dot(acc2, e);
        sc[ks * 4u * NC + c + 3u * NC] = dot(acc3, e);
        workgroupBarrier();
        var l = 0.0;
        for (var i = 0u; i < 8u; i++) { l += mx[8u * r + i]; }
        finish_head(tid, r, hq0 + min(r, nh - 1u), split, comp(m, r), l, r < nh);
        workgroupBarrier();
    }
    if (Q8 && P.NS == 1u) { q8_heads(tid, hq0, nh); }
}
