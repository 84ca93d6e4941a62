// One-token decode attention, pass 2 of 2 (pass 1: attention_split.wgsl): one workgroup per query
// head merges the NS splits' (m, l, o) and the sink into the output row (thread = column) and, Q8,
// its 8-bit blocks. A split without cells has m = NEG, l = 0, o = 0. Compile-time DV <= 256, NS <= 32.
struct Params { NS: u32, Hq: u32, Hkv: u32, Dh: u32, Dv: u32, G: u32, window: u32, has_sinks: u32,
                scale: f32, softcap: f32, n_dims: u32, neox: u32, has_wq: u32, has_wk: u32, eps: f32 }
@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> SINKS: array<f32>;
@group(0) @binding(2) var<storage, read> WS: array<f32>;  // (Hq, NS, 2 + Dv): m, l, o
@group(0) @binding(3) var<storage, read_write> O: array<f32>;  // (Hq, Dv)
@group(0) @binding(4) var<storage, read_write> QO: array<u32>;  // Q8: O's row as 8-bit activations

const Q8: bool = {{Q8}};
const DV: u32 = {{DV}}u;

// #include "lib/q8.wgsl"

const NEG: f32 = -3.0e38;
var<workgroup> ov: array<f32, 256>;
var<workgroup> ml: array<f32, 64>;  // the splits' m, then their l

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
    let hq = wid.x;
    let NS = P.NS;
    let base = hq * NS * (DV + 2u);
    if (tid < 2u * NS) { ml[tid] = WS[base + (tid % NS) * (DV + 2u) + tid / NS]; }
    let d = min(tid, DV - 1u);
    var os: array<f32, {{NS}}>;  // unrolled (attention.py): os[s] = WS[base + s (DV + 2) + 2 + d], s < NS
{{OLOADS}}
    workgroupBarrier();
    var mf = NEG;
    for (var s = 0u; s < NS; s++) { mf = max(mf, ml[s]); }
    var sk = NEG;
    if (P.has_sinks != 0u) {
        sk = SINKS[hq];
        mf = max(mf, sk);
    }
    var den = 0.0;
    var o = 0.0;
    var w = 0.0;
    // unrolled: for s < NS: w = exp(m_s - mf); den += w l_s; o += w os[s]
{{OSUM}}
    if (P.has_sinks != 0u) { den += exp(sk - mf); }
    let y = o * select(0.0, 1.0 / den, den > 0.0);
    if (tid < DV) {
        O[hq * DV + tid] = y;
        ov[tid] = y;
    }
    if (Q8) {  // Dv % 32 == 0: the head's blocks of 32 in the row of Hq Dv values
        workgroupBarrier();
        if (tid < DV / 32u) {
            var v: array<vec4<f32>, 8>;
            for (var i = 0u; i < 8u; i++) {
                let e = 32u * tid + 4u * i;
                v[i] = vec4<f32>(ov[e], ov[e + 1u], ov[e + 2u], ov[e + 3u]);
            }
            q8_store_block(0u, P.Hq * DV, (hq * DV) / 32u + tid, v);
        }
    }
}
