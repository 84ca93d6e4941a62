// y (N) = W (N, K) @ x (K) for one token (decode): the weight's packed words read as vec4<u32>.
// A workgroup of S * L threads covers S * R rows: L lanes per slot of R rows; a lane walks the row's
// units (16 packed bytes and their x values, see mv_<type>.wgsl) with stride L for its R rows, and
// keeps per-thread sums; one reduction over the L lanes at the end.
// has_bias = 1 adds BIAS (N).
struct Params { N: u32, K: u32, row_vec4: u32, units: u32, has_bias: u32 }
@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> X: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> W: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read_write> Y: array<f32>;
@group(0) @binding(4) var<storage, read> BIAS: array<f32>;

const L: u32 = {{L}}u;
const R: u32 = {{R}}u;
const S: u32 = {{S}}u;
const WG: u32 = L * S;
const NACC: u32 = R;  // sums per thread (lib/mv_reduce_*.wgsl)

{{UNIT}}

{{REDUCE}}

@compute @workgroup_size({{WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32 {{SG_ARGS}}) {
    let t = {{THREAD}};
    let lane = t % L;
    let row0 = ((wid.x + wid.y * nwg.x) * S + t / L) * R;
    var acc: array<f32, R>;
    var wrow: array<u32, R>;
    for (var r = 0u; r < R; r++) { wrow[r] = min(row0 + r, P.N - 1u) * P.row_vec4; }
    for (var u = lane; u < P.units; u += L) {
        for (var r = 0u; r < R; r++) { acc[r] += mv_dot(wrow[r], u); }
    }
    reduce_rows(&acc, t);
    if (lane == 0u) {
        for (var r = 0u; r < R; r++) {
            let n = row0 + r;
            if (n < P.N) { Y[n] = select(acc[r], acc[r] + BIAS[n], P.has_bias != 0u); }
        }
    }
}
