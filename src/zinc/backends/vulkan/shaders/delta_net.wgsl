// The gated delta rule token by token (spec arch-qwen35.md §3.2): one workgroup per value head, each
// thread owns value columns j of the state S (Hv, S, S) [head, key dim i, value dim j], in place:
//   S *= exp(g); d = beta * (v - S^T k); S += k d^T; o = S^T q / sqrt(S)
// v-head h reads q/k head h % Hk; q, k and the decay are staged in workgroup memory (S <= 256).
struct Params { T: u32, Hk: u32, Hv: u32, S: u32, scale: f32 }
@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> Q: array<f32>;
@group(0) @binding(2) var<storage, read> K: array<f32>;
@group(0) @binding(3) var<storage, read> V: array<f32>;
@group(0) @binding(4) var<storage, read> G: array<f32>;
@group(0) @binding(5) var<storage, read> B: array<f32>;
@group(0) @binding(6) var<storage, read_write> ST: array<f32>;
@group(0) @binding(7) var<storage, read_write> O: array<f32>;

var<workgroup> qs: array<f32, 256>;
var<workgroup> ks: array<f32, 256>;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
    let h = wid.x;
    let hk = h % P.Hk;
    let S = P.S;
    let sb = h * S * S;
    for (var t = 0u; t < P.T; t++) {
        workgroupBarrier();
        let qk = (t * P.Hk + hk) * S;
        for (var i = tid; i < S; i += 64u) { qs[i] = Q[qk + i]; ks[i] = K[qk + i]; }
        workgroupBarrier();
        let decay = exp(G[t * P.Hv + h]);
        let beta = B[t * P.Hv + h];
        for (var j = tid; j < S; j += 64u) {
            var kv = 0.0;
            for (var i = 0u; i < S; i++) {
                let s = ST[sb + i * S + j] * decay;
                ST[sb + i * S + j] = s;
                kv += ks[i] * s;
            }
            let d = (V[(t * P.Hv + h) * S + j] - kv) * beta;
            var o = 0.0;
            for (var i = 0u; i < S; i++) {
                let s = ST[sb + i * S + j] + ks[i] * d;
                ST[sb + i * S + j] = s;
                o += qs[i] * s;
            }
            O[(t * P.Hv + h) * S + j] = o * P.scale;
        }
    }
}
